import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { initTRPC } from '@trpc/server';
import { getWSConnectionHandler } from '@trpc/server/adapters/ws';
import { WebSocketServer } from 'ws';
import { describe, expect, it } from 'vitest';

/**
 * Our patch of tRPC's WebSocket adapter reads a subscription's stream by pumping it (each read asked for in the
 * reaction to the last) rather than through an async loop. These drive the adapter itself with streams that end,
 * fail, are stopped, or misbehave, and check what it sends, and in what order, as the loop sent it.
 */

type Step = Promise<unknown> | (() => unknown);

/** An async iterable whose reads answer `steps` in turn, then never; `extra` adds or replaces iterator methods. */
function stream(steps: Step[], extra: Record<PropertyKey, unknown> = {}): AsyncIterable<unknown> {
  return {
    [Symbol.asyncIterator]() {
      let at = 0;
      return {
        next() {
          const step = steps[at++];
          return typeof step === 'function' ? step() : (step ?? new Promise(() => {}));
        },
        ...extra,
      } as AsyncIterator<unknown>;
    },
  };
}

/** A socket the adapter talks to, recording what it is sent (and what the stream's methods log) in one list. */
class RecordingSocket extends EventEmitter {
  readyState = 1;
  readonly log: string[] = [];
  private waiters: { until: (log: string[]) => boolean; resolve: () => void }[] = [];

  send(text: string): void {
    const message = JSON.parse(text) as { result?: { type: string; data?: unknown }; error?: { message: string } };
    this.record(message.error ? `error:${message.error.message}` : `${message.result!.type}${message.result!.data === undefined ? '' : `:${JSON.stringify(message.result!.data)}`}`);
  }

  close(): void {}

  record(entry: string): void {
    this.log.push(entry);
    this.waiters = this.waiters.filter((waiter) => !(waiter.until(this.log) && (waiter.resolve(), true)));
  }

  /** Resolves once the log holds what `until` looks for. */
  when(until: (log: string[]) => boolean): Promise<void> {
    if (until(this.log)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ until, resolve }));
  }

  receive(message: object): void {
    this.emit('message', Buffer.from(JSON.stringify(message)), false);
  }
}

/** Subscribes over a recording socket to a procedure answering `source`; `socket.log` tells what was sent. */
function subscribe(source: (socket: RecordingSocket) => AsyncIterable<unknown>): RecordingSocket {
  const t = initTRPC.create();
  const socket = new RecordingSocket();
  const router = t.router({ s: t.procedure.subscription(() => source(socket)) });
  const wss = new WebSocketServer({ noServer: true });
  const handler = getWSConnectionHandler({ router, wss, onError: ({ error }) => socket.record(`onError:${error.message}`) });
  handler(socket, { url: '/', headers: {}, socket: {} } as unknown as IncomingMessage);
  socket.receive({ id: 1, method: 'subscription', params: { path: 's' } });
  return socket;
}

const has = (entry: string) => (log: string[]) => log.includes(entry);
/** A `return` that records each call of it on the socket. */
const recordedReturn = (socket: RecordingSocket) => ({
  return: async () => {
    socket.record('return');
    return { done: true, value: undefined };
  },
});

describe('a subscription read by the patched tRPC adapter', () => {
  it('sends its data in order, then "stopped" at its end', async () => {
    const socket = subscribe(() => stream([Promise.resolve({ value: 1, done: false }), Promise.resolve({ value: 2, done: false }), Promise.resolve({ done: true })]));
    await socket.when(has('stopped'));
    expect(socket.log).toEqual(['started', 'data:1', 'data:2', 'stopped']);
  });

  it('sends a failed read as an error, then "stopped"', async () => {
    const socket = subscribe(() => stream([Promise.resolve({ value: 1, done: false }), Promise.reject(new Error('read failed'))]));
    await socket.when(has('stopped'));
    expect(socket.log).toEqual(['started', 'data:1', 'onError:read failed', 'error:read failed', 'stopped']);
  });

  it('ends a pending read on a stop or a close: the stream is returned, then "stopped", and nothing after', async () => {
    for (const end of ['stop', 'close'] as const) {
      const socket = subscribe((to) => stream([Promise.resolve({ value: 1, done: false })], recordedReturn(to)));
      await socket.when(has('data:1'));
      if (end === 'stop') socket.receive({ id: 1, method: 'subscription.stop' });
      else socket.emit('close');
      await socket.when((log) => log.filter((entry) => entry === 'return').length === 2);
      // The stream is returned before "stopped" is sent, and disposed of (returned again) after.
      expect(socket.log).toEqual(['started', 'data:1', 'return', 'stopped', 'return']);
    }
  });

  it('fails the subscription, sending an error and nothing more, when what a read gave cannot be sent', async () => {
    const socket = subscribe(() => stream([Promise.resolve({ value: 1n, done: false })]));
    await socket.when((log) => log.some((entry) => entry.startsWith('error:')));
    expect(socket.log).toEqual(['started', 'onError:Do not know how to serialize a BigInt', 'error:Do not know how to serialize a BigInt']);
  });

  it('fails the subscription when a read gives no result object, rather than reading again without end (found in review)', async () => {
    for (const given of [undefined, null, 'x']) {
      const socket = subscribe(() => stream([Promise.resolve({ value: 1, done: false }), () => Promise.resolve(given)]));
      await socket.when((log) => log.some((entry) => entry.startsWith('error:')));
      expect(socket.log).toEqual(['started', 'data:1', `onError:Iterator result ${String(given)} is not an object`, `error:Iterator result ${String(given)} is not an object`]);
    }
  });

  it('fails the subscription when its stream throws as a read is asked for, or as it is opened (found in review)', async () => {
    const throwing = subscribe(() => stream([() => { throw new Error('next threw'); }]));
    await throwing.when(has('error:next threw'));
    expect(throwing.log).toEqual(['started', 'onError:next threw', 'error:next threw']);

    const unopened = subscribe(() => ({ [Symbol.asyncIterator]: () => { throw new Error('could not open'); } }));
    await unopened.when(has('error:could not open'));
    expect(unopened.log).toEqual(['started', 'onError:could not open', 'error:could not open']);
  });
});
