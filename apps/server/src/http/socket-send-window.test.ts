import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { coalesceWrites } from './coalesce-writes';
import { SendBufferBudget } from './send-buffer-budget';
import { SocketSendWindow } from './socket-send-window';

/** A WebSocket as the window sees it: its buffered amount, its state, and whether it is read. */
class FakeClient extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  paused = false;
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
}

function windowOver(client: FakeClient, socket: EventEmitter) {
  const stalls: number[] = [];
  const window = new SocketSendWindow(client as unknown as WebSocket, socket as unknown as Duplex, { highWaterBytes: 1000, stallMs: 60_000, onStall: () => stalls.push(1) });
  return { window, stalls, [Symbol.dispose]: () => client.emit('close') };
}

describe('SocketSendWindow', () => {
  it('shuts after any frame that leaves more than the mark waiting, stops reading the socket, and opens on drain', () => {
    const client = new FakeClient();
    const socket = new EventEmitter();
    using w = windowOver(client, socket);
    client.bufferedAmount = 900;
    w.window.sent();
    expect([w.window.open, client.paused]).toStrictEqual([true, false]);
    // An answer to a query, not a run stream's frame: it shuts the window all the same.
    client.bufferedAmount = 5000;
    w.window.sent();
    expect(client.paused).toBe(true);
    client.bufferedAmount = 0;
    expect(w.window.open).toBe(false);
    socket.emit('drain');
    expect([w.window.open, client.paused]).toStrictEqual([true, false]);
  });

  it('does not shut a socket that is closing', () => {
    const client = new FakeClient();
    const socket = new EventEmitter();
    using w = windowOver(client, socket);
    client.readyState = 2;
    client.bufferedAmount = 5000;
    w.window.sent();
    expect(client.paused).toBe(false);
  });
});

/** A real server-side WebSocket with coalesced writes, its send window and a total unsent, and a client that reads nothing, over loopback. */
async function windowOverLoopback(highWaterBytes: number) {
  const http = createServer();
  const wss = new WebSocketServer({ noServer: true });
  const total = new SendBufferBudget(2 ** 30);
  const accepted = new Promise<{ window: SocketSendWindow; server: WebSocket; socket: Duplex }>((resolve) => {
    http.on('upgrade', (req, socket: Duplex, head: Buffer) => {
      wss.handleUpgrade(req, socket, head, (server) => {
        const window = new SocketSendWindow(server, socket, { highWaterBytes, stallMs: 60_000, onStall: () => undefined, budget: { total, onEvict: () => undefined } });
        coalesceWrites(server, socket, () => window.sent());
        resolve({ window, server, socket });
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(http.address() as AddressInfo).port}`);
  await new Promise((resolve) => client.once('open', resolve));
  (client as unknown as { _socket: Duplex })._socket.pause();
  return {
    ...(await accepted),
    total,
    client,
    [Symbol.asyncDispose]: async () => {
      client.terminate();
      wss.close();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/**
 * The bytes Node holds unsent for `socket`: those of writes not yet handed to libuv, and what libuv has not yet written
 * to the kernel of those that were.
 */
function bytesHeld(socket: Duplex): number {
  const { _handle, writableBuffer } = socket as unknown as { _handle: { writeQueueSize: number }; writableBuffer: { chunk: Buffer | string; encoding: BufferEncoding }[] };
  return writableBuffer.reduce((sum, { chunk, encoding }) => sum + Buffer.byteLength(chunk, encoding), _handle.writeQueueSize);
}

describe('SocketSendWindow over a socket', () => {
  it('counts bytes, not characters: text of 3-byte characters shuts it once more than the mark in bytes waits, and the total unsent reads what is held (found in review)', async () => {
    await using pair = await windowOverLoopback(16 * 1024);
    // 10,000 characters, 30,000 bytes: held within the tick, as the frames of a burst are, before any of it is written.
    pair.server.send('€'.repeat(10_000));
    expect([pair.window.open, pair.window.bufferedBytes, pair.total.noted]).toStrictEqual([false, bytesHeld(pair.socket), bytesHeld(pair.socket)]);
    expect(bytesHeld(pair.socket)).toBe(30_000 + 4);
    // Still a text frame, the same text.
    const received = new Promise<[string, boolean]>((resolve) => pair.client.once('message', (data: Buffer, isBinary) => resolve([data.toString('utf8'), isBinary])));
    (pair.client as unknown as { _socket: Duplex })._socket.resume();
    expect(await received).toStrictEqual(['€'.repeat(10_000), false]);
  });
});
