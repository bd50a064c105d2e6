import type { AppRouter } from '@airlock/api';
import { createTRPCClient, createWSClient, wsLink, type TRPCClient } from '@trpc/client';
import { authAwareWebSocket } from './auth-aware-websocket';
import { ConnectionStatusStore } from './connection-status';

export interface ConnectApiOptions {
  /** The tRPC WebSocket endpoint, e.g. `ws://127.0.0.1:7700/trpc`. */
  url: string;
  /** Sent as connection params on every (re)connect. */
  token: string;
  /** Failed attempts in a row after which the UI says "offline" instead of "reconnecting". Default 3. */
  offlineAfterFailures?: number;
  /** Default: the global WebSocket. */
  WebSocket?: typeof WebSocket;
}

export interface ApiConnection {
  client: TRPCClient<AppRouter>;
  status: ConnectionStatusStore;
  close(): Promise<void>;
}

/** Opens the one WebSocket the UI uses; it reconnects by itself and re-sends open subscriptions with their lastEventId. */
export function connectApi(options: ConnectApiOptions): ApiConnection {
  const status = new ConnectionStatusStore();
  const offlineAfter = options.offlineAfterFailures ?? 3;
  let failures = 0;
  let opened = false;
  const socket = authAwareWebSocket((message) => {
    status.set({ state: 'unauthorized', message });
    void wsClient.close();
  }, options.WebSocket);
  const wsClient = createWSClient({
    url: options.url,
    WebSocket: socket,
    connectionParams: { token: options.token },
    retryDelayMs: (attempt) => Math.min(300 * 2 ** attempt, 5_000),
    onOpen() {
      failures = 0;
      opened = true;
      status.set({ state: 'connected' });
    },
    onClose() {
      failures++;
      if (failures >= offlineAfter) status.set({ state: 'offline' });
      else status.set({ state: opened ? 'reconnecting' : 'connecting' });
    },
  });
  const client = createTRPCClient<AppRouter>({ links: [wsLink<AppRouter>({ client: wsClient })] });
  return { client, status, close: () => wsClient.close() };
}

export function defaultSocketUrl(location: Pick<Location, 'protocol' | 'host'>): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/trpc`;
}
