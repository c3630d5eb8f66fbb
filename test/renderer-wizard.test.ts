import { describe, expect, it } from 'vitest';
import { DEFAULT_OSD, errorCode } from '../engine/contract';
import type { StageApp } from '../renderer/src/components/PolygonStage';
import { addArea } from '../renderer/src/geometry/areas';
import { addPoint, type EditorState, setActive } from '../renderer/src/geometry/editor';
import { type MessageKey, type Params, translate } from '../renderer/src/i18n';
import { ApiError } from '../renderer/src/transport';
import { formPathOf, startBody, wizardErrors } from '../renderer/src/wizard/body';
import {
  initialWizard,
  STEPS,
  stepOf,
  visibleError,
  type WizardAction,
  type WizardState,
  wizardReducer,
} from '../renderer/src/wizard/state';

/** The start wizard's form without a browser: its reducer, the body it sends and what holds it back. */

const t = (key: MessageKey, params?: Params) => translate('en', key, params);
const PERSON: StageApp = { app_id: 'person', name: 'Person detection', type: 1, color: '#ff3b30' };
const CAR: StageApp = { app_id: 'car', name: 'Vehicle detection', type: 1, color: '#0a84ff' };
const SQUARE: Array<[number, number]> = [
  [10, 10],
  [200, 10],
  [200, 150],
  [10, 150],
];

const run = (actions: WizardAction[], from: WizardState = initialWizard()) =>
  actions.reduce(wizardReducer, from);

/** Draws a closed region on a shape of the editor: its points, then a click on the first. */
function draw(editor: EditorState, key: string, points: Array<[number, number]>): EditorState {
  return [...points, points[0] as [number, number]].reduce(
    (state, point) => addPoint(state, point, 5),
    setActive(editor, key),
  );
}

/** A video task on `rtsp://cam/1` with the person app chosen and its shapes made. */
function chosen(): WizardState {
  return run([
    { type: 'videoUrl', videoUrl: 'rtsp://cam/1' },
    { type: 'package', zapkId: 'coco' },
    { type: 'apps', appIds: ['person'] },
    { type: 'stageApps', stageApps: [PERSON] },
  ]);
}

