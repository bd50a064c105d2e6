import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { coalesceWrites } from './coalesce-writes';

interface Pair {
  server: WebSocket;
  socket: Duplex;
  client: WebSocket;
  received: string[];
  /** Resolves once the client holds `count` messages. */
  receivedCount(count: number): Promise<string[]>;
}

const open: { http: Server; wss: WebSocketServer; client: WebSocket }[] = [];

afterEach(async () => {
  for (const { http, wss, client } of open.splice(0)) {
    client.terminate();
    wss.close();
    await new Promise((resolve) => http.close(resolve));
  }
});

/** A real server-side WebSocket with coalesced writes and a client reading it, over loopback. */
async function connectedPair(): Promise<Pair> {
  const http = createServer();
  const wss = new WebSocketServer({ noServer: true });
  const accepted = new Promise<{ server: WebSocket; socket: Duplex }>((resolve) => {
    http.on('upgrade', (req, socket: Duplex, head: Buffer) => {
      wss.handleUpgrade(req, socket, head, (server) => {
        coalesceWrites(server, socket);
        resolve({ server, socket });
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(http.address() as AddressInfo).port}`);
  open.push({ http, wss, client });
  const received: string[] = [];
  const waiters: { count: number; resolve: (messages: string[]) => void }[] = [];
  client.on('message', (data: Buffer) => {
    received.push(data.toString());
    for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve([...received]);
  });
  const { server, socket } = await accepted;
  await new Promise((resolve) => client.once('open', resolve));
  return {
    server,
    socket,
    client,
    received,
    receivedCount: (count) => (received.length >= count ? Promise.resolve([...received]) : new Promise((resolve) => waiters.push({ count, resolve }))),
  };
}

describe('coalesceWrites', () => {
  it('holds the frames sent in one tick and writes them together, in order, once the tick is done', async () => {
    const pair = await connectedPair();
    pair.server.send('answer');
    pair.server.send('tool-decision');
    await Promise.resolve(); // a promise job later, as a loop event would be
    pair.server.send('tool-end');
    // Nothing has left yet: every frame of the tick is still buffered on the corked socket.
    expect(pair.socket.writableCorked).toBe(1);
    expect(pair.socket.writableLength).toBeGreaterThan(0);

    await new Promise((resolve) => process.nextTick(resolve));
    expect(pair.socket.writableCorked).toBe(0);
    expect(await pair.receivedCount(3)).toEqual(['answer', 'tool-decision', 'tool-end']);
  });

  it('starts a new batch in the next tick', async () => {
    const pair = await connectedPair();
    pair.server.send('first');
    await pair.receivedCount(1);
    pair.server.send('second');
    expect(pair.socket.writableCorked).toBe(1);
    expect(await pair.receivedCount(2)).toEqual(['first', 'second']);
    expect(pair.socket.writableCorked).toBe(0);
  });

  it('writes a burst at once when it grows past 64 KiB instead of holding it to the end of the tick', async () => {
    const pair = await connectedPair();
    const chunk = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 3; i++) pair.server.send(`${i}${chunk}`);
    expect(pair.socket.writableCorked).toBe(1);
    pair.server.send(`3${chunk}`);
    // Still inside the tick: the fourth frame took the buffer past 64 KiB, so it was written at once.
    expect(pair.socket.writableCorked).toBe(0);
    pair.server.send('after');
    expect(pair.socket.writableCorked).toBe(1);
    const messages = await pair.receivedCount(5);
    expect(messages.map((m) => m.slice(0, 5))).toEqual(['0xxxx', '1xxxx', '2xxxx', '3xxxx', 'after']);
    expect(pair.socket.writableCorked).toBe(0);
  });

  it('keeps the send callback', async () => {
    const pair = await connectedPair();
    const error = await new Promise<Error | null | undefined>((resolve) => pair.server.send('with callback', resolve));
    expect(error ?? null).toBeNull();
    expect(await pair.receivedCount(1)).toEqual(['with callback']);
  });
});
