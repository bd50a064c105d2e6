import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createAirlockClient, isConnectionLost } from './index';

/** A WebSocket server on 127.0.0.1 that proves the token "secret" and keeps each request for the test to answer. */
async function startHoldingServer() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const requests: { socket: WebSocket; id: number }[] = [];
  wss.on('connection', (socket, req) => {
    const nonce = new URL(req.url ?? '/', 'http://localhost').searchParams.get('proof') ?? '';
    socket.send(JSON.stringify({ airlock: 'proof', mac: createHmac('sha256', 'secret').update(`airlock server proof v2\n${req.headers.host}\n${nonce}`).digest('base64url') }));
    socket.on('message', (data) => {
      const received: unknown = JSON.parse((data as Buffer).toString('utf8'));
      for (const request of Array.isArray(received) ? received : [received]) {
        const { id } = request as { id?: unknown };
        if (typeof id === 'number') requests.push({ socket, id });
      }
    });
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/trpc`,
    requests,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

const outcome = (call: Promise<unknown>) =>
  call.then(
    (value) => ({ answered: value }),
    (error: unknown) => ({ failed: error instanceof Error ? error.message : String(error), lost: isConnectionLost(error) }),
  );

describe('close()', () => {
  it('waits for the answer to a call already sent, which the call then gives', async () => {
    await using server = await startHoldingServer();
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket });
    const pending = outcome(client.pending('s'));
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    const closed = client.close();
    const { socket, id } = server.requests[0]!;
    socket.send(JSON.stringify({ id, result: { type: 'data', data: [] } }));
    await closed;
    expect(await pending).toStrictEqual({ answered: [] });
  });

  it('ends after closeWaitMs when the server never answers, failing the call as lost', async () => {
    await using server = await startHoldingServer();
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket, closeWaitMs: 20 });
    const pending = outcome(client.pending('s'));
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    await client.close();
    expect(await pending).toStrictEqual({ failed: 'the client closed before the answer came (none within 20 ms)', lost: true });
    expect(client.state).toBe('closed');
  });

  it('ends against a server that never answers its closing handshake: the socket is let go, not waited on until the keep-alive gives up', async () => {
    await using server = await startHoldingServer();
    // No keep-alive to give up on it: a close that waited for the closing handshake would pass this test's time limit.
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket, closeWaitMs: 20, keepAlive: false });
    const pending = outcome(client.pending('s'));
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    // The server stops reading: the close frame is never read, so never answered (a frozen server, a dead path).
    const [held] = server.requests;
    (held!.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    await client.close();
    expect(await pending).toMatchObject({ lost: true });
    expect(client.state).toBe('closed');
    // ws gives up on a closing handshake after 30 s by itself: a close that waited for that fails this test's limit.
  }, 10_000);
});
