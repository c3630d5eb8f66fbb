import { useId } from 'react';
import {
  type AreaProblem,
  addArea,
  areaKeys,
  areaProblem,
  nextZoneName,
  removeArea,
  renameZone,
} from '../geometry/areas';
import { clearShape, type EditorState } from '../geometry/editor';
import type { Translate } from '../i18n';
import { useT } from '../store';

interface AreaFieldsProps {
  appId: string;
  appName: string;
  editor: EditorState;
  onChange: (next: EditorState) => void;
  /** The engine's refusals by shape key, shown on the shape's row. */
  errors?: Readonly<Record<string, string>>;
}

/** What a zone or mask's row says of it: its points, or what keeps it from being saved. */
export function areaState(t: Translate, problem: AreaProblem | null, points: number): string {
  if (!problem) return t('regions.ok', { count: points });
  if (problem.kind === 'drawing') return t('areas.drawing');
  if (problem.kind === 'name')
    return t(problem.message === 'empty' ? 'areas.nameEmpty' : 'areas.nameDuplicate');
  if (problem.kind === 'ground') return t('areas.groundMissing');
  return problem.message;
}

/** An app's named zones and exclusion masks: add, select (to draw or redraw), rename, delete. */
export function AreaFields({ appId, appName, editor, onChange, errors = {} }: AreaFieldsProps) {
  const t = useT();
  const id = useId();
  const zones = areaKeys(editor, appId, 'zone');
  const masks = areaKeys(editor, appId, 'mask');

  const row = (key: string, label: string, edit: string, remove: string, name?: { n: number }) => {
    const shape = editor.shapes[key];
    if (!shape) return null;
    const problem = areaProblem(editor, key);
    const error = errors[key];
    const stateId = `${id}-${key.replace(/\W/g, '-')}`;
    const bad = error !== undefined || (problem !== null && problem.kind !== 'drawing');
    return (
      <li key={key} className={key === editor.active ? 'area-row active' : 'area-row'}>
        {name ? (
          <input
            className="area-name"
            value={shape.area?.name ?? ''}
            maxLength={64}
            aria-label={t('areas.zoneName', { n: name.n })}
            aria-invalid={problem?.kind === 'name' || undefined}
            aria-describedby={stateId}
            onFocus={() => onChange({ ...editor, active: key })}
            onChange={(event) => onChange(renameZone(editor, key, event.target.value))}
          />
        ) : (
          <span className="area-label">{label}</span>
        )}
        <span className="button-row">
          <button
            type="button"
            aria-label={edit}
            aria-pressed={key === editor.active}
            onClick={() => onChange({ ...editor, active: key })}
          >
            {t('areas.edit')}
          </button>
          {name && (
            <button
              type="button"
              aria-label={t('areas.redrawZone', { name: label })}
              disabled={shape.points.length === 0}
              onClick={() => onChange(clearShape({ ...editor, active: key }))}
            >
              {t('areas.redraw')}
            </button>
          )}
          <button type="button" aria-label={remove} onClick={() => onChange(removeArea(editor, key))}>
            {t('areas.delete')}
          </button>
        </span>
        <span
          id={stateId}
          className={bad ? 'area-state field-error' : 'area-state'}
          role={error ? 'alert' : undefined}
        >
          {error ?? areaState(t, problem, shape.points.length)}
        </span>
      </li>
    );
  };

  return (
    <>
      <fieldset>
        <legend>{t('areas.zones', { app: appName })}</legend>
        <p className="hint">{t('areas.zonesHint')}</p>
        {zones.length === 0 && <p className="meta">{t('areas.none')}</p>}
        <ul className="area-list">
          {zones.map((key, index) => {
            const name = editor.shapes[key]?.area?.name || String(index + 1);
            return row(key, name, t('areas.editZone', { name }), t('areas.deleteZone', { name }), {
              n: index + 1,
            });
          })}
        </ul>
        <button
          type="button"
          onClick={() =>
            onChange(addArea(editor, appId, 'zone', nextZoneName(editor, appId, t('areas.zonePrefix'))))
          }
        >
          {t('areas.addZone')}
        </button>
      </fieldset>
      <fieldset>
        <legend>{t('areas.masks', { app: appName })}</legend>
        <p className="hint">{t('areas.masksHint')}</p>
        {masks.length === 0 && <p className="meta">{t('areas.none')}</p>}
        <ul className="area-list">
          {masks.map((key, index) =>
            row(
              key,
              t('areas.mask', { n: index + 1 }),
              t('areas.editMask', { n: index + 1 }),
              t('areas.deleteMask', { n: index + 1 }),
            ),
          )}
        </ul>
        <button type="button" onClick={() => onChange(addArea(editor, appId, 'mask'))}>
          {t('areas.addMask')}
        </button>
      </fieldset>
    </>
  );
}
