/**
 * The start wizard's form (4.4) as one state and a pure reducer: what the operator typed and chose,
 * the step shown, the steps whose problems are shown, and the engine's refusal on its field. The body
 * it sends and the problems that hold a step back are in ./body.
 */
import { DEFAULT_OSD } from '../../../engine/contract';
import type { Osd, TaskMode } from '../api';
import type { StageApp } from '../components/PolygonStage';
import { editorWithAreas, finishedConfigs } from '../geometry/areas';
import { createEditor, type EditorState } from '../geometry/editor';
import type { MessageKey } from '../i18n';
import type { FieldErrors, FieldMessage } from '../validation/schema-errors';

export const STEPS = ['source', 'apps', 'regions', 'output'] as const;
export type Step = (typeof STEPS)[number];

/** Which step shows a field: where a problem is reported and where the wizard goes back to. */
export function stepOf(path: string): Step {
  if (path === 'mode' || path === 'name' || path.startsWith('video_url') || path.startsWith('analysis_url'))
    return 'source';
  if (path.startsWith('zapk_id') || path.startsWith('app_ids')) return 'apps';
  if (path.startsWith('app_configs') || path.startsWith('polygon') || path.startsWith('area.'))
    return 'regions';
  return 'output';
}

/** The output step's free-text fields, by their body name. */
export type ResultField = 'report_url' | 'business_id' | 'device_id';

export interface WizardState {
  step: Step;
  mode: TaskMode;
  videoUrl: string;
  /** The camera's sub-stream for analysis (analysis_url), optional: '' for none. */
  analysisUrl: string;
  name: string;
  zapkId: string;
  appIds: string[];
  /** The chosen apps' polygons, zones, masks and calibrations. */
  editor: EditorState;
  osd: Required<Osd>;
  results: Record<ResultField, string>;
  /** The analysis rate as typed (checked in ./body). */
  fpsText: string;
  /** Keep the camera whatever its stream does (persistent): on unless the operator says otherwise. */
  persistent: boolean;
  /** Steps the operator tried to leave: their problems are shown. */
  shown: ReadonlySet<Step>;
  /** The engine's refusal on its field, until the operator edits a field again. */
  serverErrors: FieldErrors;
}

export function initialWizard(): WizardState {
  return {
    step: 'source',
    mode: 'video',
    videoUrl: '',
    analysisUrl: '',
    name: '',
    zapkId: '',
    appIds: [],
    editor: createEditor([], []),
    osd: { ...DEFAULT_OSD },
    results: { report_url: '', business_id: '', device_id: '' },
    fpsText: '',
    persistent: true,
    shown: new Set(),
    serverErrors: {},
  };
}

export type WizardAction =
  /** Another mode fits other apps: the choice starts over. */
  | { type: 'mode'; mode: TaskMode }
  | { type: 'name'; name: string }
  | { type: 'videoUrl'; videoUrl: string }
  | { type: 'analysisUrl'; analysisUrl: string }
  /** Another package: its apps are chosen afresh. */
  | { type: 'package'; zapkId: string }
  | { type: 'apps'; appIds: string[] }
  /** The shapes follow the chosen apps (as the drawing surface lists them); finished ones are kept. */
  | { type: 'stageApps'; stageApps: readonly StageApp[] }
  | { type: 'editor'; editor: EditorState }
  | { type: 'osd'; osd: Required<Osd> }
  | { type: 'result'; field: ResultField; value: string }
  | { type: 'fps'; text: string }
  | { type: 'persistent'; persistent: boolean }
  /** Next (or Start on the last step) with the problems found now: a step with problems stays. */
  | { type: 'next'; errors: FieldErrors }
  | { type: 'back' }
  /**
   * The engine refused the start on this field (a path of ./body's formPathOf): its words, or the
   * translated message of a refusal that has one (a source that did not open).
   */
  | { type: 'refused'; path: string; msg: string; key?: MessageKey };

/** What each step's component gets: the form, a way to change it, and a field's problem once shown. */
export interface StepProps {
  state: WizardState;
  dispatch: (action: WizardAction) => void;
  visible: (path: string) => FieldMessage | undefined;
}

/** The problems of one step, as [path, message]. */
export function errorsOf(errors: FieldErrors, step: Step) {
  return Object.entries(errors).filter(([path]) => stepOf(path) === step);
}

/** A field's problem once its step was left (or the engine refused it); undefined before. */
export function visibleError(state: WizardState, errors: FieldErrors, path: string) {
  return state.shown.has(stepOf(path)) || path in state.serverErrors ? errors[path] : undefined;
}

/** The step after this one; the last step has none (the wizard then starts the task). */
const stepAfter = (step: Step): Step | undefined => STEPS[STEPS.indexOf(step) + 1];

export function wizardReducer(state: WizardState, action: WizardAction): WizardState {
  switch (action.type) {
    case 'mode':
      return { ...state, mode: action.mode, appIds: [] };
    case 'name':
      return { ...state, name: action.name, serverErrors: {} };
    case 'videoUrl':
      return { ...state, videoUrl: action.videoUrl, serverErrors: {} };
    case 'analysisUrl':
      return { ...state, analysisUrl: action.analysisUrl, serverErrors: {} };
    case 'package':
      return { ...state, zapkId: action.zapkId, appIds: [] };
    case 'apps':
      return { ...state, appIds: action.appIds };
    case 'stageApps':
      return {
        ...state,
        editor: editorWithAreas(action.stageApps, finishedConfigs(state.editor, action.stageApps)),
      };
    case 'editor':
      return { ...state, editor: action.editor, serverErrors: {} };
    case 'osd':
      return { ...state, osd: action.osd };
    case 'result':
      return { ...state, results: { ...state.results, [action.field]: action.value }, serverErrors: {} };
    case 'fps':
      return { ...state, fpsText: action.text, serverErrors: {} };
    case 'persistent':
      return { ...state, persistent: action.persistent };
    case 'next': {
      const shown = new Set(state.shown).add(state.step);
      const next = stepAfter(state.step);
      const blocked = errorsOf(action.errors, state.step).length > 0;
      return { ...state, shown, step: blocked || next === undefined ? state.step : next };
    }
    case 'back':
      return { ...state, step: STEPS[Math.max(0, STEPS.indexOf(state.step) - 1)] as Step };
    case 'refused':
      return {
        ...state,
        serverErrors: {
          [action.path]: action.key ? { key: action.key } : { key: 'validation.invalid', text: action.msg },
        },
        step: stepOf(action.path),
      };
  }
}
