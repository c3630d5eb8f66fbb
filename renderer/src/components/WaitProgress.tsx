import { useState } from 'react';
import { useNow } from '../hooks/useNow';
import { useT } from '../store';

/**
 * A wait on the engine that the operator can see and stop: what it is trying (announced once), the
 * seconds since it began (shown, not announced every second), and a button that stops waiting.
 */
export function WaitProgress({ what, onCancel }: { what: string; onCancel: () => void }) {
  const t = useT();
  const [since] = useState(() => Date.now());
  const seconds = Math.floor((useNow(1_000) - since) / 1_000);
  return (
    <div className="wait-progress">
      <span role="status">{what}</span>
      <span className="meta" aria-hidden="true">
        {t('wait.elapsed', { seconds })}
      </span>
      <button type="button" onClick={onCancel}>
        {t('wait.stop')}
      </button>
    </div>
  );
}
