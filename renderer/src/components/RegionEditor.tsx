import { type ReactNode, useEffect, useId, useState } from 'react';
import { areaKeys, areaProblem, measuredMetres, ownerOf } from '../geometry/areas';
import {
  activeShape,
  clearShape,
  closeShape,
  type EditorState,
  formatPoints,
  parsePoints,
  redo,
  setActive,
  setDirection,
  setKind,
  setPoints,
  shapeProblem,
  undo,
} from '../geometry/editor';
import type { Size } from '../geometry/viewport';
import { useT } from '../store';
import { AreaFields } from './AreaFields';
import { CalibrationFields } from './CalibrationFields';
import { PolygonStage, type StageApp } from './PolygonStage';

/** A counting line's directions as the editor offers them: side A to B is the engine's 'in'. */
const LINE_DIRECTIONS = [
  { value: 'in', label: 'regions.directionIn' },
  { value: 'out', label: 'regions.directionOut' },
  { value: 'both', label: 'regions.directionBoth' },
] as const;

interface RegionEditorProps {
  apps: readonly StageApp[];
  editor: EditorState;
  onChange: (next: EditorState) => void;
  /** The frame's size in source pixels; without it only typed coordinates are possible. */
  source: Size | null;
  /** The frame under the canvas (a video). */
  frame?: ReactNode;
  lit?: ReadonlySet<string>;
  /** Shown under the tools: save state, video state. */
  status?: ReactNode;
  /** The engine's refusals of zones, masks and calibrations, by shape key (../geometry/areas). */
  areaErrors?: Readonly<Record<string, string>>;
}

