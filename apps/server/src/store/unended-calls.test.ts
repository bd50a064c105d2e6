import { ChatService, type AirlockStore } from '@airlock/api';
import { ApprovalRegistry, toolResultText } from '@airlock/core';
import { ScriptedModel, textStep } from '@airlock/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { storeImplementations } from './store-implementations';
import { run, session, startChange } from './test-support';

// PostgreSQL keeps one unfinished run per chat: a newer run cannot be stored beside one not marked ended.
const implementations = (await storeImplementations()).filter(({ name }) => !name.startsWith('PostgresStore'));

/**
 * A chat as a store kept it when a call's end could not be written and a newer run of the chat followed without
 * writing it either: run r1's call of terminal started and has no end, r1 is not marked ended, and r2 answered after.
 */
async function storeRunLeftRunning(store: AirlockStore): Promise<{ startedAt: number }> {
  const start = { ...startChange('call_0', 2_100), approvalId: '' };
  const startedAt = 2_300;
  await store.createSession(session('s'));
  await store.createRun(run('r1', 's', 2_000));
  await store.appendMessage('s', { role: 'user', content: 'go' }, 2_000, { runId: 'r1' });
  const assistant = { role: 'assistant' as const, content: '', toolCalls: [{ id: 'call_0', name: 'terminal', arguments: start.arguments }] };
  const base = { runId: 'r1', sessionId: 's' };
  await store.appendEvents([
    { ...base, seq: 1, at: 2_100, event: { type: 'tool-start', toolCallId: 'call_0', toolName: 'terminal', arguments: start.arguments, approvalId: '', awaitingConfirmation: false }, ledger: start, messages: [assistant] },
    { ...base, seq: 2, at: 2_200, event: { type: 'tool-decision', toolCallId: 'call_0', approvalId: '', decision: 'allow', source: 'confirmation-off' }, ledger: { kind: 'decision', toolCallId: 'call_0', decision: 'allow', source: 'confirmation-off', decidedAt: 2_200 } },
    { ...base, seq: 3, at: startedAt, event: { type: 'status', text: 'Running terminal', toolCallId: 'call_0' }, ledger: { kind: 'running', toolCallId: 'call_0', startedAt } },
  ]);
  await store.createRun(run('r2', 's', 3_000));
  await store.appendMessage('s', { role: 'user', content: 'hello again' }, 3_000, { runId: 'r2' });
  await store.appendMessage('s', { role: 'assistant', content: 'hello back' }, 3_100, { runId: 'r2' });
  await store.updateSession('s', { lastRunId: 'r2', updatedAt: 3_100 });
  await store.endRun('r2', 'done', 3_200);
  return { startedAt };
}

describe.each(implementations)('a call left running by a run a newer run followed: $name', ({ open }) => {
  it('is recorded interrupted at the next start, its start kept, its run ended; the model reads a result for it', async () => {
    await using opened = await open();
    const { store } = opened;
    const { startedAt } = await storeRunLeftRunning(store);
    const model = new ScriptedModel([textStep('fine')]);
    const lines: string[] = [];
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [], store, log: (line) => lines.push(line) });
    try {
      expect(await chat.open()).toStrictEqual({ sessions: 1, resumedRuns: 0 });
      const result = toolResultText.endNotStored('terminal');
      const [row] = (await store.listAudit({ sessionId: 's' })).entries;
      expect(row).toMatchObject({ runId: 'r1', decision: 'allow', startedAt, outcome: 'interrupted', result });
      expect(row?.endedAt).not.toBeNull();
      expect((await store.getRun('r1'))?.endedAt).not.toBeNull();
      expect(await store.loadEvents('r1', 3)).toStrictEqual([
        { type: 'tool-end', toolCallId: 'call_0', toolName: 'terminal', outcome: 'interrupted', result, startedAt },
        { type: 'run-end', runId: 'r1', reason: 'error', error: 'The run stopped before its end could be stored.' },
      ]);
      expect(lines).toStrictEqual(['Run r1 had stopped without its end stored; recorded now, with terminal (call_0) interrupted']);

      await chat.startRun({ sessionId: 's', runId: 'r3', message: 'and now?' });
      await vi.waitFor(() => expect(chat.listSessions()[0]?.activeRunId).toBeNull());
      expect(model.requests[0]!.messages.map((message) => (message.role === 'tool' ? [message.toolCallId, message.content] : message.role))).toStrictEqual([
        'user',
        'assistant',
        ['call_0', result],
        'user',
        'assistant',
        'user',
      ]);
    } finally {
      await chat.shutdown();
    }
  });
});
