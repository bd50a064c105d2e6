import type { RejectionReason } from '@airlock/client';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { codeFromAddress, exchangeCodeHere, readPastedAccess, tokenFromAddress } from './token-store';

/**
 * "missing": the page has no token; "link": the start-up link's one-time code gave none (used already, expired); "refused": the server refused it; "unproven": the server could not prove it is
 * Airlock; "moved": the server was started again on a new address, which this page is not on.
 */
export type AuthReason = 'missing' | 'link' | 'moved' | RejectionReason;

export interface AuthScreenProps {
  reason: AuthReason;
  /** What the client said about the refusal, or why it did not trust the server. */
  detail?: string;
  /** Uses a token pasted by the person (kept in memory only) and starts over. */
  onToken: (token: string) => void;
}

const HEADINGS: Record<AuthReason, string> = {
  missing: 'Open Airlock from its start-up link',
  link: 'This start-up link cannot open Airlock',
  refused: 'This link is no longer valid',
  moved: 'Airlock was restarted on a new address',
  // The client cannot tell a wrong token from a program that is not Airlock: it says only what it knows.
  unproven: 'Could not confirm this is Airlock',
};

const EXPLANATIONS: Record<AuthReason, string> = {
  missing: 'This page was opened without its access token, so it cannot talk to the Airlock server.',
  link: 'Each link Airlock prints opens it once, within 10 minutes: the link holds a one-time code, never the token itself.',
  refused:
    'The Airlock server did not accept this page’s access token. The server makes a new token each time it starts (unless AIRLOCK_TOKEN sets one).',
  unproven: 'This page did not connect, and this tab no longer keeps anything to reconnect with.',
  // Each start has its own airlock-<random>.localhost name: a token kept the same (AIRLOCK_TOKEN) does not help.
  moved:
    'The Airlock server was restarted and is now at a new address, so this tab cannot reach it any more. Open the new link it printed when it started: your chats, and any call still waiting for you, are there.',
};

/** Shown instead of the chat when the page cannot prove it may talk to the server: never a blank page. */
export function AuthScreen({ reason, detail, onToken }: AuthScreenProps) {
  const [address, setAddress] = useState('');
  const [invalid, setInvalid] = useState(false);
  const [linkProblem, setLinkProblem] = useState<string>();
  const latest = useRef(onToken);
  latest.current = onToken;
  const exchange = (code: string) => {
    void exchangeCodeHere(code, window.location.origin).then((result) => {
      if (result.kind === 'token') latest.current(result.token);
      else setLinkProblem(result.message);
    });
  };
  const latestExchange = useRef(exchange);
  latestExchange.current = exchange;
  // A start-up link pasted into the address bar of this tab changes only its fragment: no reload comes.
  useEffect(() => {
    const onHashChange = () => {
      const token = tokenFromAddress(window.location.hash);
      const code = codeFromAddress(window.location.hash);
      if (token === null && code === null) return;
      window.history.replaceState(window.history.state, '', `${window.location.pathname}${window.location.search}`);
      if (token !== null) latest.current(token);
      else if (code !== null) latestExchange.current(code);
    };
    window.addEventListener('hashchange', onHashChange);
    return () => window.removeEventListener('hashchange', onHashChange);
  }, []);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const access = readPastedAccess(address, window.location);
    if (access === null) setInvalid(true);
    // The run's own origin takes the token from the fragment, which never reaches a server.
    else if (access.kind === 'open') window.location.assign(access.link);
    else if (access.kind === 'exchange') exchange(access.code);
    else onToken(access.token);
  };
  return (
    <main className="auth-screen">
      <div className="auth-card">
        <h1>{HEADINGS[reason]}</h1>
        <p>
          {EXPLANATIONS[reason]}
          {/* The client's own words, not the server's: it says why it did not trust whatever answered. */}
          {detail !== undefined && (reason === 'unproven' || reason === 'link') && <span> {`${detail.charAt(0).toUpperCase()}${detail.slice(1)}`}.</span>}
          {detail !== undefined && (reason === 'refused' || reason === 'missing') && <span className="muted"> The server said: “{detail}”.</span>}
        </p>
        <p>When the server starts it prints one line with the address to open, like this:</p>
        <pre className="code-block">
          <code>Airlock is running at http://airlock-….localhost:7700/#code=…</code>
        </pre>
        <p>
          Open that exact address in this browser (copy the whole line, including everything after <code>#code=</code>); it works once,
          within 10 minutes. If the server is no longer running, start it again with <code>npm start</code> and use the new address. A server given its token in a file
          (<code>--token-file</code>) leaves it out of that line: paste the token from the file below.
        </p>
        {/*
          Also when whatever answers could not prove it is Airlock: a mistyped token looks the same to the page, and a
          token pasted here is sent only to a server that first proves it knows it.
        */}
        <form onSubmit={submit} className="auth-form">
          <label>
            <span>Or paste the address, or the token alone, here</span>
            <input
              type="text"
              value={address}
              aria-invalid={invalid}
              onChange={(event) => {
                setAddress(event.target.value);
                setInvalid(false);
              }}
              placeholder="http://airlock-….localhost:7700/#code=…"
            />
          </label>
          <button type="submit" className="btn btn-primary">
            Connect
          </button>
          {invalid && (
            <p className="problem" role="alert">
              That does not look like an Airlock address: it needs the part after <code>#code=</code> (or <code>#token=</code>).
            </p>
          )}
          {linkProblem !== undefined && (
            <p className="problem" role="alert">
              {`${linkProblem.charAt(0).toUpperCase()}${linkProblem.slice(1)}.`}
            </p>
          )}
        </form>
      </div>
    </main>
  );
}
