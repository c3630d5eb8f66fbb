import { useId } from 'react';
import { isLanguage, LANGUAGES } from '../i18n';
import { useSession, useT } from '../store';

export function LanguageSwitch() {
  const t = useT();
  const id = useId();
  const language = useSession((state) => state.language);
  const setLanguage = useSession((state) => state.setLanguage);
  return (
    <div className="language-switch">
      <label htmlFor={id}>{t('language.label')}</label>
      <select
        id={id}
        value={language}
        onChange={(event) => {
          if (isLanguage(event.target.value)) setLanguage(event.target.value);
        }}
      >
        {LANGUAGES.map((option) => (
          <option key={option.id} value={option.id} lang={option.id}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}
