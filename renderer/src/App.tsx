import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { LanguageSwitch } from './components/LanguageSwitch';
import { ThemeSwitch } from './components/ThemeSwitch';
import { useTransport } from './context';
import { useFeed, useFeedSubscription } from './feed/store';
import { type MessageKey, translate } from './i18n';
import { useOptimizationNav } from './optimization/nav';
import { Events } from './screens/Events';
import { Images } from './screens/Images';
import { LiveView } from './screens/LiveView';
import { Optimization } from './screens/Optimization';
import { Packages } from './screens/Packages';
import { Settings } from './screens/Settings';
import { SignIn } from './screens/SignIn';
import { Tasks } from './screens/Tasks';
import { type Screen, useSession, useT } from './store';

/** The session's screens, and the optimization screen whose state lives in optimization/nav.ts. */
type View = Screen | 'optimization';

const SCREENS: ReadonlyArray<{ id: View; label: MessageKey }> = [
  { id: 'packages', label: 'nav.packages' },
  { id: 'tasks', label: 'nav.tasks' },
  { id: 'live', label: 'nav.live' },
  { id: 'optimization', label: 'nav.optimization' },
  { id: 'events', label: 'nav.events' },
  { id: 'images', label: 'nav.images' },
  { id: 'settings', label: 'nav.settings' },
];

function CurrentScreen({ screen }: { screen: View }) {
  switch (screen) {
    case 'packages':
      return <Packages />;
    case 'tasks':
      return <Tasks />;
    case 'live':
      return <LiveView />;
    case 'optimization':
      return <Optimization />;
    case 'events':
      return <Events />;
    case 'images':
      return <Images />;
    case 'settings':
      return <Settings />;
  }
}

export function App() {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const mode = useSession((state) => state.mode);
  const session = useSession((state) => state.session);
  const screen = useSession((state) => state.screen);
  const language = useSession((state) => state.language);
  const theme = useSession((state) => state.theme);
  const setScreen = useSession((state) => state.setScreen);
  const optimizing = useOptimizationNav((state) => state.active);
  const showOptimization = useOptimizationNav((state) => state.show);
  const leaveOptimization = useOptimizationNav((state) => state.leave);
  const view: View = optimizing ? 'optimization' : screen;
  const signOut = useSession((state) => state.signOut);
  const connected = useFeed((state) => state.connected);
  const signedIn = mode === 'ipc' || session !== null;
  useFeedSubscription(transport, signedIn);

  useEffect(() => {
    document.documentElement.lang = language;
    document.title = translate(language, 'app.title');
  }, [language]);

  useEffect(() => {
    if (theme === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
  }, [theme]);

  if (!signedIn) return <SignIn />;

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        {t('app.skipToContent')}
      </a>
      <header className="app-header">
        <span className="brand">{t('app.title')}</span>
        <nav aria-label={t('nav.label')}>
          <ul className="nav-list">
            {SCREENS.map((item) => (
              <li key={item.id}>
                <button
                  type="button"
                  className="nav-item"
                  aria-current={view === item.id ? 'page' : undefined}
                  onClick={() => {
                    if (item.id === 'optimization') return showOptimization();
                    leaveOptimization();
                    setScreen(item.id);
                  }}
                >
                  {t(item.label)}
                </button>
              </li>
            ))}
          </ul>
        </nav>
        <div className="header-tools">
          <span
            className={connected ? 'feed-dot feed-on' : 'feed-dot'}
            role="img"
            aria-label={connected ? t('events.connected') : t('events.disconnected')}
            title={connected ? t('events.connected') : t('events.disconnected')}
          />
          <ThemeSwitch />
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
        <CurrentScreen screen={view} />
      </main>
    </div>
  );
}
