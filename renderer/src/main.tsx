import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Router } from 'wouter';
import { useHashLocation } from 'wouter/use-hash-location';
import { App } from './App';
import { TransportProvider } from './context';
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

const transport = createTransport({
  getToken: currentToken,
  onUnauthorized: () => {
    useSession.getState().signOut('expired');
    queryClient.clear();
  },
});
useSession.setState({ mode: transport.kind });

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
