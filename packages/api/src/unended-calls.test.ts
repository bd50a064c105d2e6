import { ApprovalRegistry, defineTool, toolResultText, type ChatMessage } from '@airlock/core';
import { deferred, ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ChatService } from './chat-service';
import { MemoryStore } from './memory-store';
import type { ToolCallRecord } from './store';
import { answerUnansweredCalls, endOfUnended, RUN_END_NOT_STORED } from './unended-calls';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

const BROKEN = 'disk I/O error';

/**
 * A store of one instance whose writes fail while `failing` (with an error it does not call "unavailable for now", so
 * a run meeting it stops rather than pauses), or once when `failOnce` is set.
 */
function failingStore() {
  const store = new MemoryStore();
  const state = { failing: false, failOnce: false };
  const fail = () => {
    if (!state.failing && !state.failOnce) return false;
    state.failOnce = false;
    return true;
  };
  const broken = () => Promise.reject(new Error(BROKEN));
  const one = store.appendEvent.bind(store);
  const many = store.appendEvents.bind(store);
  const message = store.appendMessage.bind(store);
  const endRun = store.endRun.bind(store);
  const update = store.updateSession.bind(store);
  store.appendEvent = (input) => (fail() ? broken() : one(input));
  store.appendEvents = (inputs) => (fail() ? broken() : many(inputs));
  store.appendMessage = (...args) => (state.failing ? broken() : message(...args));
  const begin = store.beginRun.bind(store);
  store.beginRun = (beginning) => (state.failing ? broken() : begin(beginning));
  store.endRun = (...args) => (state.failing ? broken() : endRun(...args));
  store.updateSession = (...args) => (state.failing ? broken() : update(...args));
  return { store, state };
}

/** A tool that says it runs, then waits for `release` before it answers. */
function gatedTool(started: () => void, release: Promise<void>) {
  return defineTool({
    name: 'slow',
    description: 'runs until released',
    parameters: z.object({}),
    annotations: { executesCode: false },
    execute: async () => {
      started();
      await release;
      return 'done';
    },
  });
}

async function start(store: MemoryStore, steps: ScriptStep[], lines: string[], release: Promise<void> = new Promise(() => {}), started = () => {}) {
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [gatedTool(started, release)], store, suspendRunsOnShutdown: true, log: (line) => lines.push(line) });
  services.push(chat);
  await chat.open();
  return { chat, model };
}

async function runEnded(chat: ChatService, sessionId: string) {
  await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === sessionId)?.activeRunId).toBeNull(), { timeout: 10_000 });
}

/** Starts run r1 of chat s, whose call of `slow` (id call_0, run unasked) ends while the store's writes fail. */
async function callEndsWhileWritesFail(store: MemoryStore, state: { failing: boolean; failOnce: boolean }, steps: ScriptStep[], lines: string[], once = false) {
  const release = deferred();
  const running = deferred();
  const process = await start(store, [toolCallStep({ name: 'slow', arguments: {} }), ...steps], lines, release.promise, () => running.resolve());
  await process.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go', options: { confirmToolCalls: false } });
  await running.promise;
  if (once) state.failOnce = true;
  else state.failing = true;
  release.resolve();
  await runEnded(process.chat, 's');
  return process;
}

const interrupted = { outcome: 'interrupted', result: toolResultText.endNotStored('slow') };

