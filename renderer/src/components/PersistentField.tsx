import { useId } from 'react';
import { useT } from '../store';

interface PersistentFieldProps {
  checked: boolean;
  onChange: (persistent: boolean) => void;
}

/** A video task's persistent (extension): keep the camera, retrying its stream, whatever it does. */
export function PersistentField({ checked, onChange }: PersistentFieldProps) {
  const t = useT();
  const hintId = useId();
  return (
    <div className="field">
      <label className="switch">
        <input
          type="checkbox"
          checked={checked}
          aria-describedby={hintId}
          onChange={(event) => onChange(event.target.checked)}
        />
        {t('tasks.persistentLabel')}
      </label>
      <span className="hint" id={hintId}>
        {t('tasks.persistentHint')}
      </span>
    </div>
  );
}
