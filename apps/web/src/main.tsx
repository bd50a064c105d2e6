import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/app';
import { ErrorBoundary } from './app/error-boundary';
import { exchangeCodeHere, forgetToken, storeToken, takeLinkCode, takeToken } from './auth/token-store';
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

function render(initialToken: string | null, linkProblem?: string): void {
  createRoot(root!).render(
    <StrictMode>
      <ErrorBoundary>
        <App
          initialToken={initialToken}
          {...(linkProblem === undefined ? {} : { linkProblem })}
          originStorage={localStorageOrNone()}
          saveToken={(token) => storeToken(env, token)}
          forgetToken={() => forgetToken(env)}
        />
      </ErrorBoundary>
    </StrictMode>,
  );
}

// The start-up link carries a one-time code, not the token: the browser's history keeps the link, which is
// worthless once exchanged here.
const code = takeLinkCode(env);
if (code === null) render(takeToken(env));
else {
  void exchangeCodeHere(code, window.location.origin).then((exchange) => {
    if (exchange.kind === 'token') storeToken(env, exchange.token);
    // A tab that holds a token already goes on with it.
    const token = exchange.kind === 'token' ? exchange.token : takeToken(env);
    render(token, exchange.kind === 'problem' && token === null ? exchange.message : undefined);
  });
}
