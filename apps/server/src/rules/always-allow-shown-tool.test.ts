import { ChatService, MemoryStore, type AirlockStore } from '@airlock/api';
import { ApprovalRegistry, toolResultText, type AnyTool } from '@airlock/core';
import { mcpReadTool, ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { TRPCError } from '@trpc/server';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { apiCaller, digest, ended, waitingCall } from '../../test/support/always-allow';
import { RuleBook } from './rule-book';

// "Always allow" for a workspace or everywhere saves a lasting rule for an MCP tool "as it is now": the tool as the
// person's card showed it. An MCP server may rewrite the tool (tools/list_changed) or go away while the card waits;
// the rule must never be for a version the person was not shown, nor for the tool's name alone.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const READ = 'reads a file';
const REWRITTEN = 'DELETES every file in your home folder';
const read = (path: string) => toolCallStep({ name: 'files__read', arguments: { path } });

/** One server process over `store`: its rules, a chat service whose tools are `tools()` at each look, and an API caller. */
async function serve(store: AirlockStore, steps: ScriptStep[], tools: () => readonly AnyTool[]) {
  const rules = await RuleBook.open({ store, workspace: tmpdir(), log: () => undefined });
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools, store, rules, suspendRunsOnShutdown: true });
  cleanups.push(() => chat.shutdown());
  await chat.open();
  const api = apiCaller(chat, rules, tools);
  return { chat, rules, api };
}

describe('"Always allow" saves its rule for the MCP tool as the card showed it', () => {
  it.each(['workspace', 'global'] as const)(
    'at scope %s, clicked after the server rewrote the tool: the rule is the one previewed, for the tool shown, and the rewritten tool is asked in a new chat',
    async (scope) => {
      const ran: string[] = [];
      const shown = mcpReadTool(READ, ran);
      const rewritten = mcpReadTool(REWRITTEN, ran);
      let current = shown;
      const { chat, rules, api } = await serve(new MemoryStore(), [read('a'), textStep('one'), read('a'), textStep('two'), read('a'), textStep('three')], () => [current]);
      await chat.startRun({ sessionId: 'a', runId: 'r1', message: 'read a' });
      const waiting = await waitingCall(chat, 'a');
      const previewed = await api.rules.propose({ sessionId: 'a', approvalId: waiting.approvalId, scope });

      // The server rewrites the tool while the person reads the card.
      current = rewritten;
      // A preview asked for now still names the tool the card showed.
      expect((await api.rules.propose({ sessionId: 'a', approvalId: waiting.approvalId, scope })).draft).toStrictEqual(previewed.draft);
      await chat.confirm({ sessionId: 'a', approvalId: waiting.approvalId, decision: 'allow', always: true, scope });
      await ended(chat, 'a');
      // This call is not run: the allow was for the tool shown, not the one its server has now.
      expect(ran).toStrictEqual([]);
      expect((await chat.getSession('a')).toolCalls).toMatchObject([{ decision: 'allow', outcome: 'error', result: toolResultText.toolChanged('files__read') }]);

      const saved = await rules.list();
      expect(saved.map((view) => view.rule.match)).toStrictEqual([{ kind: 'mcp-tool', server: 'files', tool: 'read', toolVersion: digest(shown) }]);
      expect(saved[0]!.rule.match).toStrictEqual(previewed.draft.match);

      // In a new chat, the rewritten tool is asked about, not run by the rule.
      await chat.startRun({ sessionId: 'b', runId: 'r2', message: 'read a again' });
      const asked = await waitingCall(chat, 'b');
      await chat.confirm({ sessionId: 'b', approvalId: asked.approvalId, decision: 'deny' });
      await ended(chat, 'b');
      expect(ran).toStrictEqual([]);

      // The tool as it was shown is what the rule allows.
      current = shown;
      await chat.startRun({ sessionId: 'c', runId: 'r3', message: 'read a once more' });
      await ended(chat, 'c');
      expect(ran).toStrictEqual([`${READ}: a`]);
      expect((await chat.getSession('c')).toolCalls).toMatchObject([{ decision: 'allow', source: 'rule', decidedByRule: saved[0]!.rule.id }]);
    },
  );

  it('clicked while the server is gone (restarting): the rule still names the tool shown, not just its name and arguments, and the tool that comes back rewritten is asked', async () => {
    const ran: string[] = [];
    const shown = mcpReadTool(READ, ran);
    let current: AnyTool[] = [shown];
    const { chat, rules, api } = await serve(new MemoryStore(), [read('a'), textStep('one'), read('a'), textStep('two')], () => current);
    await chat.startRun({ sessionId: 'a', runId: 'r1', message: 'read a' });
    const waiting = await waitingCall(chat, 'a');
    const previewed = await api.rules.propose({ sessionId: 'a', approvalId: waiting.approvalId, scope: 'workspace' });

    current = [];
    expect((await api.rules.propose({ sessionId: 'a', approvalId: waiting.approvalId, scope: 'workspace' })).draft).toStrictEqual(previewed.draft);
    await chat.confirm({ sessionId: 'a', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'workspace' });
    await ended(chat, 'a');
    expect(ran).toStrictEqual([]);
    expect((await rules.list()).map((view) => view.rule.match)).toStrictEqual([{ kind: 'mcp-tool', server: 'files', tool: 'read', toolVersion: digest(shown) }]);

    // The server comes back with the tool rewritten: its call with the very same arguments is asked.
    current = [mcpReadTool(REWRITTEN, ran)];
    await chat.startRun({ sessionId: 'b', runId: 'r2', message: 'read a again' });
    const asked = await waitingCall(chat, 'b');
    await chat.confirm({ sessionId: 'b', approvalId: asked.approvalId, decision: 'deny' });
    await ended(chat, 'b');
    expect(ran).toStrictEqual([]);
  });

  it('with no copy of the tool shown left (the server restarted with the tool rewritten): no rule is saved, the person is told so, and the call still waits', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const before = await serve(store, [read('a')], () => [mcpReadTool(READ, ran)]);
    await before.chat.startRun({ sessionId: 'a', runId: 'r1', message: 'read a' });
    const waiting = await waitingCall(before.chat, 'a');
    await before.chat.shutdown();

    // Airlock starts again; the MCP server now lists the tool rewritten.
    const { chat, rules, api } = await serve(store, [textStep('done')], () => [mcpReadTool(REWRITTEN, ran)]);
    expect((await waitingCall(chat, 'a')).approvalId).toBe(waiting.approvalId);
    await expect(api.rules.propose({ sessionId: 'a', approvalId: waiting.approvalId, scope: 'workspace' })).rejects.toThrow(TRPCError);
    await expect(api.rules.propose({ sessionId: 'a', approvalId: waiting.approvalId, scope: 'workspace' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(chat.confirm({ sessionId: 'a', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'global' })).rejects.toThrow(
      /"files__read" is not here as this call's card showed it.*cannot save a rule/,
    );
    expect(await rules.list()).toStrictEqual([]);
    expect(chat.pending('a').map((p) => p.approvalId)).toStrictEqual([waiting.approvalId]);
    await chat.confirm({ sessionId: 'a', approvalId: waiting.approvalId, decision: 'deny' });
    await ended(chat, 'a');
    expect(ran).toStrictEqual([]);
  });
});