/** The polygon editor with its side panel: apps, tools, typed coordinates, problems, shortcuts. */
export function RegionEditor(props: RegionEditorProps) {
  const { apps, editor, onChange, source, frame, lit, status, areaErrors } = props;
  const t = useT();
  const helpId = useId();
  const textId = useId();
  const shape = activeShape(editor);
  const owner = ownerOf(editor, editor.active);
  const activeApp = apps.find((app) => app.app_id === owner);
  const area = shape?.area;
  const [text, setText] = useState('');
  const [textError, setTextError] = useState(false);
  useEffect(() => {
    setText(shape ? formatPoints(shape.points) : '');
    setTextError(false);
  }, [shape]);

  const applyText = () => {
    const points = parsePoints(text);
    setTextError(points === null);
    if (points) onChange(setPoints(editor, points));
  };

  const problemOf = (appId: string) => {
    const appShape = editor.shapes[appId];
    const app = apps.find((candidate) => candidate.app_id === appId);
    if (!appShape || !app) return null;
    const problem = shapeProblem(appShape, app.type);
    if (!problem)
      return appShape.points.length === 0
        ? t('regions.wholeFrame')
        : t('regions.ok', { count: appShape.points.length });
    return problem.kind === 'drawing' ? t('regions.drawing') : problem.message;
  };
  const activeProblem =
    shape && activeApp
      ? area
        ? areaProblem(editor, editor.active)
        : shapeProblem(shape, activeApp.type)
      : null;
  const toolsTitle = () => {
    const app = activeApp?.name ?? '';
    if (area?.role === 'zone') return t('areas.toolsZone', { name: area.name ?? '', app });
    if (area?.role === 'mask') {
      const n = areaKeys(editor, owner, 'mask').indexOf(editor.active) + 1;
      return t('areas.toolsMask', { n, app });
    }
    if (area?.role === 'calibration') return t('areas.toolsCalibration', { app });
    if (area?.role === 'measure') return t('areas.toolsMeasure', { app });
    return t('regions.tools', { app });
  };
  const metres = activeApp ? measuredMetres(editor, activeApp.app_id, activeApp.lengthReference) : null;

  return (
    <div className="region-editor">
      <div className="region-canvas">
        {source ? (
          <PolygonStage
            source={source}
            editor={editor}
            onChange={onChange}
            apps={apps}
            lit={lit}
            label={t('regions.canvasLabel', { app: activeApp?.name ?? '' })}
            describedBy={helpId}
            measure={metres === null ? undefined : `${metres.toFixed(2)} m`}
          >
            {frame}
          </PolygonStage>
        ) : (
          <div className="stage stage-empty">
            <p>{t('regions.noFrame')}</p>
          </div>
        )}
      </div>
      <div className="region-panel">
        <fieldset>
          <legend>{t('regions.apps')}</legend>
          <ul className="app-picker">
            {apps.map((app, index) => {
              const appShape = editor.shapes[app.app_id];
              const problem = appShape ? shapeProblem(appShape, app.type) : null;
              return (
                <li key={app.app_id}>
                  <label className={app.app_id === owner ? 'app-choice active' : 'app-choice'}>
                    <input
                      type="radio"
                      name={`${helpId}-app`}
                      checked={app.app_id === owner}
                      onChange={() => onChange(setActive(editor, app.app_id))}
                    />
                    <span className="swatch" style={{ background: app.color }} aria-hidden="true" />
                    <span className="app-choice-name">
                      {index < 9 && <kbd>{index + 1}</kbd>} {app.name}
                      {lit?.has(app.app_id) && (
                        <span className="badge badge-live">{t('regions.occupied')}</span>
                      )}
                    </span>
                    <span
                      className={problem?.kind === 'invalid' ? 'app-choice-state bad' : 'app-choice-state'}
                    >
                      {problemOf(app.app_id)}
                    </span>
                  </label>
                </li>
              );
            })}
          </ul>
        </fieldset>
        {shape && activeApp && (
          <fieldset>
            <legend>{toolsTitle()}</legend>
            {activeApp.type === 3 && !area && (
              <div className="segmented" role="radiogroup" aria-label={t('regions.kind')}>
                {(['region', 'line'] as const).map((kind) => (
                  <label key={kind}>
                    <input
                      type="radio"
                      name={`${helpId}-kind`}
                      checked={shape.kind === kind}
                      onChange={() => onChange(setKind(editor, kind))}
                    />
                    {t(kind === 'region' ? 'regions.kindRegion' : 'regions.kindLine')}
                  </label>
                ))}
              </div>
            )}
            {shape.kind === 'line' && !area && (
              <div className="field">
                <div
                  className="segmented"
                  role="radiogroup"
                  aria-label={t('regions.direction')}
                  aria-describedby={`${helpId}-direction`}
                >
                  {LINE_DIRECTIONS.map(({ value, label }) => (
                    <label key={value}>
                      <input
                        type="radio"
                        name={`${helpId}-direction`}
                        value={value}
                        checked={(shape.direction ?? 'both') === value}
                        onChange={() => onChange(setDirection(editor, value))}
                      />
                      {t(label)}
                    </label>
                  ))}
                </div>
                <span id={`${helpId}-direction`} className="hint">
                  {t('regions.directionHint')}
                </span>
              </div>
            )}
            <div className="button-row">
              <button
                type="button"
                onClick={() => onChange(undo(editor))}
                disabled={editor.past.length === 0}
              >
                {t('regions.undo')}
              </button>
              <button
                type="button"
                onClick={() => onChange(redo(editor))}
                disabled={editor.future.length === 0}
              >
                {t('regions.redo')}
              </button>
              <button
                type="button"
                onClick={() => onChange(closeShape(editor))}
                disabled={shape.closed || shape.kind !== 'region' || shape.points.length < 3}
              >
                {t('regions.close')}
              </button>
              <button
                type="button"
                onClick={() => onChange(clearShape(editor))}
                disabled={shape.points.length === 0}
              >
                {t('regions.clear')}
              </button>
            </div>
            {/* Not a form: the editor sits inside the wizard's form, and a nested form's submit reloads the page. */}
            <div className="field">
              <label htmlFor={textId}>{t('regions.points')}</label>
              <div className="field-row">
                <input
                  id={textId}
                  value={text}
                  spellCheck={false}
                  onChange={(event) => setText(event.target.value)}
                  onKeyDown={(event) => {
                    if (event.key !== 'Enter') return;
                    event.preventDefault();
                    applyText();
                  }}
                  aria-invalid={textError || undefined}
                  aria-describedby={`${textId}-hint`}
                />
                <button type="button" onClick={applyText}>
                  {t('regions.apply')}
                </button>
              </div>
              <span id={`${textId}-hint`} className={textError ? 'field-error' : 'hint'}>
                {textError ? t('regions.pointsInvalid') : t('regions.pointsHint')}
              </span>
            </div>
            {activeProblem?.kind === 'invalid' && (
              <p className="notice notice-error" role="alert">
                {activeProblem.message}
              </p>
            )}
          </fieldset>
        )}
        {activeApp && (
          <>
            <AreaFields
              appId={activeApp.app_id}
              appName={activeApp.name}
              editor={editor}
              onChange={onChange}
              errors={areaErrors}
            />
            <CalibrationFields
              appId={activeApp.app_id}
              appName={activeApp.name}
              editor={editor}
              onChange={onChange}
              lengthReference={activeApp.lengthReference}
              error={areaErrors?.[areaKeys(editor, activeApp.app_id, 'calibration')[0] ?? '']}
            />
          </>
        )}
        {status}
        <details className="shortcuts">
          <summary>{t('regions.shortcuts')}</summary>
          <ul id={helpId} className="shortcuts-list">
            <li>{t('regions.help.click')}</li>
            <li>{t('regions.help.drag')}</li>
            <li>{t('regions.help.edge')}</li>
            <li>{t('regions.help.delete')}</li>
            <li>{t('regions.help.undo')}</li>
            <li>{t('regions.help.close')}</li>
            <li>{t('regions.help.zoom')}</li>
            <li>{t('regions.help.pan')}</li>
            <li>{t('regions.help.snap')}</li>
            <li>{t('regions.help.keyboard')}</li>
            <li>{t('regions.help.apps')}</li>
          </ul>
        </details>
      </div>
    </div>
  );
}
