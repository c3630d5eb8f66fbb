import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { LanguageSwitch } from './components/LanguageSwitch';
import { translate } from './i18n';
import { Packages } from './screens/Packages';
import { SignIn } from './screens/SignIn';
import { Tasks } from './screens/Tasks';
import { type Screen, useSession, useT } from './store';

const SCREENS: ReadonlyArray<{ id: Screen; label: 'nav.packages' | 'nav.tasks' }> = [
  { id: 'packages', label: 'nav.packages' },
  { id: 'tasks', label: 'nav.tasks' },
];

export function App() {
  const t = useT();
  const queryClient = useQueryClient();
  const mode = useSession((state) => state.mode);
  const session = useSession((state) => state.session);
  const screen = useSession((state) => state.screen);
  const language = useSession((state) => state.language);
  const setScreen = useSession((state) => state.setScreen);
  const signOut = useSession((state) => state.signOut);

  useEffect(() => {
    document.documentElement.lang = language;
    document.title = translate(language, 'app.title');
  }, [language]);

  if (mode === 'http' && !session) return <SignIn />;

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        {t('app.skipToContent')}
      </a>
      <header className="app-header">
        <span className="brand">{t('app.title')}</span>
        <nav aria-label={t('nav.label')}>
          <ul>
            {SCREENS.map((item) => (
              <li key={item.id}>
                <button
                  type="button"
                  className="nav-item"
                  aria-current={screen === item.id ? 'page' : undefined}
                  onClick={() => setScreen(item.id)}
                >
                  {t(item.label)}
                </button>
              </li>
            ))}
          </ul>
        </nav>
        <div className="header-tools">
          <LanguageSwitch />
          {mode === 'http' && session && (
            <>
              <span className="meta">{t('session.signedInAs', { user: session.username })}</span>
              <button
                type="button"
                onClick={() => {
                  signOut();
                  queryClient.clear();
                }}
              >
                {t('session.signOut')}
              </button>
            </>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {screen === 'packages' ? <Packages /> : <Tasks />}
      </main>
    </div>
  );
}
