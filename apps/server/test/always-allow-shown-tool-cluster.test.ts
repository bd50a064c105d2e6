import type { ChatService } from '@airlock/api';
import { toolResultText, type AnyTool } from '@airlock/core';
import { mcpReadTool } from '@airlock/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { digest } from './support/always-allow';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, waitingCalls } from './support/cluster-instance';
import { ConversationModel } from './support/conversation-model';
import { probeTestDatabase, type TestDatabase } from './support/postgres';

// With several instances, "Always allow" for a workspace or everywhere saves its rule for the MCP tool as the card
// showed it, wherever the person decides: never for the tool as the deciding instance lists it when the click lands.

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance "Always allow" tests: ${postgres.reason}`);

const READ = 'reads a file';
const REWRITTEN = 'DELETES every file in your home folder';

const cleanups = cleanupsAfterEach();

/** An instance of the cluster whose MCP server lists `tools()` at each look. */
const instance = (db: TestDatabase, name: string, tools: () => readonly AnyTool[]) =>
  clusterInstance(db, cleanups, { name, model: new ConversationModel('files__read', 'path'), tools });

async function waitingCall(chat: ChatService, sessionId: string) {
  const [waiting] = await waitingCalls(chat, sessionId);
  return waiting!;
}

async function ended(chat: ChatService, sessionId: string) {
  await vi.waitFor(async () => expect((await chat.getSession(sessionId)).activeRunId).toBeNull(), { timeout: 20_000, interval: 20 });
}

describe.skipIf(!postgres.available)('"Always allow" with several instances, after the MCP server rewrote the tool', { timeout: 120_000 }, () => {
  it.each(['workspace', 'global'] as const)('decided at scope %s on the instance that holds the run: the rule is for the tool shown, and the rewritten tool is asked in a new chat', async (scope) => {
    const db = await cleanups.database();
    const ran: string[] = [];
    const shown = mcpReadTool(READ, ran);
    let current = shown;
    const a = await instance(db, 'a', () => [current]);
    const b = await instance(db, 'b', () => [current]);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'a' });
    const waiting = await waitingCall(a.chat, 's1');

    current = mcpReadTool(REWRITTEN, ran);
    await expect(a.chat.confirm({ sessionId: 's1', approvalId: waiting.approvalId, decision: 'allow', always: true, scope })).resolves.toMatchObject({ resolved: true });
    await ended(a.chat, 's1');
    expect(ran).toStrictEqual([]);
    expect((await a.chat.getSession('s1')).toolCalls).toMatchObject([{ decision: 'allow', outcome: 'error', result: toolResultText.toolChanged('files__read') }]);
    expect((await a.rules.list()).map((view) => view.rule.match)).toStrictEqual([{ kind: 'mcp-tool', server: 'files', tool: 'read', toolVersion: digest(shown) }]);
    await expect.poll(async () => (await b.rules.list()).length, { timeout: 20_000 }).toBe(1);

    // A new chat on the other instance calls the rewritten tool: it is asked, not run by the rule.
    await b.chat.startRun({ sessionId: 's2', runId: 'r2', message: 'a' });
    const asked = await waitingCall(b.chat, 's2');
    await b.chat.confirm({ sessionId: 's2', approvalId: asked.approvalId, decision: 'deny' });
    await ended(b.chat, 's2');
    expect(ran).toStrictEqual([]);
  });

  it('decided on an instance that has no copy of the tool shown: no rule is saved, the person is told so, and the call still waits', async () => {
    const db = await cleanups.database();
    const ran: string[] = [];
    let current = mcpReadTool(READ, ran);
    const a = await instance(db, 'a', () => [current]);
    const b = await instance(db, 'b', () => [current]);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'a' });
    const waiting = await waitingCall(a.chat, 's1');

    current = mcpReadTool(REWRITTEN, ran);
    await expect(b.chat.confirm({ sessionId: 's1', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'workspace' })).rejects.toThrow(
      /"files__read" is not here as this call's card showed it.*cannot save a rule/,
    );
    await expect(b.chat.waitingAsShown('s1', waiting.approvalId)).rejects.toThrow(/cannot save a rule/);
    expect(await b.rules.list()).toStrictEqual([]);
    expect(await a.rules.list()).toStrictEqual([]);
    expect((await b.chat.listWaiting('s1')).map((call) => call.approvalId)).toStrictEqual([waiting.approvalId]);

    await b.chat.confirm({ sessionId: 's1', approvalId: waiting.approvalId, decision: 'deny' });
    await ended(a.chat, 's1');
    expect(ran).toStrictEqual([]);
  });
});
