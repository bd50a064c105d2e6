import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/app';
import { ErrorBoundary } from './app/error-boundary';
import { exchangeCodeHere, forgetTabCredential, keepTabCredential, takeAccess, takeLinkCode, type PageAccess } from './auth/token-store';
import './styles.css';
import { answerNotificationClicks } from './waiting/notification-clicks';

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
// From the start, whatever the page shows: a click on a notification is answered even from the sign-in screen.
if ('serviceWorker' in navigator) answerNotificationClicks(navigator.serviceWorker);

function render(initialAccess: PageAccess | null, linkProblem?: string): void {
  createRoot(root!).render(
    <StrictMode>
      <ErrorBoundary>
        <App
          initialAccess={initialAccess}
          {...(linkProblem === undefined ? {} : { linkProblem })}
          originStorage={localStorageOrNone()}
          keepTabCredential={(credential) => keepTabCredential(env, credential)}
          forgetTabCredential={() => forgetTabCredential(env)}
        />
      </ErrorBoundary>
    </StrictMode>,
  );
}

// The start-up link carries a one-time code, not the token: the browser's history keeps the link, which is
// worthless once exchanged here. The token it gives stays in memory.
const code = takeLinkCode(env);
if (code === null) render(takeAccess(env));
else {
  void exchangeCodeHere(code, window.location.origin).then((exchange) => {
    // A tab that can connect already goes on.
    const access = exchange.kind === 'token' ? { kind: 'token' as const, token: exchange.token } : takeAccess(env);
    render(access, exchange.kind === 'problem' && access === null ? exchange.message : undefined);
  });
}