describe('a call whose end could not be stored', () => {
  it('ends as interrupted in the ledger when the chat’s next run starts, and the model reads its result before the new message', async () => {
    const { store, state } = failingStore();
    const lines: string[] = [];
    const { chat, model } = await callEndsWhileWritesFail(store, state, [textStep('hello back')], lines);
    expect((await store.listRunToolCalls('r1')).map((call) => call.outcome)).toStrictEqual([null]);

    state.failing = false;
    await chat.startRun({ sessionId: 's', runId: 'r2', message: 'hello again' });
    await runEnded(chat, 's');
    const [row] = await store.listRunToolCalls('r1');
    expect(row).toMatchObject({ ...interrupted, decision: 'allow' });
    expect(row?.startedAt).not.toBeNull();
    expect(row?.endedAt).not.toBeNull();
    expect((await store.getRun('r1'))?.endedAt).not.toBeNull();
    expect((await store.loadEvents('r1', 0)).slice(-2)).toStrictEqual([
      { type: 'tool-end', toolCallId: 'call_0', toolName: 'slow', ...interrupted, startedAt: row!.startedAt },
      { type: 'run-end', runId: 'r1', reason: 'error', error: RUN_END_NOT_STORED },
    ]);
    const sent = model.requests[1]!.messages.filter((message) => message.role !== 'system');
    expect(sent.slice(-2)).toStrictEqual([
      { role: 'tool', toolCallId: 'call_0', toolName: 'slow', content: interrupted.result },
      { role: 'user', content: 'hello again' },
    ]);
    expect((await chat.getSession('s')).toolCalls.map((call) => call.outcome)).toStrictEqual(['interrupted']);
    expect(lines).toContain(`Could not record how the calls of run r1 ended: ${BROKEN}; recorded when the chat's next run starts, unless Airlock restarts first: the run is then taken up as stored`);
    expect(lines).toContain('Run r1 had stopped without its end stored; recorded now, with slow (call_0) interrupted');
  });

  it('ends as interrupted at once when the store takes the run’s end, with its result in the conversation', async () => {
    const { store, state } = failingStore();
    const lines: string[] = [];
    const { chat, model } = await callEndsWhileWritesFail(store, state, [textStep('hello back')], lines, true);
    expect((await store.listRunToolCalls('r1')).map((call) => [call.outcome, call.result])).toStrictEqual([[interrupted.outcome, interrupted.result]]);
    const events = await store.loadEvents('r1', 0);
    expect(events.at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'error', error: `The run stopped: ${BROKEN}` });
    expect((await store.getRun('r1'))?.endedAt).not.toBeNull();
    expect(lines).toContain('Run r1 had stopped without its end stored; recorded now, with slow (call_0) interrupted');

    await chat.startRun({ sessionId: 's', runId: 'r2', message: 'hello again' });
    await runEnded(chat, 's');
    const sent = model.requests[1]!.messages.filter((message) => message.role !== 'system');
    expect(sent.slice(-2)).toStrictEqual([
      { role: 'tool', toolCallId: 'call_0', toolName: 'slow', content: interrupted.result },
      { role: 'user', content: 'hello again' },
    ]);
  });

  it('ends as interrupted at the next start when a newer run of the chat followed it, and the model reads a result for it', async () => {
    const { store, state } = failingStore();
    const lines: string[] = [];
    const first = await callEndsWhileWritesFail(store, state, [], lines);
    await first.chat.shutdown();
    state.failing = false;
    // A newer run of the chat, stored as one was before its start wrote the end of the run before it.
    await store.createRun({ runId: 'r2', sessionId: 's', options: {}, startedAt: Date.now(), endedAt: null, endReason: null });
    await store.appendMessage('s', { role: 'user', content: 'hello again' }, Date.now(), { runId: 'r2' });
    await store.appendMessage('s', { role: 'assistant', content: 'hello back' }, Date.now(), { runId: 'r2' });
    await store.updateSession('s', { lastRunId: 'r2' });
    await store.endRun('r2', 'done', Date.now());

    const { chat, model } = await start(store, [textStep('fine')], lines);
    expect((await store.listRunToolCalls('r1')).map((call) => [call.outcome, call.result])).toStrictEqual([[interrupted.outcome, interrupted.result]]);
    expect((await store.getRun('r1'))?.endedAt).not.toBeNull();
    expect((await store.loadEvents('r1', 0)).at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'error', error: RUN_END_NOT_STORED });
    expect(chat.listSessions()[0]?.activeRunId).toBeNull();

    await chat.startRun({ sessionId: 's', runId: 'r3', message: 'and now?' });
    await runEnded(chat, 's');
    const sent = model.requests[0]!.messages.filter((message) => message.role !== 'system');
    expect(sent.map((message) => message.role)).toStrictEqual(['user', 'assistant', 'tool', 'user', 'assistant', 'user']);
    expect(sent[2]).toStrictEqual({ role: 'tool', toolCallId: 'call_0', toolName: 'slow', content: interrupted.result });
  });
});

describe('a call whose end could not be stored because the store could not take writes for now', () => {
  it('is recorded interrupted once its paused run is taken up, and the model is not told the server stopped', async () => {
    const { store, state } = failingStore();
    const unavailable = Object.assign(store, { isUnavailable: (error: unknown) => error instanceof Error && error.message === BROKEN });
    const lines: string[] = [];
    const release = deferred();
    const running = deferred();
    const model = new ScriptedModel([toolCallStep({ name: 'slow', arguments: {} }), textStep('done')]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [gatedTool(() => running.resolve(), release.promise)], store: unavailable, log: (line) => lines.push(line), retryStoreAfterMs: 20 });
    services.push(chat);
    await chat.open();
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go', options: { confirmToolCalls: false } });
    await running.promise;
    state.failing = true;
    release.resolve();
    await vi.waitFor(() => expect(chat.listSessions()[0]?.paused).toBe(BROKEN));
    state.failing = false;
    await runEnded(chat, 's');
    expect((await store.listRunToolCalls('r1')).map((call) => [call.outcome, call.result])).toStrictEqual([[interrupted.outcome, interrupted.result]]);
    expect(model.requests[1]!.messages.at(-1)).toStrictEqual({ role: 'tool', toolCallId: 'call_0', toolName: 'slow', content: interrupted.result });
  });
});

