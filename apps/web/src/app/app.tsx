import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { AuthScreen } from '../auth/auth-screen';
import type { PageAccess } from '../auth/token-store';
import { connectApi, defaultSocketUrl, type ApiConnection } from '../connection/connect-api';
import { trpc } from '../lib/trpc';
import { NotificationChoice } from '../settings/notification-choice';
import { SettingsStore, settingsApi } from '../settings/settings-store';
import { ChatApp } from './chat-app';

export interface AppProps {
  /** What the page connects with (the token in memory, or the tab credential kept over a reload), or null without either. */
  initialAccess: PageAccess | null;
  /** Why the start-up link the page was opened with gave no token (used already, expired…). Default none. */
  linkProblem?: string;
  /**
   * This origin's localStorage, undefined when blocked: this browser's choice of notifications, and where older
   * versions kept the tool settings (moved to the server once).
   */
  originStorage: Storage | undefined;
  /** Keeps each per-tab credential the server gives (sessionStorage in the browser): what a reload connects with. */
  keepTabCredential: (credential: string) => void;
  /**
   * Drops the kept tab credential. Called when the connection is refused or whatever answers cannot prove it is
   * Airlock: the credential is spent or worthless, and one kept on an origin another program may now serve pages on
   * would be read by its page at the next reload.
   */
  forgetTabCredential: () => void;
}

export function App({ initialAccess, linkProblem, originStorage, keepTabCredential, forgetTabCredential }: AppProps) {
  const [access, setAccess] = useState(initialAccess);
  const adopt = (token: string) => setAccess({ kind: 'token', token });
  if (access === null) return linkProblem === undefined ? <AuthScreen reason="missing" onToken={adopt} /> : <AuthScreen reason="link" detail={linkProblem} onToken={adopt} />;
  return (
    <ConnectedApp
      key={access.kind === 'token' ? access.token : access.credential}
      access={access}
      originStorage={originStorage}
      onToken={adopt}
      keepTabCredential={keepTabCredential}
      onRefused={forgetTabCredential}
    />
  );
}

interface ConnectedAppProps {
  access: PageAccess;
  originStorage: Storage | undefined;
  onToken: (token: string) => void;
  keepTabCredential: (credential: string) => void;
  onRefused: () => void;
}

function ConnectedApp({ access, originStorage, onToken, keepTabCredential, onRefused }: ConnectedAppProps) {
  const [api, setApi] = useState<{ connection: ApiConnection; queryClient: QueryClient; settingsStore: SettingsStore; notificationChoice: NotificationChoice } | null>(
    null,
  );
  const keep = useRef(keepTabCredential);
  keep.current = keepTabCredential;
  useEffect(() => {
    const connection = connectApi({
      url: defaultSocketUrl(window.location),
      token: access.kind === 'token' ? access.token : '',
      tab: { ...(access.kind === 'tab' ? { credential: access.credential } : {}), keep: (credential) => keep.current(credential) },
    });
    const queryClient = new QueryClient({ defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: false, staleTime: 1000 } } });
    // Before the settings store, which removes the old local settings the choice may take its default from.
    const notificationChoice = new NotificationChoice(originStorage);
    notificationChoice.start();
    const settingsStore = new SettingsStore(settingsApi(connection.client), originStorage);
    settingsStore.start();
    setApi({ connection, queryClient, settingsStore, notificationChoice });
    return () => {
      notificationChoice.close();
      settingsStore.close();
      void connection.close();
      queryClient.clear();
    };
  }, [access, originStorage]);
  if (api === null) return null;
  return <Connected connection={api.connection} queryClient={api.queryClient} settingsStore={api.settingsStore} notificationChoice={api.notificationChoice} onToken={onToken} onRefused={onRefused} />;
}

function Connected({
  connection,
  queryClient,
  settingsStore,
  notificationChoice,
  onToken,
  onRefused,
}: {
  connection: ApiConnection;
  queryClient: QueryClient;
  settingsStore: SettingsStore;
  notificationChoice: NotificationChoice;
  onToken: (token: string) => void;
  onRefused: () => void;
}) {
  const status = useSyncExternalStore(connection.status.subscribe, connection.status.getSnapshot);
  const previous = useRef(status.state);
  useEffect(() => {
    // Whatever changed while the socket was down (a run ended, a grant was revoked) is read again.
    if (status.state === 'connected' && (previous.current === 'reconnecting' || previous.current === 'offline')) void queryClient.invalidateQueries();
    previous.current = status.state;
  }, [status.state, queryClient]);
  const refused = status.state === 'unauthorized';
  useEffect(() => {
    if (refused) onRefused();
  }, [refused, onRefused]);

  if (status.state === 'unauthorized') return <AuthScreen reason={status.reason} detail={status.message} onToken={onToken} />;
  return (
    <trpc.Provider client={connection.client} queryClient={queryClient}>
      <QueryClientProvider client={queryClient}>
        <ChatApp connection={status.state} settingsStore={settingsStore} notificationChoice={notificationChoice} />
      </QueryClientProvider>
    </trpc.Provider>
  );
}
