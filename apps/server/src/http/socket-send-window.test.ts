import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
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
