import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createAirlockClient, type DecideInput } from './create-airlock-client';

/** A WebSocket server on 127.0.0.1 that records what its connections receive and answers nothing but the proof. */
async function startRecordingServer() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const received: unknown[] = [];
  wss.on('connection', (socket, req) => {
    // Proves it knows the token, as Airlock does: the client sends it to no other server.
    const nonce = new URL(req.url ?? '/', 'http://localhost').searchParams.get('proof') ?? '';
    const mac = createHmac('sha256', 'secret').update(`airlock server proof v2\n${req.headers.host}\n${nonce}`).digest('base64url');
    socket.send(JSON.stringify({ airlock: 'proof', mac }));
    socket.on('message', (data) => received.push(JSON.parse((data as Buffer).toString('utf8'))));
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/trpc`,
    received,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

describe('createAirlockClient decide', () => {
  it('refuses a decision other than allow, always or deny before sending anything, never taking it as an allow', async () => {
    await using server = await startRecordingServer();
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket, retryDelayMs: () => 0, closeWaitMs: 0 });
    await using _closed = { [Symbol.asyncDispose]: () => client.close() };
    // As plain JavaScript may call it: the type does not hold there.
    const refused = ['Deny', 'reject', 'ALLOW', '', undefined, null, true, { decision: 'deny' }].map((decision) =>
      client.decide({ sessionId: 's', approvalId: 'a', decision } as unknown as DecideInput).then(
        () => 'answered',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
    );
    void client.decide({ sessionId: 's', approvalId: 'a', decision: 'deny', reason: 'no' }).catch(() => undefined);
    await vi.waitFor(() => expect(server.received.length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    expect(server.received).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      { id: 1, method: 'mutation', params: { path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a', decision: 'deny', reason: 'no', notAfter: expect.any(Number) } } },
    ]);
    const allowed = '"allow", "always" or "deny"';
    expect(await Promise.all(refused)).toStrictEqual([
      `decide: the decision must be ${allowed}, got "Deny"`,
      `decide: the decision must be ${allowed}, got "reject"`,
      `decide: the decision must be ${allowed}, got "ALLOW"`,
      `decide: the decision must be ${allowed}, got ""`,
      `decide: the decision must be ${allowed}, got undefined`,
      `decide: the decision must be ${allowed}, got null`,
      `decide: the decision must be ${allowed}, got boolean`,
      `decide: the decision must be ${allowed}, got object`,
    ]);
  });

  it('sends allow, always with edited arguments, and deny as the server takes them', async () => {
    await using server = await startRecordingServer();
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket, retryDelayMs: () => 0, closeWaitMs: 0 });
    await using _closed = { [Symbol.asyncDispose]: () => client.close() };
    for (const input of [
      { sessionId: 's', approvalId: 'a1', decision: 'allow' },
      { sessionId: 's', approvalId: 'a2', decision: 'always', arguments: { path: 'notes.txt' } },
      { sessionId: 's', approvalId: 'a3', decision: 'deny', reason: '' },
    ] satisfies DecideInput[]) {
      void client.decide(input).catch(() => undefined);
    }
    // Asked for before the socket opened, they go in one message once it does.
    await vi.waitFor(() => expect(server.received.length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    expect(server.received[1]).toStrictEqual([
      { id: 1, method: 'mutation', params: { path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a1', decision: 'allow', notAfter: expect.any(Number) } } },
      { id: 2, method: 'mutation', params: { path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a2', decision: 'allow', always: true, arguments: { path: 'notes.txt' }, notAfter: expect.any(Number) } } },
      { id: 3, method: 'mutation', params: { path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a3', decision: 'deny', notAfter: expect.any(Number) } } },
    ]);
  });
});
