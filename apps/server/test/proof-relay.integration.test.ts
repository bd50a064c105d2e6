import { createAirlockClient, UNPROVEN_SERVER_MESSAGE, type AirlockClient } from '@airlock/client';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { startServerProcess, type ServerProcess } from './support/server-process';

// A program with no token that holds the port a client dials (Airlock down, then started again on another port with
// the same token; or one of several instances sharing a token) passes the client's proof nonce to a real Airlock and
// its answer back. The answer covers the Host the real Airlock was sent, so it proves nothing for the relay's address.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** Which Host the relay names to the real server: its own (the one the client sent it), or the real server's. */
type RelayHost = 'client' | 'server';

/**
 * A WebSocket relay on 127.0.0.1:`port` with no token: each socket is forwarded to `target` (path and query kept, so
 * the client's nonce too), the real server's frames go back to the client, and what the client sends is recorded.
 */
async function startRelay(target: string, host: RelayHost, port = 0) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', () => resolve());
    wss.once('error', reject);
  });
  const fromClients: string[] = [];
  const upstreamStatuses: number[] = [];
  let relayed = 0;
  wss.on('connection', (client: WebSocket, req: IncomingMessage) => {
    const upstream = new WebSocket(new URL(req.url ?? '/', target).href, host === 'client' ? { headers: { host: req.headers.host ?? '' } } : {});
    upstream.on('error', () => undefined);
    upstream.on('unexpected-response', (_request, response) => {
      upstreamStatuses.push(response.statusCode ?? 0);
      client.close(1011);
    });
    upstream.on('message', (data: Buffer) => {
      relayed++;
      client.send(data.toString('utf8'));
    });
    upstream.on('close', () => client.close());
    client.on('message', (data: Buffer) => {
      fromClients.push(data.toString('utf8'));
      if (upstream.readyState === upstream.OPEN) upstream.send(data);
    });
    client.on('close', () => upstream.close());
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of wss.clients) socket.terminate();
        wss.close(() => resolve());
      }),
  );
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/trpc`,
    /** Every frame a client sent through the relay. */
    fromClients,
    /** The status of each upgrade the real server refused. */
    upstreamStatuses,
    /** How many frames of the real server went back to a client. */
    relayed: () => relayed,
  };
}

/** Two real Airlock processes started with the same token, each with its own data folder and workspace. */
async function twoAirlocksSharingAToken(): Promise<{ token: string; a: ServerProcess; b: ServerProcess }> {
  const root = await mkdtemp(join(tmpdir(), 'airlock-proof-relay-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const token = randomBytes(24).toString('hex');
  const start = async (name: string) => {
    const workspace = await mkdtemp(join(root, `${name}-workspace-`));
    return startServerProcess(['--data-dir', join(root, `${name}-data`), '--workspace', workspace], { AIRLOCK_TOKEN: token }, cleanups);
  };
  const [a, b] = await Promise.all([start('a'), start('b')]);
  return { token, a, b };
}

function clientOf(url: string, token: string): { client: AirlockClient; rejections: [string, string][] } {
  const rejections: [string, string][] = [];
  const client = createAirlockClient({ url, token, WebSocket, retryDelayMs: () => 10, connectAttempts: Infinity, onRejected: (message, reason) => rejections.push([message, reason]) });
  cleanups.push(() => client.close());
  return { client, rejections };
}

describe('a relay with no token in front of an Airlock that has the token', () => {
  it('gets a proof the client rejects, and never the token, when it names the real server as Host', async () => {
    const { token, a } = await twoAirlocksSharingAToken();
    const relay = await startRelay(a.wsUrl, 'server');
    const { client, rejections } = clientOf(relay.url, token);
    const listed = client.trpc.sessions.list.query().then(
      () => 'listed',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );

    // Once the client has settled on the proof it was relayed, one way or the other.
    await vi.waitFor(() => expect(['open', 'rejected']).toContain(client.state), { timeout: 30_000 });
    expect(relay.fromClients).toStrictEqual([]);
    // The real server answered the relayed nonce: the client saw its proof, for the real server's address.
    expect(relay.relayed()).toBeGreaterThanOrEqual(1);
    expect(client.state).toBe('rejected');
    expect(rejections).toStrictEqual([[UNPROVEN_SERVER_MESSAGE, 'unproven']]);
    expect(await listed).toBe(UNPROVEN_SERVER_MESSAGE);
  });

  it("is refused by the real server when it names the client's Host, and never gets the token", async () => {
    const { token, a } = await twoAirlocksSharingAToken();
    const relay = await startRelay(a.wsUrl, 'client');
    const { client } = clientOf(relay.url, token);

    await vi.waitFor(() => expect(relay.upstreamStatuses.length).toBeGreaterThanOrEqual(2), { timeout: 30_000 });
    expect(new Set(relay.upstreamStatuses)).toStrictEqual(new Set([403]));
    expect(client.state).not.toBe('open');
    expect(relay.relayed()).toBe(0);
    expect(relay.fromClients).toStrictEqual([]);
  });

  it('takes the port of an Airlock that stopped, relays to the other one with the token, and gets nothing from its client', async () => {
    const { token, a, b } = await twoAirlocksSharingAToken();
    const { client, rejections } = clientOf(b.wsUrl, token);
    expect(await client.trpc.sessions.list.query()).toStrictEqual({ sessions: [], nextCursor: null });

    await b.stop('SIGTERM');
    const relay = await startRelay(a.wsUrl, 'server', Number(new URL(b.wsUrl).port));
    expect(relay.url).toBe(b.wsUrl);

    // The client reconnects on its own to the port it knows, which the relay now holds, and settles on its proof.
    await vi.waitFor(() => expect(relay.relayed()).toBeGreaterThanOrEqual(1), { timeout: 30_000 });
    await vi.waitFor(() => expect(['open', 'rejected']).toContain(client.state), { timeout: 30_000 });
    expect(relay.fromClients).toStrictEqual([]);
    expect(client.state).toBe('rejected');
    expect(rejections).toStrictEqual([[UNPROVEN_SERVER_MESSAGE, 'unproven']]);
    await expect(client.trpc.sessions.list.query()).rejects.toThrow(UNPROVEN_SERVER_MESSAGE);
  });
});