describe('the wizard’s state', () => {
  it('starts empty on the source step of a video task', () => {
    expect(initialWizard()).toEqual({
      step: 'source',
      mode: 'video',
      videoUrl: '',
      analysisUrl: '',
      name: '',
      zapkId: '',
      appIds: [],
      editor: { shapes: {}, active: '', past: [], future: [] },
      osd: DEFAULT_OSD,
      results: { report_url: '', business_id: '', device_id: '' },
      fpsText: '',
      persistent: true,
      shown: new Set(),
      serverErrors: {},
    });
  });

  it('names the step of every field', () => {
    const paths = ['mode', 'name', 'video_url', 'zapk_id', 'app_ids.0', 'app_configs.0.polygon'];
    const more = ['polygon.person', 'area.x', 'osd.font_size', 'report_url', 'analysis_fps', 'general'];
    expect([...paths, ...more].map(stepOf)).toEqual([
      'source',
      'source',
      'source',
      'apps',
      'apps',
      'regions',
      'regions',
      'regions',
      'output',
      'output',
      'output',
      'output',
    ]);
    expect(STEPS).toEqual(['source', 'apps', 'regions', 'output']);
  });

  it('chooses apps afresh for another mode or package, and keeps them otherwise', () => {
    const picked = run([
      { type: 'package', zapkId: 'coco' },
      { type: 'apps', appIds: ['person', 'car'] },
    ]);
    expect([picked.zapkId, picked.appIds]).toEqual(['coco', ['person', 'car']]);
    expect(run([{ type: 'mode', mode: 'image' }], picked)).toEqual({ ...picked, mode: 'image', appIds: [] });
    expect(run([{ type: 'package', zapkId: 'other' }], picked)).toEqual({
      ...picked,
      zapkId: 'other',
      appIds: [],
    });
    expect(run([{ type: 'osd', osd: { ...DEFAULT_OSD, font_size: 30 } }], picked)).toEqual({
      ...picked,
      osd: { ...DEFAULT_OSD, font_size: 30 },
    });
  });

  it('drops the engine’s refusal when a field it may concern is typed in, not on a choice', () => {
    const refused = run([{ type: 'refused', path: 'report_url', msg: 'report_url: not a URL' }], chosen());
    expect(refused).toEqual({
      ...chosen(),
      step: 'output',
      serverErrors: { report_url: { key: 'validation.invalid', text: 'report_url: not a URL' } },
    });
    const typed: Array<[WizardAction, Partial<WizardState>]> = [
      [{ type: 'name', name: 'Gate' }, { name: 'Gate' }],
      [{ type: 'videoUrl', videoUrl: 'rtsp://cam/2' }, { videoUrl: 'rtsp://cam/2' }],
      [{ type: 'fps', text: '8' }, { fpsText: '8' }],
      [
        { type: 'result', field: 'business_id', value: 'b-1' },
        { results: { report_url: '', business_id: 'b-1', device_id: '' } },
      ],
      [{ type: 'editor', editor: chosen().editor }, {}],
    ];
    for (const [action, change] of typed) {
      expect(wizardReducer(refused, action)).toEqual({ ...refused, ...change, serverErrors: {} });
    }
    expect(wizardReducer(refused, { type: 'apps', appIds: [] }).serverErrors).toEqual(refused.serverErrors);
  });

  it('goes to the next step only when the step has no problem, and shows the step’s problems', () => {
    const problems = { video_url: { key: 'validation.required' as const } };
    const held = run([{ type: 'next', errors: problems }]);
    expect(held).toEqual({ ...initialWizard(), shown: new Set(['source']) });
    // A problem of a later step does not hold this one back.
    const moved = run([{ type: 'next', errors: { app_ids: { key: 'wizard.chooseApps' } } }], held);
    expect(moved).toEqual({ ...held, step: 'apps' });
    expect(run([{ type: 'back' }], moved)).toEqual({ ...moved, step: 'source' });
    // The last step stays: the screen starts the task.
    const last = run([
      { type: 'next', errors: {} },
      { type: 'next', errors: {} },
      { type: 'next', errors: {} },
      { type: 'next', errors: {} },
    ]);
    expect([last.step, [...last.shown]]).toEqual(['output', ['source', 'apps', 'regions', 'output']]);
  });

  it('shows a field’s problem once its step was left or the engine refused it', () => {
    const errors = {
      video_url: { key: 'validation.required' as const },
      name: { key: 'validation.empty' as const },
    };
    const fresh = initialWizard();
    expect(visibleError(fresh, errors, 'video_url')).toBeUndefined();
    const tried = run([{ type: 'next', errors }]);
    expect(visibleError(tried, errors, 'video_url')).toEqual({ key: 'validation.required' });
    const refused = run([{ type: 'refused', path: 'name', msg: 'too long' }]);
    expect([visibleError(refused, errors, 'name'), visibleError(refused, errors, 'video_url')]).toEqual([
      { key: 'validation.empty' },
      undefined,
    ]);
  });

  it('gives each chosen app a shape and keeps the finished ones when the apps change', () => {
    const one = chosen();
    expect(one.editor).toEqual({
      shapes: { person: { kind: 'region', points: [], closed: false } },
      active: 'person',
      past: [],
      future: [],
    });
    const drawn = run([{ type: 'editor', editor: draw(one.editor, 'person', SQUARE) }], one);
    const two = run([{ type: 'stageApps', stageApps: [PERSON, CAR] }], drawn);
    expect(two.editor).toEqual({
      shapes: {
        person: { kind: 'region', points: SQUARE, closed: true },
        car: { kind: 'region', points: [], closed: false },
      },
      active: 'person',
      past: [],
      future: [],
    });
  });
});

