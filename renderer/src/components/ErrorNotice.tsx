import { refusalOf } from '../refusals/refusal';
import { useT } from '../store';

/**
 * A failed request in plain words, announced to assistive technology: what happened and what to
 * check, with the engine's own text folded away for support. `hideMessage` when the message already
 * stands at the field the refusal concerns.
 */
export function ErrorNotice({ error, hideMessage = false }: { error: unknown; hideMessage?: boolean }) {
  const t = useT();
  const { message, hint, raw } = refusalOf(error);
  return (
    <div className="notice notice-error" role="alert">
      {!hideMessage && <p className="refusal-message">{t(message)}</p>}
      <p className="refusal-hint">{t(hint)}</p>
      {raw && (
        <details className="refusal-details">
          <summary>{t('refusal.details')}</summary>
          <code>{raw}</code>
        </details>
      )}
    </div>
  );
}
