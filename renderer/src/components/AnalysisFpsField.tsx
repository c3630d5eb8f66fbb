import { useT } from '../store';
import type { FieldMessage } from '../validation/schema-errors';
import { errorProps, FieldError } from './FieldError';

interface AnalysisFpsFieldProps {
  id: string;
  value: string;
  onChange: (text: string) => void;
  error: FieldMessage | undefined;
  /** What an empty field means: the engine's setting, or the task's current rate. */
  placeholder?: string;
}

/** A video task's analysis_fps (extension): frames analysed per second, empty for the engine's setting. */
export function AnalysisFpsField({ id, value, onChange, error, placeholder }: AnalysisFpsFieldProps) {
  const t = useT();
  return (
    <div className="field">
      <label htmlFor={id}>{t('tasks.analysisFpsLabel')}</label>
      <input
        id={id}
        value={value}
        inputMode="decimal"
        size={6}
        placeholder={placeholder}
        spellCheck={false}
        onChange={(event) => onChange(event.target.value)}
        {...errorProps(`${id}-error`, error)}
      />
      <span className="hint">{t('tasks.analysisFpsHint')}</span>
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}
