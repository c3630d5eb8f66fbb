import { useId } from 'react';
import type { MessageKey } from '../i18n';
import { useNames } from '../names/useNames';
import { useT } from '../store';
import type { OverrideDraft, OverrideField } from '../tasks/rule-overrides';
import type { FieldErrors } from '../validation/schema-errors';
import { FieldError } from './FieldError';

interface RuleOverrideFieldsProps {
  appId: string;
  fields: readonly OverrideField[];
  draft: OverrideDraft;
  onChange: (draft: OverrideDraft) => void;
  /** Problems by field key, and under "" those of the override as a whole. */
  errors: FieldErrors;
}

/**
 * "This camera's rule" for one app: each tunable field with the app's value as its placeholder; a
 * field given a value is marked as this camera's and can be reset to the app's.
 */
export function RuleOverrideFields({ appId, fields, draft, onChange, errors }: RuleOverrideFieldsProps) {
  const t = useT();
  const names = useNames();
  const id = useId();
  const set = (key: string, text: string) => {
    const { [key]: _previous, ...rest } = draft;
    onChange(text === '' ? rest : { ...rest, [key]: text });
  };
  return (
    <fieldset className="rule-overrides">
      <legend>{t('overrides.legend', { app: names.app(appId) })}</legend>
      <p className="hint">{t('overrides.hint')}</p>
      <FieldError id={`${id}-all`} message={errors['']} />
      <div className="override-grid">
        {fields.map((field, i) => {
          const label = t(`overrides.field.${field.field}` as MessageKey, { name: field.className ?? '' });
          const value = draft[field.key] ?? '';
          const overridden = value !== '';
          const inputId = `${id}-${i}`;
          const error = errors[field.key];
          return (
            <div key={field.key} className={overridden ? 'field override-set' : 'field'}>
              <label htmlFor={inputId}>{label}</label>
              <div className="field-row">
                <input
                  id={inputId}
                  inputMode="decimal"
                  value={value}
                  placeholder={String(field.appValue)}
                  onChange={(event) => set(field.key, event.target.value)}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={error ? `${inputId}-error` : undefined}
                />
                {overridden && <span className="badge override-badge">{t('overrides.overridden')}</span>}
                {overridden && (
                  <button
                    type="button"
                    aria-label={t('overrides.resetLabel', { field: label, value: String(field.appValue) })}
                    onClick={() => set(field.key, '')}
                  >
                    {t('overrides.reset')}
                  </button>
                )}
              </div>
              <FieldError id={`${inputId}-error`} message={error} />
            </div>
          );
        })}
      </div>
    </fieldset>
  );
}
