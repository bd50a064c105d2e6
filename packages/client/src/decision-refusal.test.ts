import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createAirlockClient } from './create-airlock-client';
import { decisionRefusal, serverCode } from './decision-refusal';

/** An error as the client throws for an answer of the server with `code`. */
const answered = (code: unknown) => Object.assign(new Error('the words'), { data: { code } });

/** A WebSocket server on 127.0.0.1 that proves the token, then answers every request with the error `answer`. */
async function startRefusingServer(answer: { message: string; code: number; data: { code: string; httpStatus: number } }) {
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
        if (typeof id === 'number') socket.send(JSON.stringify({ id, error: answer }));
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

describe('decisionRefusal', () => {
  it.each([
    ['TIMEOUT', 'too-late'],
    ['BAD_REQUEST', 'invalid'],
    ['CONFLICT', 'conflict'],
    ['TOO_MANY_REQUESTS', 'busy'],
    ['UNAUTHORIZED', 'not-authorized'],
    ['FORBIDDEN', 'not-authorized'],
    ['NOT_FOUND', 'gone'],
  ])('takes %s for a refusal that applied nothing (%s)', (code, why) => {
    expect(decisionRefusal(answered(code))).toStrictEqual({ kind: 'refused', why });
  });

  it('takes any other code for a failure on the server, which may have been applied', () => {
    for (const code of ['INTERNAL_SERVER_ERROR', 'BAD_GATEWAY', 'PRECONDITION_FAILED', 'constructor', '__proto__']) {
      expect(decisionRefusal(answered(code))).toStrictEqual({ kind: 'failed' });
    }
  });

  it('takes an error with no code for no answer', () => {
    for (const error of [new Error('socket closed'), answered(7), answered(undefined), { data: null }, null, undefined, 'text']) {
      expect(decisionRefusal(error)).toStrictEqual({ kind: 'unanswered' });
    }
  });

  it('reads the refusal of a paused run as the server answers it over the wire', async () => {
    const message = 'The run r1 is paused until its data can be stored (database or disk is full). Nothing was decided: the call still waits.';
    await using server = await startRefusingServer({ message, code: -32009, data: { code: 'CONFLICT', httpStatus: 409 } });
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket, retryDelayMs: () => 0 });
    await using _closed = { [Symbol.asyncDispose]: () => client.close() };
    const error = await client.decide({ sessionId: 's', approvalId: 'a', decision: 'allow' }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(message);
    expect(decisionRefusal(error)).toStrictEqual({ kind: 'refused', why: 'conflict' });
  });
});

describe('decisionRefusal of a decision too big to send', () => {
  it('takes it for a refusal of what it carries, nothing applied: the client never sent it', async () => {
    await using server = await startRefusingServer({ message: 'unused', code: -32603, data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500 } });
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket, retryDelayMs: () => 0, maxMessageBytes: 4096 });
    await using _closed = { [Symbol.asyncDispose]: () => client.close() };
    const error = await client.decide({ sessionId: 's', approvalId: 'a', decision: 'allow', arguments: { command: 'x'.repeat(5000) } }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect((error as Error).message).toMatch(/^arguments: the request is \d+ bytes, over the 4096 bytes the server takes in one message; shorten arguments/);
    // Read as a failure on the server that may have been applied ("it may have been applied, and is shown if it was").
    expect(decisionRefusal(error)).toStrictEqual({ kind: 'refused', why: 'invalid' });
  });
});

describe('serverCode', () => {
  it('reads the code of an error the server answered with, and none from another', () => {
    expect(serverCode(Object.assign(new Error('x'), { data: { code: 'CONFLICT' } }))).toBe('CONFLICT');
    expect(serverCode(new Error('x'))).toBeUndefined();
    expect(serverCode(Object.assign(new Error('x'), { data: { code: 7 } }))).toBeUndefined();
    expect(serverCode(null)).toBeUndefined();
  });
});