describe('the body the wizard sends', () => {
  it('sends the source trimmed, the package, apps and drawing options, and nothing left empty', () => {
    const state = run([{ type: 'videoUrl', videoUrl: '  rtsp://cam/1 ' }], chosen());
    expect(startBody(state, [PERSON])).toEqual({
      mode: 'video',
      zapk_id: 'coco',
      app_ids: ['person'],
      video_url: 'rtsp://cam/1',
      persistent: true,
      osd: DEFAULT_OSD,
    });
  });

  it('sends every field filled in, with drawn regions and zones', () => {
    const withZone = addArea(draw(chosen().editor, 'person', SQUARE), 'person', 'zone', 'Door');
    const zoned = draw(withZone, withZone.active, [
      [20, 20],
      [60, 20],
      [60, 60],
    ]);
    const state = run(
      [
        { type: 'name', name: ' Gate 1 ' },
        { type: 'analysisUrl', analysisUrl: ' rtsp://cam/1-sub ' },
        { type: 'editor', editor: zoned },
        { type: 'result', field: 'report_url', value: ' https://receiver.example/cb ' },
        { type: 'result', field: 'business_id', value: 'biz' },
        { type: 'result', field: 'device_id', value: 'cam-7' },
        { type: 'fps', text: ' 8 ' },
        // An operator who wants the contract's close after 5 min lost says so.
        { type: 'persistent', persistent: false },
      ],
      chosen(),
    );
    expect(startBody(state, [PERSON])).toEqual({
      mode: 'video',
      zapk_id: 'coco',
      app_ids: ['person'],
      video_url: 'rtsp://cam/1',
      persistent: false,
      analysis_url: 'rtsp://cam/1-sub',
      osd: DEFAULT_OSD,
      app_configs: [
        {
          app_id: 'person',
          polygon: SQUARE,
          zones: [
            {
              name: 'Door',
              polygon: [
                [20, 20],
                [60, 20],
                [60, 60],
              ],
            },
          ],
        },
      ],
      report_url: 'https://receiver.example/cb',
      business_id: 'biz',
      device_id: 'cam-7',
      name: 'Gate 1',
      analysis_fps: 8,
    });
  });

  it('sends neither source nor analysis rate for an image task', () => {
    const state = run(
      [
        { type: 'videoUrl', videoUrl: 'rtsp://cam/1' },
        { type: 'analysisUrl', analysisUrl: 'rtsp://cam/1-sub' },
        { type: 'fps', text: '8' },
        { type: 'mode', mode: 'image' },
        { type: 'package', zapkId: 'coco' },
        { type: 'apps', appIds: ['person'] },
      ],
      initialWizard(),
    );
    expect(startBody(state, [PERSON])).toEqual({
      mode: 'image',
      zapk_id: 'coco',
      app_ids: ['person'],
      osd: DEFAULT_OSD,
    });
  });
});

describe('what holds the wizard back', () => {
  it('finds an empty form’s problems: no source, no package, no app', () => {
    expect(wizardErrors(initialWizard(), [], t)).toEqual({
      zapk_id: { key: 'validation.empty' },
      app_ids: { key: 'wizard.chooseApps' },
      video_url: { key: 'validation.required' },
    });
  });

  it('checks the analysis rate and the rest with the engine’s schema', () => {
    const typed = (text: string) => wizardErrors(run([{ type: 'fps', text }], chosen()), [PERSON], t);
    expect([typed(''), typed('8'), typed('abc'), typed('999')]).toEqual([
      {},
      {},
      { analysis_fps: { key: 'validation.number' } },
      { analysis_fps: { key: 'validation.max', params: { max: '60' } } },
    ]);
  });

  it('holds back an app’s region or zone that is not finished, named as the operator sees it', () => {
    const started = addPoint(addPoint(chosen().editor, [10, 10]), [50, 10]);
    const zoned = addArea(draw(chosen().editor, 'person', SQUARE), 'person', 'zone', 'Door');
    expect(wizardErrors(run([{ type: 'editor', editor: started }], chosen()), [PERSON], t)).toEqual({
      'polygon.person': { key: 'regions.unfinished', params: { app: 'Person detection' } },
    });
    expect(wizardErrors(run([{ type: 'editor', editor: zoned }], chosen()), [PERSON], t)).toEqual({
      [`area.${zoned.active}`]: {
        key: 'areas.notSaved',
        params: { what: t('areas.toolsZone', { name: 'Door', app: 'Person detection' }) },
      },
    });
  });

  it('puts the engine’s refusal on its field, over the form’s own finding', () => {
    const state = run(
      [
        { type: 'fps', text: 'abc' },
        { type: 'refused', path: 'analysis_fps', msg: 'analysis_fps: too high' },
      ],
      chosen(),
    );
    expect(wizardErrors(state, [PERSON], t)).toEqual({
      analysis_fps: { key: 'validation.invalid', text: 'analysis_fps: too high' },
    });
  });
});

describe('where the engine’s refusal is shown', () => {
  const body = { app_configs: [{ app_id: 'car' }, { app_id: 'person' }] };
  const refusal = (field?: string, code = errorCode('INVALID_PARAMETER')) =>
    new ApiError(400, code, 'refused', field);

  it('on the field the envelope names, an app’s polygon on its region, else in general', () => {
    const withZone = addArea(chosen().editor, 'person', 'zone', 'Door');
    expect([
      formPathOf(refusal('report_url'), body),
      formPathOf(refusal('app_configs[1].polygon'), body),
      formPathOf(refusal('app_configs[1].zones[0].polygon'), body, withZone),
      formPathOf(refusal(''), body),
      formPathOf(refusal(undefined, errorCode('STREAM_UNAVAILABLE')), body),
      formPathOf(refusal(undefined), body),
    ]).toEqual(['report_url', 'polygon.person', `area.${withZone.active}`, 'general', 'video_url', null]);
  });
});
