import { useId } from 'react';
import type { Osd } from '../api';
import type { MessageKey } from '../i18n';
import { useT } from '../store';
import type { FieldErrors } from '../validation/schema-errors';
import { errorProps, FieldError } from './FieldError';

const SWITCHES = ['display_name', 'display_box', 'display_track', 'display_polygon'] as const;

interface OsdFieldsProps {
  osd: Required<Osd>;
  onChange: (osd: Required<Osd>) => void;
  errors: FieldErrors;
  /** Field paths are prefixed with this ("osd"). */
  path: string;
  /** display_polygon is set at start only (4.7 refuses it). */
  withPolygonSwitch: boolean;
}

/** The osd switches and sizes of a task (2.8), as at start or in an update. */
export function OsdFields({ osd, onChange, errors, path, withPolygonSwitch }: OsdFieldsProps) {
  const t = useT();
  const fontId = useId();
  const borderId = useId();
  const fontError = errors[`${path}.font_size`];
  const borderError = errors[`${path}.border_size`];
  return (
    <fieldset>
      <legend>{t('osd.title')}</legend>
      <div className="switches">
        {SWITCHES.filter((name) => withPolygonSwitch || name !== 'display_polygon').map((name) => (
          <label key={name} className="switch">
            <input
              type="checkbox"
              checked={osd[name]}
              onChange={(event) => onChange({ ...osd, [name]: event.target.checked })}
            />
            {t(`osd.${name}` as MessageKey)}
          </label>
        ))}
      </div>
      <div className="field-grid">
        <div className="field">
          <label htmlFor={fontId}>{t('osd.font_size')}</label>
          <input
            id={fontId}
            type="number"
            min={6}
            max={128}
            step={1}
            className="number"
            value={String(osd.font_size)}
            onChange={(event) => onChange({ ...osd, font_size: Number(event.target.value) })}
            {...errorProps(`${fontId}-error`, fontError)}
          />
          <FieldError id={`${fontId}-error`} message={fontError} />
        </div>
        <div className="field">
          <label htmlFor={borderId}>{t('osd.border_size')}</label>
          <input
            id={borderId}
            type="number"
            min={1}
            max={32}
            step={1}
            className="number"
            value={String(osd.border_size)}
            onChange={(event) => onChange({ ...osd, border_size: Number(event.target.value) })}
            {...errorProps(`${borderId}-error`, borderError)}
          />
          <FieldError id={`${borderId}-error`} message={borderError} />
        </div>
      </div>
    </fieldset>
  );
}
