import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { FollowNotice } from './cluster/FollowNotice';
import { AccountMenu } from './components/AccountMenu';
import { InitialPasswordNotice } from './components/InitialPasswordNotice';
import { useTransport } from './context';
import { useFeed, useFeedSubscription } from './feed/store';
import { type MessageKey, translate } from './i18n';
import { param, paths, type Screen, screenOf, seqParam } from './routes';
import { Alarms } from './screens/Alarms';
import { Events } from './screens/Events';
import { Images } from './screens/Images';
import { LiveView } from './screens/LiveView';
import { Optimization } from './screens/Optimization';
import { Packages } from './screens/Packages';
import { Settings } from './screens/Settings';
import { SignIn } from './screens/SignIn';
import { System } from './screens/System';
import { Tasks } from './screens/Tasks';
import { Wall } from './screens/Wall';
import { signOutEverywhere, useSession, useT } from './store';
import { headerPath, useVisited } from './visited';

/** The screens in the order an operator needs them: watching first, setting up last. */
const SCREENS: ReadonlyArray<{ id: Screen; label: MessageKey }> = [
  { id: 'wall', label: 'nav.wall' },
  { id: 'live', label: 'nav.live' },
  { id: 'alarms', label: 'nav.alarms' },
  { id: 'events', label: 'nav.events' },
  { id: 'tasks', label: 'nav.tasks' },
  { id: 'images', label: 'nav.images' },
  { id: 'optimization', label: 'nav.optimization' },
  { id: 'packages', label: 'nav.packages' },
  { id: 'system', label: 'nav.system' },
  { id: 'settings', label: 'nav.settings' },
];

/** Each screen at its address; what a path names (a task, a run, an event) is handed to the screen. */
function Screens() {
  return (
    <Switch>
      <Route path="/alarms">
        <Alarms />
      </Route>
      <Route path="/wall">
        <Wall />
      </Route>
      <Route path="/packages">
        <Packages />
      </Route>
      <Route path="/tasks/:taskId?">{(params) => <Tasks taskId={param(params.taskId)} />}</Route>
      <Route path="/live/:taskId?">{(params) => <LiveView taskId={param(params.taskId)} />}</Route>
      <Route path="/optimization/:taskId?/:runId?">
        {(params) => <Optimization taskId={param(params.taskId)} runId={param(params.runId)} />}
      </Route>
      <Route path="/events/:taskId?/:seq?/:ruleId?">
        {(params) => (
          <Events
            open={
              params.taskId && seqParam(params.seq) !== null
                ? {
                    taskId: param(params.taskId) as string,
                    seq: seqParam(params.seq) as number,
                    ruleId: param(params.ruleId),
                  }
                : null
            }
          />
        )}
      </Route>
      <Route path="/images/:taskId?">{(params) => <Images taskId={param(params.taskId)} />}</Route>
      <Route path="/system">
        <System />
      </Route>
      <Route path="/settings">
        <Settings />
      </Route>
      <Route>
        <Redirect to={paths.packages} replace />
      </Route>
    </Switch>
  );
}

export function App() {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const mode = useSession((state) => state.mode);
  const session = useSession((state) => state.session);
  const [location] = useLocation();
  const screen = screenOf(location);
  const language = useSession((state) => state.language);
  const theme = useSession((state) => state.theme);
  const visited = useVisited((state) => state.last);
  const visit = useVisited((state) => state.visit);
  const connected = useFeed((state) => state.connected);
  const signedIn = mode === 'ipc' || session !== null;
  useFeedSubscription(transport, signedIn);

  useEffect(() => visit(location), [visit, location]);

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
        {/* The page's one h1 (a screen reader's heading list starts here); each screen's title is an h2. */}
        <h1 className="brand">{t('app.title')}</h1>
        <nav aria-label={t('nav.label')}>
          <ul className="nav-list">
            {SCREENS.map((item) => (
              <li key={item.id}>
                <Link
                  href={headerPath(item.id, visited)}
                  className="nav-item"
                  aria-current={screen === item.id ? 'page' : undefined}
                >
                  {t(item.label)}
                </Link>
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
          <AccountMenu
            onSignOut={() => {
              void signOutEverywhere(transport)
                .catch(() => undefined)
                .then(() => queryClient.clear());
            }}
          />
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {mode === 'http' && <FollowNotice />}
        {mode === 'http' && <InitialPasswordNotice />}
        <Screens />
      </main>
    </div>
  );
}
