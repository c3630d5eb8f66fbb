import type { ReactNode } from 'react';
import type { ZapkApp } from '../api';
import { appColor } from '../colors';
import { useNames } from '../names/useNames';

/** An application to pick for a task: checkbox, its colour, name and id, then any remark. */
export function AppCheckbox(props: {
  app: ZapkApp;
  selected: readonly string[];
  onChange(next: string[]): void;
  disabled?: boolean;
  children?: ReactNode;
}) {
  const { app, selected, disabled = false } = props;
  const names = useNames();
  return (
    <label className={disabled ? 'disabled' : ''}>
      <input
        type="checkbox"
        checked={selected.includes(app.app_id)}
        disabled={disabled}
        onChange={(event) =>
          props.onChange(
            event.target.checked ? [...selected, app.app_id] : selected.filter((id) => id !== app.app_id),
          )
        }
      />
      <span className="swatch" style={{ background: appColor(app.app_id, app.rule) }} aria-hidden="true" />
      {names.app(app.app_id)} <code>{app.app_id}</code>
      {props.children}
    </label>
  );
}
