import { UNPROVEN_SERVER_MESSAGE } from '@airlock/client';
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { connectApi } from './connect-api';

const URL_OF_RUN = 'ws://airlock-abcdefghijklmnop.localhost:7700/trpc';

/** Sockets the test opens and closes by hand; each records what was sent on it. */
class FakeSocket {
  static made: FakeSocket[] = [];
  readyState = 0;
  readonly sent: string[] = [];
  private readonly listeners = new Map<string, ((event?: unknown) => void)[]>();
  constructor(readonly url: string) {
    FakeSocket.made.push(this);
  }
  addEventListener(type: 'open' | 'close', listener: () => void): void;
  addEventListener(type: 'error', listener: (event?: unknown) => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: string, listener: (event: never) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener as (event?: unknown) => void]);
  }
  send(data: string): void {
    this.sent.push(data);
  }
  close(): void {
    this.end();
  }
  /** Opens, and proves it knows the token `known` ("secret", as Airlock does): the client sends it to no other server. */
  open(known = 'secret'): void {
    this.readyState = 1;
    for (const listener of this.listeners.get('open') ?? []) listener();
    const url = new URL(this.url);
    const nonce = url.searchParams.get('proof') ?? '';
    const mac = createHmac('sha256', known).update(`airlock server proof v2\n${url.host}\n${nonce}`).digest('base64url');
    for (const listener of this.listeners.get('message') ?? []) listener({ data: JSON.stringify({ airlock: 'proof', mac }) });
  }
  end(): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    for (const listener of this.listeners.get('close') ?? []) listener();
  }
}

beforeEach(() => {
  FakeSocket.made = [];
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('connectApi, when its server stops', () => {
  it('says Airlock was started again once a later run refuses this name, however long the restart took, and stops trying', async () => {
    // The server is down for the first checks (nothing answers), then a later run answers and refuses this page's name.
    let restarted = false;
    const fetch = vi.fn(async () => (restarted ? new Response('', { status: 403 }) : Promise.reject(new TypeError('Failed to fetch'))));
    vi.stubGlobal('fetch', fetch);
    const connection = connectApi({ url: URL_OF_RUN, token: 'secret', offlineAfterFailures: 3, WebSocket: FakeSocket });
    const last = () => FakeSocket.made.at(-1)!;
    last().open();
    await vi.waitFor(() => expect(connection.status.getSnapshot().state).toBe('connected'));
    last().end();
    // Ten failed attempts while the server is down: offline, and asked about at each failure from the third on.
    for (let attempt = 0; attempt < 10; attempt++) {
      await vi.advanceTimersByTimeAsync(5_000);
      last().end();
    }
    expect(connection.status.getSnapshot().state).toBe('offline');
    expect(fetch.mock.calls.length).toBeGreaterThan(1);
    restarted = true;
    await vi.advanceTimersByTimeAsync(5_000);
    last().end();
    await vi.waitFor(() => expect(connection.status.getSnapshot()).toStrictEqual({ state: 'unauthorized', message: 'Airlock was started again, on a new address: open the link it printed then', reason: 'moved' }));
    // No more attempts: whoever holds the port next is offered nothing.
    const made = FakeSocket.made.length;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(FakeSocket.made.length).toBe(made);
    await connection.close();
  });
});

describe('connectApi, when what answers cannot prove it is Airlock', () => {
  it('says so apart from a refused token, and sends no token', async () => {
    const connection = connectApi({ url: URL_OF_RUN, token: 'secret', WebSocket: FakeSocket });
    const socket = FakeSocket.made.at(-1)!;
    socket.open('another token');

    await vi.waitFor(() => expect(connection.status.getSnapshot()).toStrictEqual({ state: 'unauthorized', message: UNPROVEN_SERVER_MESSAGE, reason: 'unproven' }));
    expect(socket.sent.some((frame) => frame.includes('secret'))).toBe(false);
    await connection.close();
  });
});
