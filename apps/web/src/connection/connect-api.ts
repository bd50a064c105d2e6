import type { AppRouter } from '@airlock/api';
import { createAirlockClient, type AirlockClientOptions, type WebSocketConstructor } from '@airlock/client';
import type { TRPCClient } from '@trpc/client';
import { ConnectionStatusStore } from './connection-status';

export interface ConnectApiOptions {
  /** The tRPC WebSocket endpoint, e.g. `ws://127.0.0.1:7700/trpc`. */
  url: string;
  /** Sent as connection params on every (re)connect; "" when `tab.credential` stands in for it (after a reload). */
  token: string;
  /** The per-tab credential kept over a reload, and where to keep each new one (see `createAirlockClient`). Default none. */
  tab?: AirlockClientOptions['tab'];
  /** Failed attempts in a row after which the UI says "offline" instead of "reconnecting". Default 3. */
  offlineAfterFailures?: number;
  /** Default: the global WebSocket. */
  WebSocket?: WebSocketConstructor;
}

export interface ApiConnection {
  client: TRPCClient<AppRouter>;
  status: ConnectionStatusStore;
  close(): Promise<void>;
}

/**
 * Opens the one WebSocket the UI uses, through @airlock/client: it reconnects by itself, re-sends open
 * subscriptions with their lastEventId, and stops (the UI asks for a token) when the server refuses the token.
 */
export function connectApi(options: ConnectApiOptions): ApiConnection {
  const status = new ConnectionStatusStore();
  const offlineAfter = options.offlineAfterFailures ?? 3;
  let failures = 0;
  let opened = false;
  let checking = false;
  let superseded = false;
  const airlock = createAirlockClient({
    url: options.url,
    token: options.token,
    ...(options.tab === undefined ? {} : { tab: options.tab }),
    clientLabel: 'web',
    ...(options.WebSocket === undefined ? {} : { WebSocket: options.WebSocket }),
    retryDelayMs: (attempt) => Math.min(300 * 2 ** attempt, 5_000),
    // The page waits for its server however long it is down, and says so (offline).
    connectAttempts: Infinity,
    onOpen() {
      failures = 0;
      opened = true;
      status.set({ state: 'connected' });
    },
    onClose() {
      failures++;
      if (failures >= offlineAfter) status.set({ state: 'offline' });
      else status.set({ state: opened ? 'reconnecting' : 'connecting' });
      // Asked again at each failure while offline: a restart takes longer than the first few attempts.
      if (opened && failures >= offlineAfter) void checkRunStillServes();
    },
    onRejected(message, reason) {
      status.set({ state: 'unauthorized', message, reason });
    },
  });
  /**
   * On loopback each run of the server has its own origin (`airlock-<random>.localhost`): a server that answers on
   * this port but refuses this page's name is a later run, which only its own start-up link reaches.
   */
  async function checkRunStillServes(): Promise<void> {
    const health = new URL('/healthz', options.url.replace(/^ws/, 'http'));
    if (checking || superseded || !health.hostname.endsWith('.localhost')) return;
    checking = true;
    const answer = await fetch(health, { cache: 'no-store' }).catch(() => undefined);
    checking = false;
    if (answer?.status !== 403 || superseded) return;
    superseded = true;
    // No later run serves this page's name again: trying on would only offer the token to whoever holds the port next.
    void airlock.close();
    status.set({ state: 'unauthorized', message: 'Airlock was started again, on a new address: open the link it printed then', reason: 'moved' });
  }
  return { client: airlock.trpc, status, close: () => airlock.close() };
}

export function defaultSocketUrl(location: Pick<Location, 'protocol' | 'host'>): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/trpc`;
}
