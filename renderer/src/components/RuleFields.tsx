import { useId } from 'react';
import { useT } from '../store';
import type { FieldErrors } from '../validation/schema-errors';
import { ClassSelect } from './ClassSelect';
import { errorProps, FieldError } from './FieldError';

/** A text field of the rule, or a pick from the model's labels when it names a class. */
export function TextField(props: {
  label: string;
  path: string;
  value: string;
  onChange: (value: string) => void;
  errors: FieldErrors;
  type?: 'text' | 'color';
  /** The model's labels: the value is then picked from them (a label's index); a value outside stays listed. */
  labels?: readonly string[];
}) {
  const id = useId();
  const errorId = `${id}-error`;
  const error = props.errors[props.path];
  const { labels } = props;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {labels && labels.length > 0 ? (
        <ClassSelect
          id={id}
          value={props.value}
          onChange={props.onChange}
          labels={labels}
          {...errorProps(errorId, error)}
        />
      ) : (
        <input
          id={id}
          type={props.type ?? 'text'}
          value={props.value}
          onChange={(event) => props.onChange(event.target.value)}
          {...errorProps(errorId, error)}
        />
      )}
      <FieldError id={errorId} message={error} />
    </div>
  );
}

/** A colour with a picker and its #RRGGBB text, both labelled. */
export function ColorField(props: {
  label: string;
  path: string;
  value: string;
  onChange: (value: string) => void;
  errors: FieldErrors;
}) {
  const t = useT();
  const id = useId();
  const errorId = `${id}-error`;
  const error = props.errors[props.path];
  const valid = /^#[0-9a-f]{6}$/i.test(props.value);
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <div className="field-row">
        <input
          type="color"
          aria-label={t('rule.colorPicker', { field: props.label })}
          value={valid ? props.value.toLowerCase() : '#000000'}
          onChange={(event) => props.onChange(event.target.value)}
        />
        <input
          id={id}
          className="hex"
          value={props.value}
          spellCheck={false}
          onChange={(event) => props.onChange(event.target.value)}
          {...errorProps(errorId, error)}
        />
      </div>
      <FieldError id={errorId} message={error} />
    </div>
  );
}
