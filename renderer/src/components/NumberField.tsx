import { useId } from 'react';
import type { NumberInput } from '../validation/rule';
import type { FieldErrors } from '../validation/schema-errors';
import { errorProps, FieldError } from './FieldError';

interface NumberFieldProps {
  label: string;
  path: string;
  value: NumberInput;
  onChange: (value: NumberInput) => void;
  errors: FieldErrors;
  min?: number;
  max?: number;
  step?: number;
  /** A slider beside the number box, over this range. */
  slider?: { min: number; max: number; step: number };
  hint?: string;
  /** What the engine takes while the box is empty. */
  placeholder?: string;
}

/** A number with its label, optional slider, hint and error; the text is kept while it is not a number. */
export function NumberField({
  label,
  path,
  value,
  onChange,
  errors,
  min,
  max,
  step,
  slider,
  hint,
  placeholder,
}: NumberFieldProps) {
  const id = useId();
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const error = errors[path];
  const numeric = typeof value === 'number' ? value : Number(value);
  const described = [hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="field-row">
        {slider && (
          <input
            type="range"
            aria-label={label}
            min={slider.min}
            max={slider.max}
            step={slider.step}
            value={
              Number.isFinite(numeric) ? Math.min(slider.max, Math.max(slider.min, numeric)) : slider.min
            }
            onChange={(event) => onChange(Number(event.target.value))}
          />
        )}
        <input
          id={id}
          type="number"
          inputMode="decimal"
          className="number"
          min={min}
          max={max}
          step={step ?? 'any'}
          value={String(value)}
          placeholder={placeholder}
          onChange={(event) => onChange(event.target.value)}
          {...errorProps(errorId, error)}
          aria-describedby={described}
        />
      </div>
      {hint && (
        <span id={hintId} className="hint">
          {hint}
        </span>
      )}
      <FieldError id={errorId} message={error} />
    </div>
  );
}
