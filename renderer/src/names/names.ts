/**
 * Ids as operators read them: an app id as its name, a class id as its label, a rule id (what the
 * engine fires: "person:0", "person:counter", "person:speed:2", "person:removed") as the app's name
 * and what the rule watches, in the rule editor's words. The one place ids become names; an id with
 * no name known (its package gone) stays as it is, so nothing is hidden.
 */
import { appsOf, type ZapkApp, type ZapkPackage } from '../api';
import type { MessageKey, Translate } from '../i18n';

export interface Names {
  /** A package's name; the built-in package's in the console's language while it keeps its own. */
  package(zapkId: string): string;
  app(appId: string): string;
  /**
   * A class id's name in these apps (the alarm filter's: the apps that have alarms), else in every
   * installed app; where they name it differently, each name once.
   */
  class(classId: string, appIds?: string | readonly string[]): string;
  rule(ruleId: string): string;
}

/**
 * The built-in package's names as it ships them (assets/builtin/manifest.json), translated; a name
 * the operator gave instead is theirs and shown as it is.
 */
const BUILTIN: Record<string, [shipped: string, key: MessageKey]> = {
  builtin: ['Built-in analysis', 'names.builtin'],
  motion: ['Motion detection', 'names.builtin.motion'],
  intrusion: ['Region intrusion', 'names.builtin.intrusion'],
  change: ['Scene change', 'names.builtin.change'],
};

function shippedName(pkg: ZapkPackage, id: string, name: string, t: Translate): string {
  const shipped = pkg.builtin ? BUILTIN[id] : undefined;
  return shipped && shipped[0] === name ? t(shipped[1]) : name;
}

/** The rule's own name for a class (the rule editor's "Name"), else the model's label at its index. */
function classNameIn(app: ZapkApp, classId: string): string | undefined {
  const classes = (app.rule as { classes?: Array<{ class_id?: unknown; name?: unknown }> } | null)?.classes;
  const entry = Array.isArray(classes)
    ? classes.find((candidate) => candidate.class_id === classId)
    : undefined;
  if (typeof entry?.name === 'string' && entry.name.trim()) return entry.name;
  const label = /^\d+$/.test(classId) ? app.labels?.[Number(classId)] : undefined;
  return label?.trim() ? label : undefined;
}

export function namesOf(packages: readonly ZapkPackage[], t: Translate): Names {
  const apps = new Map<string, ZapkApp>();
  const appNames = new Map<string, string>();
  const packageNames = new Map<string, string>();
  for (const pkg of packages) {
    packageNames.set(pkg.zapk_id, shippedName(pkg, pkg.zapk_id, pkg.name, t));
    for (const app of appsOf(pkg)) {
      if (apps.has(app.app_id)) continue;
      apps.set(app.app_id, app);
      if (app.name?.trim()) appNames.set(app.app_id, shippedName(pkg, app.app_id, app.name, t));
    }
  }
  // Longest first: an app id may itself hold a colon, and "a:b:0" must find "a:b" before "a".
  const ids = [...apps.keys()].sort((a, b) => b.length - a.length);

  const app = (appId: string) => appNames.get(appId) ?? appId;
  const className = (classId: string, appIds?: string | readonly string[]) => {
    const owners =
      appIds === undefined
        ? [...apps.values()]
        : (typeof appIds === 'string' ? [appIds] : appIds).map((id) => apps.get(id));
    const found = new Set(owners.flatMap((owner) => (owner ? [classNameIn(owner, classId)] : [])));
    found.delete(undefined);
    return found.size > 0 ? [...found].join(' / ') : classId;
  };
  const rule = (ruleId: string) => {
    const appId = ids.find((id) => ruleId.startsWith(`${id}:`));
    if (appId === undefined) return ruleId;
    const what = ruleId.slice(appId.length + 1);
    const name = app(appId);
    if (what === 'counter') return t('names.ruleCounter', { app: name });
    if (what === 'removed') return t('names.ruleRemoved', { app: name });
    const speed = /^speed:(.+)$/.exec(what);
    if (speed?.[1]) return t('names.ruleSpeed', { app: name, class: className(speed[1], appId) });
    return t('names.ruleClass', { app: name, class: className(what, appId) });
  };
  return { package: (zapkId) => packageNames.get(zapkId) ?? zapkId, app, class: className, rule };
}
