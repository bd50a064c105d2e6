import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createAirlockClient, decisionRefusal, isServerError, serverCode } from './index';

/** A WebSocket server on 127.0.0.1 that proves the token, then answers every request with NOT_FOUND. */
async function startNotFoundServer() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (socket, req) => {
    const nonce = new URL(req.url ?? '/', 'http://localhost').searchParams.get('proof') ?? '';
    const mac = createHmac('sha256', 'secret').update(`airlock server proof v2\n${req.headers.host}\n${nonce}`).digest('base64url');
    socket.send(JSON.stringify({ airlock: 'proof', mac }));
    socket.on('message', (data) => {
      const received: unknown = JSON.parse((data as Buffer).toString('utf8'));
      for (const request of Array.isArray(received) ? received : [received]) {
        const { id } = request as { id?: unknown };
        if (typeof id === 'number') socket.send(JSON.stringify({ id, error: { message: 'runId: no run "r" in this chat', code: -32004, data: { code: 'NOT_FOUND', httpStatus: 404 } } }));
      }
    });
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/trpc`,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

describe('isServerError', () => {
  it('tells a server answer by its code, from the package alone', async () => {
    await using server = await startNotFoundServer();
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket });
    try {
      const error: unknown = await client.pending('s').then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect([isServerError(error), isServerError(error, 'NOT_FOUND'), isServerError(error, 'TOO_MANY_REQUESTS'), serverCode(error)]).toStrictEqual([true, true, false, 'NOT_FOUND']);
      if (!isServerError(error)) throw new Error('unreachable');
      expect([error.message, error.data.code, error.data.httpStatus]).toStrictEqual(['runId: no run "r" in this chat', 'NOT_FOUND', 404]);
    } finally {
      await client.close();
    }
  });

  it('is false for a request too big to send, which the client refused itself, though serverCode names its code', async () => {
    await using server = await startNotFoundServer();
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket, maxMessageBytes: 1024 });
    try {
      const error: unknown = await client.pending('s'.repeat(2048)).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect([isServerError(error), isServerError(error, 'PAYLOAD_TOO_LARGE'), serverCode(error), decisionRefusal(error)]).toStrictEqual([false, false, 'PAYLOAD_TOO_LARGE', { kind: 'refused', why: 'invalid' }]);
    } finally {
      await client.close();
    }
  });

  it('is false for a failure of the connection, and for what is not an error', async () => {
    const client = createAirlockClient({ url: 'ws://127.0.0.1:9/trpc', token: 'secret', WebSocket, connectAttempts: 1 });
    const error: unknown = await client.pending('s').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    await client.close();
    expect([isServerError(error), isServerError({ data: { code: 'NOT_FOUND' } }), isServerError(null)]).toStrictEqual([false, false, false]);
  });
});
