import type { InstalledApp } from '../packages/registry';
import { homography } from '../rules/ground';
import { layRule, overrideMisfits, type RuleOverride } from '../rules/override';
import { APP_TYPE } from '../rules/schema';
import { ruleProblems } from '../rules/validate';
import { toPoints } from '../vision/geometry';
import { RULE_OVERRIDES_BYTES, TASK_AREA_LIMITS, TASK_LIMITS } from './limits';
import { polygonProblem } from './polygon';
import type { AppAreas, AppConfig, AppConfigUpdate, Polygon, RuleOverrides, TaskMode } from './schema';
import { taskError } from './task-error';
import type { TaskRow } from './task-repository';
import type { InstalledApps } from './task-store';

// The checks of start-task and update-task against the installed packages; each throws a task error.

/** The task's apps, refused when one's license expired or it does not fit the task's mode. */
export function checkApps(
  packages: InstalledApps,
  zapkId: string,
  appIds: readonly string[],
  mode: TaskMode,
  now: number,
): InstalledApp[] {
  return appIds.map((appId) => {
    const app = packages.app(zapkId, appId);
    if (!app.perpetual && app.license_expire * 1000 <= now) {
      const on = new Date(app.license_expire * 1000).toISOString();
      throw taskError(
        'task.license_expired',
        `app_ids: the license of application "${appId}" expired on ${on}`,
        'app_ids',
      );
    }
    if (mode === 'diff' && app.type !== APP_TYPE.change) {
      throw taskError(
        'task.not_change_detection_app',
        `app_ids: "${appId}" is not a change-detection application (type 2); a diff task runs only those`,
        'app_ids',
      );
    }
    if (mode !== 'diff' && app.type === APP_TYPE.change) {
      throw taskError(
        'task.change_detection_not_diff',
        `app_ids: "${appId}" is a change-detection application; it runs only in diff tasks`,
        'app_ids',
      );
    }
    if (mode !== 'video' && app.type === APP_TYPE.timeSeries) {
      throw taskError(
        'task.time_series_not_video',
        `app_ids: "${appId}" is a time-series application; it runs only in video tasks`,
        'app_ids',
      );
    }
    return app;
  });
}

/** The polygons of the task's apps: each for one of its apps, once, and a valid shape for its type. */
export function checkAppConfigs(
  configs: readonly AppConfigUpdate[],
  apps: readonly InstalledApp[],
): AppConfigUpdate[] {
  const seen = new Set<string>();
  configs.forEach((config, i) => {
    const field = `app_configs[${i}]`;
    const at = `body.${field}`;
    const app = apps.find((a) => a.app_id === config.app_id);
    if (!app)
      throw taskError(
        'task.invalid',
        `${at}.app_id: "${config.app_id}" is not one of the task's app_ids`,
        `${field}.app_id`,
      );
    if (seen.has(config.app_id))
      throw taskError(
        'task.invalid',
        `${at}.app_id: "${config.app_id}" is configured twice`,
        `${field}.app_id`,
      );
    seen.add(config.app_id);
    const problem = polygonProblem(config.polygon, app.type);
    if (problem) throw taskError('task.invalid', `${at}.polygon: ${problem}`, `${field}.polygon`);
    if (config.line_direction !== undefined && config.polygon.length !== 2)
      throw taskError(
        'task.invalid',
        `${at}.line_direction: only a counting line (a polygon of 2 points) has a direction`,
        `${field}.line_direction`,
      );
    checkAreas(config, field);
  });
  return configs.map(({ app_id, polygon, line_direction, zones, masks, calibration }) => ({
    app_id,
    polygon,
    ...(line_direction && { line_direction }),
    ...(zones && { zones }),
    ...(masks && { masks }),
    ...(calibration !== undefined && { calibration }),
  }));
}

/**
 * What all of a task's apps' areas carry together, within TASK_AREA_LIMITS (the schema bounds each
 * polygon and each app's zones and masks; this bounds the task): refused as a whole, naming
 * app_configs.
 */
export function checkTaskAreas(configs: readonly Pick<AppAreas, 'polygon' | 'zones' | 'masks'>[]): void {
  const polygons = configs
    .flatMap((config) => [
      config.polygon,
      ...(config.zones ?? []).map((zone) => zone.polygon),
      ...(config.masks ?? []),
    ])
    .filter((polygon) => polygon.length > 0);
  const points = polygons.reduce((sum, polygon) => sum + polygon.length, 0);
  const { polygonsPerTask, pointsPerTask } = TASK_AREA_LIMITS;
  const refuse = (what: string) => taskError('task.invalid', `body.app_configs: ${what}`, 'app_configs');
  if (polygons.length > polygonsPerTask)
    throw refuse(
      `the task would carry ${polygons.length} polygons, zones and masks; a task carries at most ${polygonsPerTask}`,
    );
  if (points > pointsPerTask)
    throw refuse(
      `the task's polygons, zones and masks would have ${points} points in all; a task carries at most ${pointsPerTask}`,
    );
}

