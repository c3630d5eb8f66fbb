import { useT } from '../store';

/** A state in words, with what the engine said folded away beside it (details on demand). */
export function StateDetail({ text, detail }: { text: string; detail: string | null }) {
  const t = useT();
  return (
    <>
      {text}
      {detail && (
        <details className="state-detail">
          <summary>{t('health.why')}</summary>
          <code>{detail}</code>
        </details>
      )}
    </>
  );
}
