import type { ChatService } from '@airlock/api';
import { mcpReadTool } from '@airlock/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, waitingCalls } from './support/cluster-instance';
import { ConversationModel } from './support/conversation-model';
import { probeTestDatabase, type TestDatabase } from './support/postgres';

// A chat's rules go with the chat on every instance: a chat deleted through one instance left its rules listed and in
// force on the others, so a new chat of the same id (a tab that still had it open, `airlock chat --session`) had its
// calls denied by the deleted chat's deny rule (an allow of such a rule was caught by the store's policy version).

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance chat rule tests: ${postgres.reason}`);

const cleanups = cleanupsAfterEach();

async function ended(chat: ChatService, sessionId: string) {
  await vi.waitFor(async () => expect((await chat.getSession(sessionId)).activeRunId).toBeNull(), { timeout: 20_000, interval: 20 });
}

describe.skipIf(!postgres.available)('a chat rule of a deleted chat', { timeout: 120_000 }, () => {
  it('deleted through one instance, is no longer listed on another, nor denies a call of a new chat of the same id there', async () => {
    const db: TestDatabase = await cleanups.database();
    const ran: string[] = [];
    const tools = () => [mcpReadTool('reads a file', ran)];
    const a = await clusterInstance(db, cleanups, { name: 'a', model: new ConversationModel('files__read', 'path'), tools });
    const b = await clusterInstance(db, cleanups, { name: 'b', model: new ConversationModel('files__read', 'path'), tools });
    await a.rules.add({ effect: 'deny', tool: 'mcp', match: { kind: 'mcp-server', server: 'files' }, scope: { kind: 'chat', sessionId: 's1' }, source: 'user' });
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'a' });
    await ended(a.chat, 's1');
    expect((await a.chat.getSession('s1')).toolCalls).toMatchObject([{ decision: 'deny', source: 'rule' }]);
    await expect.poll(async () => (await b.rules.list()).length, { timeout: 20_000 }).toBe(1);

    expect(await a.chat.deleteSession('s1')).toBe(true);
    expect(await a.rules.list()).toStrictEqual([]);
    await expect.poll(async () => (await b.rules.list()).length, { timeout: 20_000 }).toBe(0);

    await b.chat.startRun({ sessionId: 's1', runId: 'r2', message: 'b' });
    const [asked] = await waitingCalls(b.chat, 's1');
    await b.chat.confirm({ sessionId: 's1', approvalId: asked!.approvalId, decision: 'allow' });
    await ended(b.chat, 's1');
    expect(ran).toStrictEqual(['reads a file: b']);
  });
});
