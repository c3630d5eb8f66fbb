import { useId } from 'react';
import { DEFAULT_INERTIA } from '../../../engine/contract';
import { useT } from '../store';
import type { RuleDraft } from '../validation/rule';
import type { FieldErrors } from '../validation/schema-errors';
import { errorProps, FieldError } from './FieldError';

/** The rule's inertia: hits of frames, empty for the engine's default, which the placeholders show. */
export function InertiaFields({
  value,
  errors,
  onChange,
}: {
  value: RuleDraft['inertia'];
  errors: FieldErrors;
  onChange: (value: RuleDraft['inertia']) => void;
}) {
  const t = useT();
  const id = useId();
  const field = (axis: 'hits' | 'frames', label: string, placeholder: number) => {
    const error = errors[`rule.inertia.${axis}`];
    return (
      <input
        type="number"
        inputMode="numeric"
        className="number"
        min={1}
        max={30}
        step={1}
        value={String(value[axis])}
        placeholder={String(placeholder)}
        aria-label={label}
        onChange={(event) => onChange({ ...value, [axis]: event.target.value })}
        {...errorProps(`${id}-${axis}-error`, error)}
      />
    );
  };
  return (
    <div className="field">
      <span className="label-like" id={`${id}-label`}>
        {t('rule.inertia')}
      </span>
      {/* biome-ignore lint/a11y/useSemanticElements: two number boxes read as one phrase, "3 of 5". */}
      <div className="field-row inertia-row" role="group" aria-labelledby={`${id}-label`}>
        {field('hits', t('rule.inertiaHits'), DEFAULT_INERTIA.hits)}
        <span>{t('rule.inertiaOf')}</span>
        {field('frames', t('rule.inertiaFrames'), DEFAULT_INERTIA.frames)}
      </div>
      <span className="hint">{t('rule.inertiaHint', DEFAULT_INERTIA)}</span>
      <FieldError id={`${id}-hits-error`} message={errors['rule.inertia.hits']} />
      <FieldError id={`${id}-frames-error`} message={errors['rule.inertia.frames']} />
      <FieldError id={`${id}-error`} message={errors['rule.inertia']} />
    </div>
  );
}