describe('answerUnansweredCalls', () => {
  const call = (id: string) => ({ id, name: 'slow', arguments: {} });
  const asked: ChatMessage = { role: 'assistant', content: '', toolCalls: [call('a'), call('b')] };
  const answer = (id: string): ChatMessage => ({ role: 'tool', toolCallId: id, toolName: 'slow', content: 'done' });
  const filled = (id: string): ChatMessage => ({ role: 'tool', toolCallId: id, toolName: 'slow', content: toolResultText.endNotStored('slow') });

  it('gives a call with no result before the next message one, after the results it has', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'go' }, asked, answer('a'), { role: 'user', content: 'again' }];
    expect(answerUnansweredCalls(messages)).toStrictEqual([{ role: 'user', content: 'go' }, asked, answer('a'), filled('b'), { role: 'user', content: 'again' }]);
  });

  it('leaves the last turn’s calls, which may be going, and a conversation with nothing missing, as they are', () => {
    const going: ChatMessage[] = [{ role: 'user', content: 'go' }, asked, answer('b')];
    expect(answerUnansweredCalls(going)).toBe(going);
    const whole: ChatMessage[] = [{ role: 'user', content: 'go' }, asked, answer('b'), answer('a'), { role: 'assistant', content: 'ok' }];
    expect(answerUnansweredCalls(whole)).toBe(whole);
  });
});

describe('endOfUnended', () => {
  const denied = (more: Partial<ToolCallRecord>): ToolCallRecord => ({
    runId: 'r1',
    sessionId: 's',
    toolCallId: 'c1',
    toolName: 'read_file',
    arguments: { path: 'secret/key' },
    editedArguments: null,
    approvalId: 'a1',
    executesCode: false,
    toolVersion: 'v1',
    tool: null,
    exactGrantsOnly: false,
    askedBecause: null,
    requestedAt: 1,
    expiresAt: null,
    decision: 'deny',
    source: 'user',
    reason: 'not now',
    decidedByGrant: null,
    decidedByRule: null,
    decidedByRuleText: null,
    decidedAt: 2,
    connectionId: null,
    clientLabel: null,
    startedAt: null,
    outcome: null,
    result: null,
    cut: null,
    endedAt: null,
    ...more,
  });

  it('tells a deny whose end was not stored as the loop told it: a rule’s as the rule’s, from the workspace’s rules file when the row says so, never as the person’s words', () => {
    const byRule = { source: 'rule' as const, reason: 'Denied by a rule: “keys stay put”', decidedByRule: 'rule_1' };
    expect(endOfUnended(denied({}))).toStrictEqual({ outcome: 'denied', result: toolResultText.denied('read_file', 'not now') });
    expect(endOfUnended(denied(byRule))).toStrictEqual({ outcome: 'denied', result: toolResultText.deniedByRule('read_file', byRule.reason) });
    expect(endOfUnended(denied({ ...byRule, decidedByRuleFromWorkspaceFile: true }))).toStrictEqual({ outcome: 'denied', result: toolResultText.deniedByRule('read_file', byRule.reason, true) });
  });

  it('tells a rule’s deny of a call the person edited and allowed as the loop told it: the edit first, and the rule from the workspace’s rules file by its id, when the row was written without that origin', () => {
    const edited = { path: 'secret/key' };
    const fromFile = { source: 'rule' as const, reason: 'Denied by a rule: “keys stay put”', decidedByRule: 'workspace-file:d944f827ad1a:0', editedArguments: edited };
    expect(endOfUnended(denied(fromFile))).toStrictEqual({ outcome: 'denied', result: toolResultText.edited(edited, toolResultText.deniedByRule('read_file', fromFile.reason, true), false) });
    expect(endOfUnended(denied({ ...fromFile, decidedByRule: 'rule_1' }))).toStrictEqual({ outcome: 'denied', result: toolResultText.edited(edited, toolResultText.deniedByRule('read_file', fromFile.reason), false) });
  });
});
