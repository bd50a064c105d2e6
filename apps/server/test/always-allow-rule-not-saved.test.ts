import { ChatService, MemoryStore } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RuleBook } from '../src/rules';
import { ended, waitingCall } from './support/always-allow';
import { recordingTool } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('"Always allow" whose rule cannot be saved once the allow is stored', () => {
  it('answers the allow as resolved, says the rule was not saved, and logs why; the call runs once', async () => {
    const store = new MemoryStore();
    const rules = await RuleBook.open({ store, workspace: tmpdir(), log: () => undefined });
    const { tool, calls } = recordingTool();
    const logged: string[] = [];
    const model = new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'once' } }), textStep('done')]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [tool], store, rules, log: (line) => logged.push(line) });
    cleanups.push(() => chat.shutdown());
    await chat.open();
    await chat.startRun({ sessionId: 'a', runId: 'r1', message: 'echo once' });
    const waiting = await waitingCall(chat, 'a');
    vi.spyOn(rules, 'add').mockRejectedValue(new Error('EIO: /data/airlock.db: i/o error'));
    expect(await chat.confirm({ sessionId: 'a', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'workspace' })).toStrictEqual({
      resolved: true,
      status: 'resolved',
      decision: 'allow',
      alwaysNotSaved: 'the rule could not be saved',
    });
    await ended(chat, 'a');
    expect(calls).toStrictEqual(['once']);
    expect(await rules.list()).toStrictEqual([]);
    expect(logged.filter((line) => line.includes('EIO: /data/airlock.db'))).toHaveLength(1);
  });
});
