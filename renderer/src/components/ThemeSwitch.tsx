import { useId } from 'react';
import { THEMES, type Theme, useSession, useT } from '../store';

export function ThemeSwitch() {
  const t = useT();
  const id = useId();
  const theme = useSession((state) => state.theme);
  const setTheme = useSession((state) => state.setTheme);
  return (
    <div className="language-switch">
      <label htmlFor={id}>{t('theme.label')}</label>
      <select id={id} value={theme} onChange={(event) => setTheme(event.target.value as Theme)}>
        {THEMES.map((option) => (
          <option key={option} value={option}>
            {t(`theme.${option}`)}
          </option>
        ))}
      </select>
    </div>
  );
}
