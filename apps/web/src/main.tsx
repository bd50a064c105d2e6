import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/app';
import { ErrorBoundary } from './app/error-boundary';
import { storeToken, takeToken } from './auth/token-store';
import { SettingsStore } from './settings/settings-store';
import './styles.css';

const env = { location: window.location, history: window.history, storage: window.sessionStorage };
const root = document.getElementById('root');
if (root === null) throw new Error('index.html has no #root element');

createRoot(root).render(
  <StrictMode>
    <ErrorBoundary>
      <App initialToken={takeToken(env)} settingsStore={new SettingsStore(window.localStorage)} saveToken={(token) => storeToken(env, token)} />
    </ErrorBoundary>
  </StrictMode>,
);
