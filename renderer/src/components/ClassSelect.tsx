import type { SelectHTMLAttributes } from 'react';

/**
 * A class picked from the model's labels, a label's index being its class_id; a value that is not
 * one of them stays listed, so what is stored is shown as it is. `emptyText` offers '' as a choice
 * (the engine's default).
 */
export function ClassSelect({
  value,
  onChange,
  labels,
  emptyText,
  ...rest
}: {
  value: string;
  onChange: (value: string) => void;
  labels: readonly string[];
  emptyText?: string;
} & Omit<SelectHTMLAttributes<HTMLSelectElement>, 'value' | 'onChange'>) {
  const known =
    labels.some((_, index) => String(index) === value) || (emptyText !== undefined && value === '');
  return (
    <select value={value} onChange={(event) => onChange(event.target.value)} {...rest}>
      {emptyText !== undefined && <option value="">{emptyText}</option>}
      {!known && <option value={value}>{value}</option>}
      {labels.map((label, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a label is known by its index (its class_id).
        <option key={index} value={String(index)}>
          {index} · {label}
        </option>
      ))}
    </select>
  );
}
