import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { AuthScreen } from '../auth/auth-screen';
import { connectApi, defaultSocketUrl, type ApiConnection } from '../connection/connect-api';
import { trpc } from '../lib/trpc';
import { SettingsStore, settingsApi } from '../settings/settings-store';
import { ChatApp } from './chat-app';

export interface AppProps {
  /** The access token, or null when the page was opened without one. */
  initialToken: string | null;
  /** This origin's localStorage, where older versions kept the tool settings (moved to the server once). */
  legacySettings: Storage | undefined;
  /** Keeps a token the person pasted on the auth screen (sessionStorage in the browser). */
  saveToken: (token: string) => void;
  /**
   * Drops the kept token. Called when whatever answers cannot prove it is Airlock: a token kept on an origin another
   * program may now serve pages on would be read by its page at the next reload, and a mistyped one would fail again.
   */
  forgetToken: () => void;
}

export function App({ initialToken, legacySettings, saveToken, forgetToken }: AppProps) {
  const [token, setToken] = useState(initialToken);
  const adopt = (next: string) => {
    saveToken(next);
    setToken(next);
  };
  if (token === null) return <AuthScreen reason="missing" onToken={adopt} />;
  return <ConnectedApp key={token} token={token} legacySettings={legacySettings} onToken={adopt} onUnproven={forgetToken} />;
}

interface ConnectedAppProps {
  token: string;
  legacySettings: Storage | undefined;
  onToken: (token: string) => void;
  onUnproven: () => void;
}

function ConnectedApp({ token, legacySettings, onToken, onUnproven }: ConnectedAppProps) {
  const [api, setApi] = useState<{ connection: ApiConnection; queryClient: QueryClient; settingsStore: SettingsStore } | null>(null);
  useEffect(() => {
    const connection = connectApi({ url: defaultSocketUrl(window.location), token });
    const queryClient = new QueryClient({ defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: false, staleTime: 1000 } } });
    const settingsStore = new SettingsStore(settingsApi(connection.client), legacySettings);
    settingsStore.start();
    setApi({ connection, queryClient, settingsStore });
    return () => {
      settingsStore.close();
      void connection.close();
      queryClient.clear();
    };
  }, [token, legacySettings]);
  if (api === null) return null;
  return <Connected connection={api.connection} queryClient={api.queryClient} settingsStore={api.settingsStore} onToken={onToken} onUnproven={onUnproven} />;
}

function Connected({
  connection,
  queryClient,
  settingsStore,
  onToken,
  onUnproven,
}: {
  connection: ApiConnection;
  queryClient: QueryClient;
  settingsStore: SettingsStore;
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
        <ChatApp connection={status.state} settingsStore={settingsStore} />
      </QueryClientProvider>
    </trpc.Provider>
  );
}
