import { useT } from '../store';
import type { FieldMessage } from '../validation/schema-errors';

/** A field's problem, announced and tied to its input through aria-describedby (id). */
export function FieldError({ id, message }: { id: string; message: FieldMessage | undefined }) {
  const t = useT();
  if (!message) return null;
  return (
    <span id={id} className="field-error" role="alert">
      {message.text !== undefined && message.key === 'validation.invalid'
        ? message.text
        : t(message.key, message.params)}
    </span>
  );
}

/** Props that tie an input to its error: aria-invalid and aria-describedby. */
export function errorProps(id: string, message: FieldMessage | undefined) {
  return message ? { 'aria-invalid': true as const, 'aria-describedby': id } : {};
}
