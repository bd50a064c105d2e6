import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { AuthScreen } from '../auth/auth-screen';
import { connectApi, defaultSocketUrl, type ApiConnection } from '../connection/connect-api';
import { trpc } from '../lib/trpc';
import { NotificationChoice } from '../settings/notification-choice';
import { SettingsStore, settingsApi } from '../settings/settings-store';
import { ChatApp } from './chat-app';

export interface AppProps {
  /** The access token, or null when the page was opened without one. */
  initialToken: string | null;
  /** Why the start-up link the page was opened with gave no token (used already, expired…). Default none. */
  linkProblem?: string;
  /**
   * This origin's localStorage, undefined when blocked: this browser's choice of notifications, and where older
   * versions kept the tool settings (moved to the server once).
   */
  originStorage: Storage | undefined;
  /** Keeps a token the person pasted on the auth screen (sessionStorage in the browser). */
  saveToken: (token: string) => void;
  /**
   * Drops the kept token. Called when whatever answers cannot prove it is Airlock: a token kept on an origin another
   * program may now serve pages on would be read by its page at the next reload, and a mistyped one would fail again.
   */
  forgetToken: () => void;
}

export function App({ initialToken, linkProblem, originStorage, saveToken, forgetToken }: AppProps) {
  const [token, setToken] = useState(initialToken);
  const adopt = (next: string) => {
    saveToken(next);
    setToken(next);
  };
  if (token === null) return linkProblem === undefined ? <AuthScreen reason="missing" onToken={adopt} /> : <AuthScreen reason="link" detail={linkProblem} onToken={adopt} />;
  return <ConnectedApp key={token} token={token} originStorage={originStorage} onToken={adopt} onUnproven={forgetToken} />;
}

interface ConnectedAppProps {
  token: string;
  originStorage: Storage | undefined;
  onToken: (token: string) => void;
  onUnproven: () => void;
}

function ConnectedApp({ token, originStorage, onToken, onUnproven }: ConnectedAppProps) {
  const [api, setApi] = useState<{ connection: ApiConnection; queryClient: QueryClient; settingsStore: SettingsStore; notificationChoice: NotificationChoice } | null>(
    null,
  );
  useEffect(() => {
    const connection = connectApi({ url: defaultSocketUrl(window.location), token });
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
  }, [token, originStorage]);
  if (api === null) return null;
  return <Connected connection={api.connection} queryClient={api.queryClient} settingsStore={api.settingsStore} notificationChoice={api.notificationChoice} onToken={onToken} onUnproven={onUnproven} />;
}

function Connected({
  connection,
  queryClient,
  settingsStore,
  notificationChoice,
  onToken,
  onUnproven,
}: {
  connection: ApiConnection;
  queryClient: QueryClient;
  settingsStore: SettingsStore;
  notificationChoice: NotificationChoice;
  onToken: (token: string) => void;
  onUnproven: () => void;
}) {
  const status = useSyncExternalStore(connection.status.subscribe, connection.status.getSnapshot);
  const previous = useRef(status.state);
  useEffect(() => {
    // Whatever changed while the socket was down (a run ended, a grant was revoked) is read again.
    if (status.state === 'connected' && (previous.current === 'reconnecting' || previous.current === 'offline')) void queryClient.invalidateQueries();
    previous.current = status.state;
  }, [status.state, queryClient]);
  const unproven = status.state === 'unauthorized' && status.reason === 'unproven';
  useEffect(() => {
    if (unproven) onUnproven();
  }, [unproven, onUnproven]);

  if (status.state === 'unauthorized') return <AuthScreen reason={status.reason} detail={status.message} onToken={onToken} />;
  return (
    <trpc.Provider client={connection.client} queryClient={queryClient}>
      <QueryClientProvider client={queryClient}>
        <ChatApp connection={status.state} settingsStore={settingsStore} notificationChoice={notificationChoice} />
      </QueryClientProvider>
    </trpc.Provider>
  );
}
