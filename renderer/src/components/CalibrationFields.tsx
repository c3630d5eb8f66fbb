import type { Static } from '@sinclair/typebox';
import type { LengthReference } from '../../../engine/contract';
import { addArea, areaKeys, areaProblem, measuredMetres, removeArea, setGround } from '../geometry/areas';
import { clearShape, type EditorState } from '../geometry/editor';
import { useT } from '../store';
import { areaState } from './AreaFields';

interface CalibrationFieldsProps {
  appId: string;
  appName: string;
  editor: EditorState;
  onChange: (next: EditorState) => void;
  /** The package's read-only scale (docs/api.md 6.3), used when there is no calibration. */
  lengthReference: Static<typeof LengthReference> | undefined;
  /** The engine's refusal of the calibration, shown under it. */
  error?: string;
}

/**
 * An app's ground calibration: four marks placed on the frame and their ground metres typed beside,
 * and a measure segment whose ground length shows at once, so the operator can check the scale.
 */
export function CalibrationFields(props: CalibrationFieldsProps) {
  const { appId, appName, editor, onChange, lengthReference, error } = props;
  const t = useT();
  const key = areaKeys(editor, appId, 'calibration')[0];
  const shape = key ? editor.shapes[key] : undefined;
  const measureKey = areaKeys(editor, appId, 'measure')[0];
  const metres = measuredMetres(editor, appId, lengthReference);
  const problem = key ? areaProblem(editor, key) : null;

  return (
    <fieldset>
      <legend>{t('areas.calibration', { app: appName })}</legend>
      <p className="hint">{t('areas.calibrationHint')}</p>
      {lengthReference && (
        <p className="meta">
          {t('areas.lengthReference', { pixels: lengthReference.pixels, meters: lengthReference.meters })}
        </p>
      )}
      {!key || !shape ? (
        <button type="button" onClick={() => onChange(addArea(editor, appId, 'calibration'))}>
          {t('areas.placeMarks')}
        </button>
      ) : (
        <>
          <ol className="calibration-marks">
            {[0, 1, 2, 3].map((mark) => {
              const point = shape.points[mark];
              const ground = shape.area?.ground?.[mark] ?? ['', ''];
              return (
                <li key={mark}>
                  <span className="calibration-mark">
                    {t('areas.mark', { n: mark + 1 })}{' '}
                    <span className="meta">
                      {point ? t('areas.markAt', { x: point[0], y: point[1] }) : t('areas.notPlaced')}
                    </span>
                  </span>
                  {([0, 1] as const).map((axis) => (
                    <input
                      key={axis}
                      className="number"
                      inputMode="decimal"
                      value={ground[axis]}
                      placeholder={axis === 0 ? 'x m' : 'y m'}
                      aria-label={t(axis === 0 ? 'areas.groundX' : 'areas.groundY', { n: mark + 1 })}
                      onChange={(event) => onChange(setGround(editor, key, mark, axis, event.target.value))}
                    />
                  ))}
                </li>
              );
            })}
          </ol>
          <p
            className={error || (problem && problem.kind !== 'drawing') ? 'field-error' : 'meta'}
            role={error ? 'alert' : undefined}
          >
            {error ??
              (problem?.kind === 'drawing'
                ? t('areas.marksMissing')
                : areaState(t, problem, shape.points.length))}
          </p>
          <div className="button-row">
            <button
              type="button"
              aria-pressed={editor.active === key}
              onClick={() => onChange({ ...editor, active: key })}
            >
              {t('areas.edit')}
            </button>
            <button
              type="button"
              disabled={shape.points.length === 0}
              onClick={() => onChange(clearShape({ ...editor, active: key }))}
            >
              {t('areas.redraw')}
            </button>
            <button type="button" onClick={() => onChange(removeArea(editor, key))}>
              {t('areas.removeCalibration')}
            </button>
          </div>
        </>
      )}
      {!key && !lengthReference && <p className="hint">{t('areas.noScale')}</p>}
      <div className="calibration-measure">
        {measureKey ? (
          <>
            <p role="status" className="measure-readout">
              {metres === null ? t('areas.measuredNone') : t('areas.measured', { metres: metres.toFixed(2) })}
            </p>
            <button type="button" onClick={() => onChange(removeArea(editor, measureKey))}>
              {t('areas.stopMeasuring')}
            </button>
          </>
        ) : (
          <>
            <p className="hint">{t('areas.measureHint')}</p>
            <button type="button" onClick={() => onChange(addArea(editor, appId, 'measure'))}>
              {t('areas.measure')}
            </button>
          </>
        )}
      </div>
    </fieldset>
  );
}
