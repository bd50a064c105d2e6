import { createAirlockClient, type AirlockClient } from '@airlock/client';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { DEFAULT_CAPACITY } from '../src/config';
import { CLOSE_REPLACED_BEFORE_TOKEN } from '@airlock/core';
import { startServerProcess } from './support/server-process';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(prefix: string): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

const count = DEFAULT_CAPACITY.maxUnauthenticated * 4;

describe('a backend that opens more connections at once than the server keeps without a token', () => {
  it(`has the first call of each of ${count} clients applied once: a socket that gave its place before its token was accepted sends it again, as never arrived`, async () => {
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--data-dir', await tempDir('airlock-replaced-data-'), '--workspace', await tempDir('airlock-replaced-ws-')], { AIRLOCK_TOKEN: token }, cleanups);
    // Every socket holds what the client writes until a first socket has given its place: that socket's token and
    // mutation were written and never reached the server, as on a busy backend, and a replacement is sure to happen.
    const replaced: number[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    class HeldUntilReplaced extends WebSocket {
      constructor(...args: ConstructorParameters<typeof WebSocket>) {
        super(...args);
        this.on('close', (code) => {
          if (code !== CLOSE_REPLACED_BEFORE_TOKEN) return;
          replaced.push(code);
          release();
        });
      }
      override send(data: string): void {
        void released.then(() => {
          if (this.readyState === WebSocket.OPEN) super.send(data);
        });
      }
    }
    const clients: AirlockClient[] = [];
    cleanups.push(async () => void (await Promise.all(clients.map((client) => client.close()))));
    for (let i = 0; i < count; i++) {
      clients.push(createAirlockClient({ url: server.wsUrl, token, WebSocket: HeldUntilReplaced, retryDelayMs: () => 0, connectAttempts: Infinity }));
    }
    // A mutation applied twice would show: two rules with the same words.
    const outcomes = await Promise.allSettled(
      clients.map((client, i) =>
        client.trpc.rules.add.mutate({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['echo', `client-${i}`], exact: false }, scope: { kind: 'global' }, source: 'user' }),
      ),
    );

    expect(outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []))).toStrictEqual([]);
    const { rules } = await clients[0]!.trpc.rules.list.query();
    const added = rules.flatMap(({ rule: { match } }) => (match.kind === 'command-prefix' && match.tokens[0] === 'echo' ? [match.tokens[1]] : []));
    expect(added.toSorted()).toStrictEqual(clients.map((_, i) => `client-${i}`).toSorted());
    // Sockets did give their places to newcomers, with what they had written: what this is about.
    expect(replaced.length).toBeGreaterThan(0);
  }, 90_000);

  it(`closes a socket that gives its place to a newcomer with ${CLOSE_REPLACED_BEFORE_TOKEN}, and never one whose token was accepted`, async () => {
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--data-dir', await tempDir('airlock-replaced-data-'), '--workspace', await tempDir('airlock-replaced-ws-')], { AIRLOCK_TOKEN: token }, cleanups);
    const open = async (params?: object) => {
      const socket = new WebSocket(`${server.wsUrl}?connectionParams=1`);
      cleanups.push(async () => socket.terminate());
      const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
      socket.on('error', () => undefined);
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
      });
      if (params !== undefined) {
        const answer = new Promise<string>((resolve) => socket.on('message', (data: Buffer) => resolve(data.toString('utf8'))));
        socket.send(JSON.stringify({ method: 'connectionParams', data: params }));
        socket.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'model.info' } }));
        await answer;
      }
      return { socket, closed };
    };
    const accepted = await open({ token });
    const quiet = [];
    for (let i = 0; i < DEFAULT_CAPACITY.maxUnauthenticated; i++) quiet.push(await open());
    await open();

    expect(await quiet[0]!.closed).toBe(CLOSE_REPLACED_BEFORE_TOKEN);
    expect(accepted.socket.readyState).toBe(WebSocket.OPEN);
  }, 90_000);
});