/**
 * A given config over the stored one: the fields it leaves out are kept, calibration null removes it,
 * and a line's direction goes when the polygon is no longer a line.
 */
export function applyAppConfig(stored: AppConfig | undefined, given: AppConfigUpdate): AppConfig {
  const { calibration, line_direction, ...areas } = { ...stored, ...given };
  // A direction kept from a counting line that is now a region would make the config invalid.
  const direction = areas.polygon.length === 2 ? line_direction : undefined;
  return { ...areas, ...(direction && { line_direction: direction }), ...(calibration && { calibration }) };
}

/**
 * Given overrides of the task's apps' rules over the stored ones: each for one of the task's apps and
 * fitting its rule (its classes and parts), and the rule it makes passing the app rule's own checks.
 * Null or {} removes an app's override; apps the task no longer runs lose theirs.
 */
export function checkRuleOverrides(
  stored: RuleOverrides,
  given: Readonly<Record<string, RuleOverride | null>>,
  apps: readonly InstalledApp[],
): RuleOverrides {
  const overrides: RuleOverrides = {};
  for (const app of apps) {
    const override = Object.hasOwn(given, app.app_id) ? given[app.app_id] : stored[app.app_id];
    if (override && Object.keys(override).length > 0) overrides[app.app_id] = override;
  }
  for (const appId of Object.keys(given)) {
    const field = `rule_overrides.${appId}`;
    const app = apps.find((a) => a.app_id === appId);
    if (!app)
      throw taskError('task.invalid', `body.${field}: "${appId}" is not one of the task's app_ids`, field);
    const override = overrides[appId];
    if (!override) continue;
    const problems = [
      ...overrideMisfits(app.rule, override),
      // Cross-field checks of the rule this camera would run (min above max, hits above frames).
      ...ruleProblems(layRule(app.rule, override), null).map(
        (problem) => `as laid over the app's ${problem}`,
      ),
    ];
    if (problems[0]) throw taskError('task.invalid', `body.${field}: ${problems[0]}`, field);
  }
  const bytes = Buffer.byteLength(JSON.stringify(overrides));
  if (bytes > RULE_OVERRIDES_BYTES)
    throw taskError(
      'task.invalid',
      `body.rule_overrides: the task's overrides would take ${bytes} bytes; a task carries at most ${RULE_OVERRIDES_BYTES}`,
      'rule_overrides',
    );
  return overrides;
}

/** Zones and masks (extensions): each a region like a detection app's polygon; zone names unique. */
function checkAreas(config: AppConfigUpdate, field: string): void {
  const refuse = (path: string, problem: string) =>
    taskError('task.invalid', `body.${path}: ${problem}`, path);
  const names = new Set<string>();
  config.zones?.forEach((zone, j) => {
    const at = `${field}.zones[${j}]`;
    if (names.has(zone.name)) throw refuse(`${at}.name`, `duplicate zone name "${zone.name}"`);
    names.add(zone.name);
    const problem = regionProblem(zone.polygon);
    if (problem) throw refuse(`${at}.polygon`, problem);
  });
  config.masks?.forEach((mask, k) => {
    const problem = regionProblem(mask);
    if (problem) throw refuse(`${field}.masks[${k}]`, problem);
  });
  const calibration = config.calibration;
  if (calibration && !homography(toPoints(calibration.image), toPoints(calibration.ground))) {
    throw refuse(`${field}.calibration`, 'three of the four points (image or ground) lie on one line');
  }
}

/** A zone or mask needs an area: 3+ points, no line, no whole frame. */
function regionProblem(polygon: Polygon): string | null {
  if (polygon.length < 3) return 'a zone or mask needs at least 3 points';
  return polygonProblem(polygon, APP_TYPE.detection);
}

/** A callback URL (a task's report_url, or the site-wide default named by `field`): empty, or absolute http(s). */
export function checkReportUrl(reportUrl: string, field = 'report_url'): string {
  if (reportUrl === '') return '';
  let url: URL;
  try {
    url = new URL(reportUrl);
  } catch {
    throw taskError('task.invalid', `body.${field}: must be an absolute http:// or https:// URL`, field);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw taskError('task.invalid', `body.${field}: must be an http:// or https:// URL`, field);
  }
  return reportUrl;
}

/** 429 for an image less than 1 s after the task's previous one. */
export function refuseTooSoon(row: TaskRow, now: number): void {
  if (row.last_image_at !== null && now - row.last_image_at < TASK_LIMITS.minImageIntervalMs) {
    throw taskError(
      'task.image_too_soon',
      `image sent ${now - row.last_image_at} ms after the previous one; images must be at least 1 s apart`,
    );
  }
}
