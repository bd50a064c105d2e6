import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/app';
import { ErrorBoundary } from './app/error-boundary';
import { forgetToken, storeToken, takeToken } from './auth/token-store';
import './styles.css';

const env = { location: window.location, history: window.history, storage: window.sessionStorage };
const root = document.getElementById('root');

function localStorageOrNone(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    // Blocked by the browser: there is no old local copy of the settings to move to the server.
    return undefined;
  }
}

if (root === null) throw new Error('index.html has no #root element');

createRoot(root).render(
  <StrictMode>
    <ErrorBoundary>
      <App initialToken={takeToken(env)} originStorage={localStorageOrNone()} saveToken={(token) => storeToken(env, token)} forgetToken={() => forgetToken(env)} />
    </ErrorBoundary>
  </StrictMode>,
);
