/**
 * What the start wizard sends (the StartTaskBody its form makes), the problems that hold each step
 * back (the engine's own schema and polygon checks, and what the form knows besides), and where the
 * engine's refusal is shown. Pure: the wizard's screen and its tests use the same functions.
 */
import { errorCode, StartTaskBody } from '../../../engine/contract';
import type { StartTaskBody as Body } from '../api';
import type { StageApp } from '../components/PolygonStage';
import { areaKeyOfField, areaLabel, areaProblem, finishedConfigs } from '../geometry/areas';
import { type EditorState, shapeProblem } from '../geometry/editor';
import type { Translate } from '../i18n';
import { analysisFpsOf } from '../tasks/analysis-fps';
import type { ApiError } from '../transport';
import { type FieldErrors, fieldPath, schemaErrors } from '../validation/schema-errors';
import type { WizardState } from './state';

/** The start request the form makes; `stageApps` are the chosen apps as the drawing surface has them. */
export function startBody(state: WizardState, stageApps: readonly StageApp[]): Body {
  const { mode, results } = state;
  // Apps with nothing drawn send nothing; wizardErrors holds back unfinished ones.
  const appConfigs = finishedConfigs(state.editor, stageApps).flatMap(({ zones, masks, ...config }) =>
    config.polygon.length > 0 || zones?.length || masks?.length || config.calibration
      ? [{ ...config, ...(zones?.length ? { zones } : {}), ...(masks?.length ? { masks } : {}) }]
      : [],
  );
  const analysisFps = mode === 'video' ? analysisFpsOf(state.fpsText).value : undefined;
  const reportUrl = results.report_url.trim();
  const name = state.name.trim();
  const analysisUrl = mode === 'video' ? state.analysisUrl.trim() : '';
  return {
    mode,
    zapk_id: state.zapkId,
    app_ids: state.appIds,
    ...(mode === 'video' ? { video_url: state.videoUrl.trim(), persistent: state.persistent } : {}),
    ...(analysisUrl ? { analysis_url: analysisUrl } : {}),
    osd: state.osd,
    ...(appConfigs.length > 0 ? { app_configs: appConfigs } : {}),
    ...(reportUrl ? { report_url: reportUrl } : {}),
    ...(results.business_id ? { business_id: results.business_id } : {}),
    ...(results.device_id ? { device_id: results.device_id } : {}),
    ...(name ? { name } : {}),
    ...(analysisFps !== undefined ? { analysis_fps: analysisFps } : {}),
  };
}

/**
 * Every problem of the form by field path (./wizard's stepOf says whose step): the body against the
 * engine's StartTaskBody schema, a missing source or app, an analysis rate that is no number, an
 * app's shape or area not finished or not valid; then the engine's refusal, which wins on its field.
 */
export function wizardErrors(state: WizardState, stageApps: readonly StageApp[], t: Translate): FieldErrors {
  const { editor, mode } = state;
  const found: FieldErrors = { ...schemaErrors(StartTaskBody, startBody(state, stageApps)) };
  if (mode === 'video' && state.videoUrl.trim() === '') found.video_url = { key: 'validation.required' };
  if (state.appIds.length === 0) found.app_ids = { key: 'wizard.chooseApps' };
  const fpsProblem = mode === 'video' ? analysisFpsOf(state.fpsText).problem : undefined;
  if (fpsProblem) found.analysis_fps = fpsProblem;
  for (const app of stageApps) {
    const shape = editor.shapes[app.app_id];
    const problem = shape ? shapeProblem(shape, app.type) : null;
    if (problem) {
      found[`polygon.${app.app_id}`] =
        problem.kind === 'drawing'
          ? { key: 'regions.unfinished', params: { app: app.name } }
          : { key: 'validation.invalid', text: `${app.name}: ${problem.message}` };
    }
  }
  for (const key of Object.keys(editor.shapes)) {
    const app = stageApps.find((candidate) => candidate.app_id === editor.shapes[key]?.area?.app);
    if (app && areaProblem(editor, key)) {
      const what = areaLabel(t, editor, key, app.name);
      found[`area.${key}`] = { key: 'areas.notSaved', params: { what } };
    }
  }
  return { ...found, ...state.serverErrors };
}

/**
 * Where the wizard shows the engine's refusal: the field its envelope names (a polygon on its app's
 * region, a zone, mask or calibration on its row: `area.<shape key>`), the source for a stream that
 * would not open; null when it concerns no field.
 */
export function formPathOf(
  error: ApiError,
  body: { app_configs?: Array<{ app_id: string }> },
  editor?: EditorState,
): string | null {
  if (error.field === undefined) {
    return error.code === errorCode('STREAM_UNAVAILABLE') ? 'video_url' : null;
  }
  const path = fieldPath(error.field);
  const appIds = (body.app_configs ?? []).map((config) => config.app_id);
  const area = editor ? areaKeyOfField(editor, appIds, path) : null;
  if (area) return `area.${area}`;
  const polygon = /^app_configs\.(\d+)\.polygon/.exec(path);
  const appId = polygon ? body.app_configs?.[Number(polygon[1])]?.app_id : undefined;
  return appId === undefined ? path || 'general' : `polygon.${appId}`;
}
