import { ChatService, MemoryStore } from '@airlock/api';
import { ApprovalRegistry, ConflictError } from '@airlock/core';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/start-server';
import { connectClient, type TestClient } from './support/test-airlock';

const running: (RunningServer | TestClient)[] = [];
afterEach(async () => {
  for (const closable of running.splice(0).reverse()) await closable.close();
});

/** A store whose audit fails with what a driver's error carries: a path on the machine. */
class FailingStore extends MemoryStore {
  failure: Error = new Error('ENOENT: /secret/path/airlock.db: no such file');
  override async listAudit(): Promise<never> {
    throw this.failure;
  }
}

async function serverWith(store: FailingStore) {
  const logged: string[] = [];
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => { throw new Error('no model'); }, tools: () => [], store });
  const server = await startServer({
    config: { host: '127.0.0.1', port: 0, token: 'tok-internal-error-test-0123456789', allowedOrigins: [], capacity: {} },
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'fake', baseURL: null, model: 'fake-model', demo: false }) },
    log: (line: string) => logged.push(line),
    logIsTerminal: false,
  });
  running.push(server);
  const client = connectClient(server.wsUrl, server.token);
  running.push(client);
  return { client, logged };
}

describe('an error a procedure did not mean to send', () => {
  it('reaches the client as "internal error", without its detail, which the server logs once', async () => {
    const store = new FailingStore();
    const { client, logged } = await serverWith(store);
    const error = await client.trpc.audit.list.query({}).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ message: 'internal error', data: { code: 'INTERNAL_SERVER_ERROR' } });
    expect(JSON.stringify(error)).not.toContain('/secret/path');
    expect(logged.filter((line) => line.includes('/secret/path'))).toHaveLength(1);
  });

  it('an Airlock error keeps its message, and bad input its BAD_REQUEST naming the field', async () => {
    const store = new FailingStore();
    store.failure = new ConflictError('busy', 'the session is busy');
    const { client } = await serverWith(store);
    await expect(client.trpc.audit.list.query({})).rejects.toMatchObject({ message: 'the session is busy', data: { code: 'CONFLICT' } });
    await expect(client.trpc.grants.list.query({ sessionId: '' })).rejects.toMatchObject({ data: { code: 'BAD_REQUEST' }, message: expect.stringContaining('sessionId') });
  });
});
