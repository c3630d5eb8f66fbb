import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Router } from 'wouter';
import { useHashLocation } from 'wouter/use-hash-location';
import { App } from './App';
import { takeHandoff } from './cluster/follow';
import { TransportProvider } from './context';
import { shareSession } from './session-share';
import { currentToken, useSession } from './store';
import { ApiError, createTransport } from './transport';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // Client errors (4xx) do not get better by retrying; network hiccups and 5xx may.
      retry: (failures, error) =>
        !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failures < 2,
    },
  },
});

/** A session handed over by another node's console (cluster/follow.ts), until this node took it once. */
let handedOver = false;

const transport = createTransport({
  getToken: currentToken,
  onUnauthorized: () => {
    // A handed-over session this node refuses: the sign-in screen says why.
    useSession.getState().signOut(handedOver ? 'followed' : 'expired');
    queryClient.clear();
  },
});
useSession.setState({ mode: transport.kind });
// A new tab takes the session of an open one instead of signing in again; signing out ends all.
if (transport.kind === 'http') shareSession();
// Opened by the console of another node of the site that stopped answering: its session, if this node
// takes it (the address no longer carries it from here on).
const handoff = transport.kind === 'http' ? takeHandoff(window.location, window.history) : null;
if (handoff) {
  const { token, username, expiresAt } = handoff;
  useSession.getState().signIn(token, (expiresAt - Date.now()) / 1000, username);
  handedOver = true;
  // Once this node answered with it, a later refusal is an expiry like any other.
  transport.request('GET', '/api/cluster').then(
    () => {
      handedOver = false;
    },
    () => undefined,
  );
}

const container = document.getElementById('root');
if (!container) throw new Error('#root is missing from index.html');

createRoot(container).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <TransportProvider transport={transport}>
        <Router hook={useHashLocation}>
          <App />
        </Router>
      </TransportProvider>
    </QueryClientProvider>
  </StrictMode>,
);
