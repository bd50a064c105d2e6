import { ApprovalRegistry, ConcurrencyLimit, defineTool, toolResultText, type AnyTool, type ChatModel } from '@airlock/core';
import { deferred, ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ChatService, MAX_DETAIL_CHARS, MAX_DETAIL_MESSAGES, type ChatServiceOptions } from './chat-service';
import type { RuleService } from './context';
import { MemoryStore } from './memory-store';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

function echoTool(ran: string[], hold?: Promise<void>): AnyTool {
  return defineTool({
    name: 'echo',
    description: 'echoes',
    parameters: z.object({ text: z.string() }),
    annotations: { executesCode: true },
    execute: async ({ text }, { signal }) => {
      ran.push(text);
      if (hold) await Promise.race([hold, new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped'))))]);
      return `echo: ${text}`;
    },
  });
}

/** The echo tool's name and schema around `execute`. */
function echoWith(execute: (text: string) => Promise<string>): AnyTool {
  return defineTool({ name: 'echo', description: 'echoes', parameters: z.object({ text: z.string() }), annotations: { executesCode: true }, execute: ({ text }) => execute(text) });
}

/** One server process: a ChatService over the given store, as create-services wires it. */
async function start(store: MemoryStore, steps: ScriptStep[], tools: AnyTool[], extra: Partial<ChatServiceOptions> = {}) {
  const model: ChatModel = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, suspendRunsOnShutdown: true, ...extra });
  services.push(chat);
  const opened = await chat.open();
  return { chat, model: model as ScriptedModel, opened };
}

const echoCall = (text: string) => toolCallStep({ name: 'echo', arguments: { text } });

async function runEnded(chat: ChatService, sessionId: string) {
  await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === sessionId)?.activeRunId).toBeNull());
}

describe('ChatService decisions', () => {
  it('answers an allow that a deny rule made while the call waited then refused with the deny, and runs nothing', async () => {
    const ran: string[] = [];
    let denying = false;
    const rules = {
      evaluate: () => Promise.resolve(denying ? { effect: 'deny' as const, ruleId: 'rule_1', description: [{ text: 'Deny echo everywhere' }] } : undefined),
      version: () => (denying ? 2 : 1),
    } as Partial<RuleService> as RuleService;
    const { chat } = await start(new MemoryStore(), [echoCall('hi'), echoCall('again'), textStep('done')], [echoTool(ran)], { rules });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'say hi' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    // Before any rule changes, an allow is answered as an allow, and runs.
    expect(await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    denying = true;
    expect(await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' })).toMatchObject({ resolved: true, status: 'resolved', decision: 'deny' });
    await runEnded(chat, 's');
    expect(ran).toStrictEqual(['hi']);
  });

  it('a repeat or a stranger’s confirm right after the decision leaves the ledger naming who decided', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const { chat } = await start(store, [echoCall('hi'), textStep('done')], [echoTool(ran)]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'say hi' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    const [waiting] = chat.pending('s');
    // All three before the decision event is written: the loop records it a few turns of the event loop later.
    const answers = await Promise.all([
      chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'allow', by: { connectionId: 'conn_person', clientLabel: 'the-person' } }),
      chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'deny', by: { connectionId: 'conn_repeat', clientLabel: 'repeat' } }),
      chat.confirm({ sessionId: 'other', approvalId: waiting!.approvalId, decision: 'deny', by: { connectionId: 'conn_stranger', clientLabel: 'stranger' } }),
    ]);
    expect(answers.map((a) => a.status)).toStrictEqual(['resolved', 'already-decided', 'not-found']);
    await runEnded(chat, 's');
    expect(ran).toStrictEqual(['hi']);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'allow', outcome: 'executed', connectionId: 'conn_person', clientLabel: 'the-person' }]);
  });
});

describe('ChatService writes', () => {
  /** The types of the events in each write to the store, in order. */
  function writesOf(store: MemoryStore): string[][] {
    const writes: string[][] = [];
    const one = store.appendEvent.bind(store);
    const many = store.appendEvents.bind(store);
    let inMany = false;
    store.appendEvent = async (input) => {
      if (!inMany) writes.push([input.event.type]);
      return one(input);
    };
    store.appendEvents = async (inputs) => {
      writes.push(inputs.map((input) => input.event.type));
      inMany = true;
      try {
        return await many(inputs);
      } finally {
        inMany = false;
      }
    };
    return writes;
  }

  it("stores a person's refusal on its own, before its call's end: one that cannot be stored is known before anything follows it", async () => {
    const store = new MemoryStore();
    const writes = writesOf(store);
    const ran: string[] = [];
    const { chat } = await start(store, [echoCall('rm'), textStep('ok')], [echoTool(ran)]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'deny', reason: 'no' });
    await runEnded(chat, 's');
    expect(ran).toStrictEqual([]);
    const decision = writes.findIndex((types) => types.includes('tool-decision'));
    expect(writes.slice(decision, decision + 2)).toStrictEqual([['tool-decision'], ['tool-end']]);
    const stored = (await store.loadEvents('r1', 0)).map((event) => event.type);
    expect(stored.slice(stored.indexOf('tool-decision'), stored.indexOf('tool-decision') + 2)).toStrictEqual(['tool-decision', 'tool-end']);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'deny', reason: 'no', outcome: 'denied', startedAt: null }]);
  });

  it('stores a refusal made while another call of the batch runs at once, not with that call’s end', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const hold = deferred<void>();
    const { chat } = await start(store, [toolCallStep({ name: 'echo', arguments: { text: 'a' } }, { name: 'echo', arguments: { text: 'b' } }), textStep('ok')], [echoTool(ran, hold.promise)]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(2));
    const [first, second] = chat.pending('s');
    await chat.confirm({ sessionId: 's', approvalId: first!.approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(ran).toStrictEqual(['a']));
    await chat.confirm({ sessionId: 's', approvalId: second!.approvalId, decision: 'deny', reason: 'not b' });
    // The first call still runs: the denial of the second is stored on its own meanwhile.
    await vi.waitFor(async () => expect((await store.listRunToolCalls('r1')).map((call) => call.decision)).toStrictEqual(['allow', 'deny']));
    expect((await store.loadEvents('r1', 0)).filter((event) => event.type === 'tool-end')).toStrictEqual([]);
    hold.resolve();
    await runEnded(chat, 's');
    expect(ran).toStrictEqual(['a']);
  });

  it('stores an allow with the call’s start, in one write, before the tool runs', async () => {
    const store = new MemoryStore();
    const writes = writesOf(store);
    const writtenWhenRan: string[][][] = [];
    const tool = echoWith(async (text) => {
      writtenWhenRan.push(structuredClone(writes));
      return text;
    });
    const { chat } = await start(store, [echoCall('ls'), textStep('ok')], [tool]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await runEnded(chat, 's');
    expect(writtenWhenRan).toHaveLength(1);
    expect(writtenWhenRan[0]!.at(-1)).toStrictEqual(['tool-decision', 'status']);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'allow', outcome: 'executed', startedAt: expect.any(Number) }]);
  });

  it('stores a person’s deny on its own, before the call’s end', async () => {
    const store = new MemoryStore();
    const writes = writesOf(store);
    const { chat } = await start(store, [echoCall('rm'), textStep('ok')], [echoWith(async (text) => text)]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'deny', reason: 'no' });
    await runEnded(chat, 's');
    expect(writes.filter((write) => write.includes('tool-decision'))).toStrictEqual([['tool-decision']]);
  });
});

describe('ChatService tool slots', () => {
  it('runs an allowed call only once a place among the running calls is free, whichever chat it is in', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const first = deferred<void>();
    const slots = new ConcurrencyLimit(1);
    const tool = echoWith(async (text) => {
      ran.push(text);
      if (text === 'a') await first.promise;
      return text;
    });
    const { chat } = await start(store, [echoCall('a'), echoCall('b'), textStep('done'), textStep('done')], [tool], { toolSlots: slots });
    await chat.startRun({ sessionId: 'A', runId: 'rA', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('A')).toHaveLength(1));
    await chat.startRun({ sessionId: 'B', runId: 'rB', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('B')).toHaveLength(1));
    await chat.confirm({ sessionId: 'A', approvalId: chat.pending('A')[0]!.approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(ran).toStrictEqual(['a']));
    await chat.confirm({ sessionId: 'B', approvalId: chat.pending('B')[0]!.approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(slots.waiting).toBe(1));
    expect(ran).toStrictEqual(['a']);
    first.resolve();
    await runEnded(chat, 'A');
    await runEnded(chat, 'B');
    expect(ran).toStrictEqual(['a', 'b']);
    expect(slots.size).toBe(0);
    // The ledger says when each began to run (the second once it had a place, after its decision).
    const [a] = (await chat.getSession('A')).toolCalls;
    const [b] = (await chat.getSession('B')).toolCalls;
    expect(b).toMatchObject({ decision: 'allow', outcome: 'executed' });
    expect(b!.startedAt).toBeGreaterThanOrEqual(a!.startedAt!);
    expect(b!.startedAt).toBeGreaterThanOrEqual(b!.decidedAt!);
  });

  it('a call let through unasked that waits for a place is judged at its turn: confirmation turned back on meanwhile has it asked, nothing of it stored before', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const slots = new ConcurrencyLimit(1);
    const other = slots.tryAcquire()!;
    const { chat } = await start(store, [echoCall('later'), textStep('done')], [echoTool(ran)], { toolSlots: slots });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go', options: { confirmToolCalls: false } });
    await vi.waitFor(() => expect(slots.waiting).toBe(1));
    expect((await chat.getSession('s')).toolCalls).toStrictEqual([]);
    await chat.updateSession('s', { confirmToolCalls: true });
    other();
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    expect(ran).toStrictEqual([]);
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await runEnded(chat, 's');
    expect(ran).toStrictEqual(['later']);
    expect((await chat.audit({ sessionId: 's' })).entries.map((entry) => [entry.decision, entry.source, entry.outcome])).toStrictEqual([['allow', 'user', 'executed']]);
  });
});

describe('ChatService and its transports', () => {
  it("lets the end of a tool that ran leave before the next model turn is set up, not behind it in the same tick", async () => {
    const ran: string[] = [];
    const scripted = new ScriptedModel([echoCall('hi'), textStep('done')]);
    let turns = 0;
    let toolEndTickOver = false;
    let nextTurnAfterIt: boolean | undefined;
    const model: ChatModel = {
      name: 'watched',
      // Called as the loop sets a turn up: the second call is the turn after the tool's end.
      stream: (request, signal) => {
        if (++turns === 2) nextTurnAfterIt = toolEndTickOver;
        return scripted.stream(request, signal);
      },
    };
    const { chat } = await start(new MemoryStore(), [], [echoTool(ran)], { model: () => model });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'say hi', options: { confirmToolCalls: false } });
    // A transport writes what it was handed in a tick once that tick's jobs are done; a macrotask queued when the
    // tool-end reaches the follower runs only then.
    for await (const event of chat.follow('s', 'r1', 0, (_id, e) => e)) {
      if (event.type === 'tool-end') setImmediate(() => (toolEndTickOver = true));
      if (event.type === 'run-end') break;
    }
    expect(ran).toStrictEqual(['hi']);
    expect(nextTurnAfterIt).toBe(true);
  });
});

describe('ChatService across a restart', () => {
  it('a call waiting for a decision is still waiting after a restart, with the same approval id, and an allow runs it once', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const before = await start(store, [echoCall('hi')], [echoTool(ran)]);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'say hi' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1));
    const [waiting] = before.chat.pending('s');
    await before.chat.shutdown();
    // While it stops, the server keeps saying the run goes on: it does, at the next start.
    expect(before.chat.listSessions()[0]?.activeRunId).toBe('r1');
    expect((await before.chat.getSession('s')).activeRunId).toBe('r1');

    const after = await start(store, [textStep('done')], [echoTool(ran)]);
    expect(after.opened.resumedRuns).toBe(1);
    expect(after.chat.pending('s').map((p) => [p.approvalId, p.expiresAt])).toStrictEqual([[waiting!.approvalId, waiting!.expiresAt]]);
    expect(after.chat.listSessions()[0]?.activeRunId).toBe('r1');
    const result = await after.chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'allow', by: { connectionId: 'conn_x', clientLabel: 'test' } });
    expect(result).toMatchObject({ resolved: true });
    await runEnded(after.chat, 's');
    after.model.assertConsumed();
    expect(ran).toStrictEqual(['hi']);
    const detail = await after.chat.getSession('s');
    expect(detail.messages.map((m) => m.role)).toStrictEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(detail.toolCalls).toMatchObject([{ decision: 'allow', source: 'user', outcome: 'executed', clientLabel: 'test', connectionId: 'conn_x', approvalId: waiting!.approvalId }]);
    // Its events replay without a gap: run-start, then the old tool-start, then what came after the restart.
    const events = await store.loadEvents('r1', 0);
    expect(events.map((e) => e.type)).toStrictEqual(['run-start', 'status', 'tool-start', 'status', 'tool-decision', 'status', 'tool-end', 'text-delta', 'run-end']);
  });

  it('a decision repeated after a restart is answered already-decided with the decision made before it, in its own chat only', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const before = await start(store, [echoCall('hi'), textStep('ok')], [echoTool(ran)]);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'say hi' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1));
    const { approvalId } = before.chat.pending('s')[0]!;
    expect(await before.chat.confirm({ sessionId: 's', approvalId, decision: 'deny', reason: 'not now' })).toStrictEqual({ resolved: true, status: 'resolved', decision: 'deny' });
    await runEnded(before.chat, 's');
    await before.chat.shutdown();

    const after = await start(store, [], [echoTool(ran)]);
    expect(await after.chat.confirm({ sessionId: 's', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'deny' });
    expect(await after.chat.confirm({ sessionId: 'other', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'not-found' });
    expect(await after.chat.confirm({ sessionId: 's', approvalId: 'approval-never', decision: 'allow' })).toStrictEqual({ resolved: false, status: 'not-found' });
    expect(ran).toStrictEqual([]);
  });

  it('a call allowed but still in line for a place when the server stopped runs after the restart, not reported interrupted', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const full = new ConcurrencyLimit(1);
    full.tryAcquire();
    const before = await start(store, [echoCall('later')], [echoTool(ran)], { toolSlots: full });
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1));
    await before.chat.confirm({ sessionId: 's', approvalId: before.chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(full.waiting).toBe(1));
    await before.chat.shutdown();
    expect(ran).toStrictEqual([]);

    const after = await start(store, [textStep('done')], [echoTool(ran)]);
    expect(after.opened.resumedRuns).toBe(1);
    await runEnded(after.chat, 's');
    expect(ran).toStrictEqual(['later']);
    const [call] = (await after.chat.getSession('s')).toolCalls;
    expect(call).toMatchObject({ decision: 'allow', outcome: 'executed', startedAt: expect.any(Number) });
  });

  it('a call let through unasked and still in line when the server stopped is judged again at its turn after the restart', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const full = new ConcurrencyLimit(1);
    full.tryAcquire();
    const before = await start(store, [echoCall('later')], [echoTool(ran)], { toolSlots: full });
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go', options: { confirmToolCalls: false } });
    await vi.waitFor(() => expect(full.waiting).toBe(1));
    await before.chat.shutdown();
    await store.updateSession('s', { confirmToolCalls: true });

    const after = await start(store, [textStep('done')], [echoTool(ran)]);
    expect(after.opened.resumedRuns).toBe(1);
    await vi.waitFor(() => expect(after.chat.pending('s')).toHaveLength(1));
    await after.chat.confirm({ sessionId: 's', approvalId: after.chat.pending('s')[0]!.approvalId, decision: 'deny' });
    await runEnded(after.chat, 's');
    expect(ran).toStrictEqual([]);
    expect((await after.chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'deny', source: 'user', outcome: 'denied', startedAt: null }]);
  });

  it('a call in line at one restart that started after it is interrupted at the next, never run again', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const full = new ConcurrencyLimit(1);
    full.tryAcquire();
    const first = await start(store, [echoCall('once')], [echoTool(ran)], { toolSlots: full });
    await first.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(first.chat.pending('s')).toHaveLength(1));
    await first.chat.confirm({ sessionId: 's', approvalId: first.chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(full.waiting).toBe(1));
    await first.chat.shutdown();
    // The next process has places free: the call starts at once, and is still running when that process stops.
    const second = await start(store, [], [echoTool(ran, new Promise(() => {}))], { toolSlots: new ConcurrencyLimit(4) });
    expect(second.opened.resumedRuns).toBe(1);
    await vi.waitFor(() => expect(ran).toStrictEqual(['once']));
    await second.chat.shutdown();

    const third = await start(store, [textStep('done')], [echoTool(ran)]);
    await runEnded(third.chat, 's');
    expect(ran).toStrictEqual(['once']);
    expect((await third.chat.getSession('s')).toolCalls).toMatchObject([{ outcome: 'interrupted' }]);
  });

  it('a call that got its place but was refused by the last checks has no start in the ledger', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const slots = new ConcurrencyLimit(1);
    const other = slots.tryAcquire()!;
    let tools: AnyTool[] = [echoTool(ran)];
    const model: ChatModel = new ScriptedModel([echoCall('x'), textStep('done')]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, toolSlots: slots });
    services.push(chat);
    await chat.open();
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(slots.waiting).toBe(1));
    // The tool goes away while the call waits: it has its place, then is refused before it starts.
    tools = [];
    other();
    await runEnded(chat, 's');
    expect(ran).toStrictEqual([]);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ outcome: 'error', startedAt: null }]);
  });

  it('a call that had its place when the server stopped is interrupted, with the time it started', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const slots = new ConcurrencyLimit(1);
    const other = slots.tryAcquire()!;
    const before = await start(store, [echoCall('slow')], [echoTool(ran, new Promise(() => {}))], { toolSlots: slots });
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1));
    await before.chat.confirm({ sessionId: 's', approvalId: before.chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(slots.waiting).toBe(1));
    other();
    await vi.waitFor(() => expect(ran).toStrictEqual(['slow']));
    await before.chat.shutdown();

    const after = await start(store, [textStep('done')], [echoTool(ran)]);
    await runEnded(after.chat, 's');
    expect(ran).toStrictEqual(['slow']);
    const [call] = (await after.chat.getSession('s')).toolCalls;
    expect(call).toMatchObject({ decision: 'allow', outcome: 'interrupted', startedAt: expect.any(Number) });
  });

  it('a deny after the restart is told to the model with its reason', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const before = await start(store, [echoCall('rm')], [echoTool(ran)]);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1));
    const approvalId = before.chat.pending('s')[0]!.approvalId;
    await before.chat.shutdown();

    const after = await start(store, [textStep('ok')], [echoTool(ran)]);
    await after.chat.confirm({ sessionId: 's', approvalId, decision: 'deny', reason: 'not now' });
    await runEnded(after.chat, 's');
    expect(ran).toStrictEqual([]);
    expect(after.model.requests[0]?.messages.at(-1)).toStrictEqual({ role: 'tool', toolCallId: expect.any(String), toolName: 'echo', content: toolResultText.denied('echo', 'not now') });
    expect((await after.chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'deny', reason: 'not now', outcome: 'denied' }]);
  });

  it('a deadline that passed while the server was down ends the call as timed out', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    let clock = Date.now();
    const before = await start(store, [echoCall('x')], [echoTool(ran)]);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go', options: { decisionTimeoutMs: 60_000 } });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1));
    await before.chat.shutdown();

    clock += 120_000;
    const model = new ScriptedModel([textStep('ok')]);
    const chat = new ChatService({ registry: new ApprovalRegistry({ now: () => clock }), model: () => model, tools: () => [echoTool(ran)], store, suspendRunsOnShutdown: true });
    services.push(chat);
    await chat.open();
    await runEnded(chat, 's');
    expect(ran).toStrictEqual([]);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'timeout', source: 'system', outcome: 'timed-out' }]);
  });

  it('a call that was running when the server stopped is recorded as interrupted and never run again', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const hold = deferred<void>();
    const before = await start(store, [echoCall('slow')], [echoTool(ran, hold.promise)]);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1));
    await before.chat.confirm({ sessionId: 's', approvalId: before.chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(ran).toStrictEqual(['slow']));
    await before.chat.shutdown();

    const after = await start(store, [textStep('noted')], [echoTool(ran)]);
    await runEnded(after.chat, 's');
    expect(ran).toStrictEqual(['slow']);
    const detail = await after.chat.getSession('s');
    // Its start was stored before it ran, with the allow: the ledger says it began.
    expect(detail.toolCalls).toMatchObject([{ decision: 'allow', outcome: 'interrupted', startedAt: expect.any(Number) }]);
    expect(after.model.requests[0]?.messages.at(-1)).toMatchObject({ role: 'tool', content: toolResultText.interrupted('echo') });
  });

  it('a run that stopped while the model answered ends with a reason after the restart, and is not run again', async () => {
    const store = new MemoryStore();
    const hang = deferred<void>();
    const held: ScriptStep = async function* () {
      await hang.promise;
      yield { type: 'text-delta', text: 'never' };
    };
    const before = await start(store, [held], []);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await before.chat.shutdown();
    const after = await start(store, [], []);
    expect(after.opened.resumedRuns).toBe(0);
    expect((await store.loadEvents('r1', 0)).at(-1)).toMatchObject({ type: 'run-end', reason: 'error' });
    expect(await store.listUnfinishedRuns()).toStrictEqual([]);
  });

  it('a run that stopped after its calls ended, before the model wrote anything, goes on after the restart: the model reads the refusal', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const hang = deferred<void>();
    const held: ScriptStep = async function* () {
      await hang.promise;
      yield { type: 'text-delta', text: 'never' };
    };
    const before = await start(store, [echoCall('rm -rf build'), held], [echoTool(ran)]);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1));
    await before.chat.confirm({ sessionId: 's', approvalId: before.chat.pending('s')[0]!.approvalId, decision: 'deny', reason: 'not the build folder' });
    // The refusal is stored and the model asked again when the server stops.
    await vi.waitFor(() => expect(before.model.requests).toHaveLength(2));
    await before.chat.shutdown();

    const after = await start(store, [textStep('understood')], [echoTool(ran)]);
    expect(after.opened.resumedRuns).toBe(1);
    await runEnded(after.chat, 's');
    expect(ran).toStrictEqual([]);
    expect(after.model.requests[0]?.messages.at(-1)).toMatchObject({ role: 'tool', content: toolResultText.denied('echo', 'not the build folder') });
    const events = await store.loadEvents('r1', 0);
    expect(events.filter((event) => event.type === 'status').map((event) => event.text)).toContain('Resumed after a server restart');
    expect(events.at(-1)).toMatchObject({ type: 'run-end', reason: 'done' });
    expect((await after.chat.getSession('s')).messages.at(-1)).toStrictEqual({ role: 'assistant', content: 'understood' });
  });

  it('keeps what the model had written of its answer when the server stopped, once, with the reason after it', async () => {
    const store = new MemoryStore();
    const hang = deferred<void>();
    const held: ScriptStep = async function* () {
      yield { type: 'reasoning-delta', text: 'The user wants ' };
      yield { type: 'reasoning-delta', text: 'a list.' };
      yield { type: 'text-delta', text: 'Here is half ' };
      yield { type: 'text-delta', text: 'an answer' };
      await hang.promise;
    };
    const before = await start(store, [held], []);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    // Deltas that come together are joined (one event, one row): waited for by their text.
    await vi.waitFor(async () => expect((await store.loadEvents('r1', 0)).map((event) => (event.type === 'text-delta' ? event.text : '')).join('')).toBe('Here is half an answer'));
    await before.chat.shutdown();
    const after = await start(store, [], []);
    const detail = await after.chat.getSession('s');
    expect(detail.messages).toStrictEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'Here is half an answer', reasoning: 'The user wants a list.' },
    ]);
    expect(detail.lastRunEnd).toMatchObject({ runId: 'r1', reason: 'error' });
    await after.chat.shutdown();
    // Not again at a later start: the run has ended.
    const again = await start(store, [], []);
    expect((await again.chat.getSession('s')).messages).toHaveLength(2);
  });

  it('grants are kept across a restart', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const before = await start(store, [echoCall('a'), textStep('one')], [echoTool(ran)]);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1));
    await before.chat.confirm({ sessionId: 's', approvalId: before.chat.pending('s')[0]!.approvalId, decision: 'allow', always: true });
    await runEnded(before.chat, 's');
    await before.chat.shutdown();

    const after = await start(store, [echoCall('a'), textStep('two')], [echoTool(ran)]);
    expect(after.chat.listGrants('s')).toHaveLength(1);
    await after.chat.startRun({ sessionId: 's', runId: 'r2', message: 'again' });
    await runEnded(after.chat, 's');
    expect(ran).toStrictEqual(['a', 'a']);
    expect((await after.chat.getSession('s')).toolCalls.at(-1)).toMatchObject({ decision: 'allow', source: 'grant', decidedByGrant: after.chat.listGrants('s')[0]!.grantId });
  });

  it('an allow still being checked against the rules when the server stops is refused as not applied, not answered resolved: after the restart the call waits', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    // The rules read a workspace file: an edited allow is judged by them before it is written.
    const reading = deferred<void>();
    let slow = false;
    const rules = {
      evaluate: async () => {
        if (slow) await reading.promise;
        return undefined;
      },
      version: () => 1,
    } as Partial<RuleService> as RuleService;
    const before = await start(store, [echoCall('hi')], [echoTool(ran)], { rules });
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1));
    const [waiting] = before.chat.pending('s');
    slow = true;
    const answer = before.chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'allow', arguments: { text: 'ho' } }).catch((error: unknown) => error);
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(0));
    const stopping = before.chat.shutdown();
    reading.resolve();
    await stopping;
    // Nothing of the allow was stored: it is not reported as applied.
    expect(await answer).toMatchObject({ name: 'ConflictError', reason: 'shutting-down' });
    expect((await store.listRunToolCalls('r1')).map((call) => call.decision)).toStrictEqual([null]);

    const after = await start(store, [textStep('done')], [echoTool(ran)], { rules });
    expect(after.chat.pending('s').map((p) => [p.approvalId, p.expiresAt])).toStrictEqual([[waiting!.approvalId, waiting!.expiresAt]]);
    expect(ran).toStrictEqual([]);
  });
});

describe('ChatService history', () => {
  it('keeps in the ledger how the rule that decided a call read then, whatever becomes of the rule', async () => {
    const ran: string[] = [];
    let description = [{ text: 'Allow the tool ' }, { code: 'echo' }, { text: ' everywhere' }];
    const rules = {
      evaluate: () => Promise.resolve({ effect: 'allow' as const, ruleId: 'rule_1', description }),
      version: () => 1,
    } as Partial<RuleService> as RuleService;
    const { chat } = await start(new MemoryStore(), [echoCall('hi'), textStep('done')], [echoTool(ran)], { rules });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'say hi' });
    await runEnded(chat, 's');
    // The person edits the rule, keeping its id.
    description = [{ text: 'Deny the tool ' }, { code: 'echo' }, { text: ' everywhere' }];
    expect(ran).toStrictEqual(['hi']);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ source: 'rule', decidedByRule: 'rule_1', decidedByRuleText: [{ text: 'Allow the tool ' }, { code: 'echo' }, { text: ' everywhere' }] }]);
  });

  it('says how the last run ended when it failed, after a restart too, until a run answers', async () => {
    const store = new MemoryStore();
    const before = await start(store, [], []);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'hello?' });
    await runEnded(before.chat, 's');
    const failed = { runId: 'r1', reason: 'error', error: expect.stringContaining('the script has no step left') };
    expect((await before.chat.getSession('s')).lastRunEnd).toStrictEqual(failed);
    await before.chat.shutdown();

    const after = await start(store, [textStep('here')], []);
    expect((await after.chat.getSession('s')).lastRunEnd).toStrictEqual(failed);
    // A page read with `before` does not repeat it: it belongs after the newest messages.
    expect((await after.chat.getSession('s', 1)).lastRunEnd).toBeUndefined();
    await after.chat.startRun({ sessionId: 's', runId: 'r2', message: 'again' });
    await runEnded(after.chat, 's');
    expect((await after.chat.getSession('s')).lastRunEnd).toBeUndefined();
  });

  it('opens a chat whose last run ended with a damaged stored event, without saying how it ended', async () => {
    const store = new MemoryStore();
    const before = await start(store, [], []);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'hello?' });
    await runEnded(before.chat, 's');
    await before.chat.shutdown();
    const damaged = new Error('an event of run r1: reason: Invalid option');
    const damagedStore = Object.assign(store, {
      loadLastEvent: () => Promise.reject(damaged),
      damagedRecord: (error: unknown) => (error === damaged ? damaged.message : undefined),
    });

    const after = await start(damagedStore, [], []);
    const detail = await after.chat.getSession('s');
    expect(detail.messages).toStrictEqual([{ role: 'user', content: 'hello?' }]);
    expect(detail.lastRunEnd).toBeUndefined();
  });
});

describe('ChatService state checks', () => {
  it('a chat deleted as a message sent with the delete under way starts a run in it stops that run too: its call does not run on in the deleted chat', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const stopped: string[] = [];
    const slowTool = defineTool({
      name: 'echo',
      description: 'echoes',
      parameters: z.object({ text: z.string() }),
      execute: async ({ text }, { signal }) => {
        ran.push(text);
        await new Promise<void>((_, reject) =>
          signal.addEventListener('abort', () => {
            stopped.push(text);
            reject(new Error('stopped'));
          }),
        );
        return text;
      },
    });
    const { chat } = await start(store, [echoCall('first'), echoCall('second'), textStep('done')], [slowTool]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'one' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    // Two changes of the chat whose writes are slow keep the server's queue of such work busy: the second message is
    // taken in after the first run has stopped for the deletion, and the deletion after the second run's call started.
    const writes = new Map([
      ['slow 1', deferred<void>()],
      ['slow 2', deferred<void>()],
    ]);
    const update = store.updateSession.bind(store);
    store.updateSession = async (sessionId, changes) => {
      const slow = changes.title === undefined ? undefined : writes.get(changes.title);
      if (slow) await slow.promise;
      return update(sessionId, changes);
    };
    const first = chat.updateSession('s', { title: 'slow 1' });
    const second = chat.startRun({ sessionId: 's', runId: 'r2', message: 'two', options: { confirmToolCalls: false } });
    const then = chat.updateSession('s', { title: 'slow 2' });
    const deleted = chat.deleteSession('s');
    await vi.waitFor(() => expect(chat.listSessions()[0]?.activeRunId).toBeNull());
    writes.get('slow 1')!.resolve();
    await first;
    expect(await second).toStrictEqual({ runId: 'r2' });
    await vi.waitFor(() => expect(ran).toStrictEqual(['second']));
    writes.get('slow 2')!.resolve();
    await then;
    expect(await deleted).toBe(true);
    // Deleted, with no run of it going on: the call that ran in it was stopped with it.
    expect(stopped).toStrictEqual(['second']);
    expect(chat.listSessions()).toStrictEqual([]);
  });

  it('a new session with a run id already used elsewhere is refused and leaves no session behind', async () => {
    const store = new MemoryStore();
    const { chat } = await start(store, [textStep('a')], []);
    await chat.startRun({ sessionId: 's1', runId: 'r1', message: 'one' });
    await runEnded(chat, 's1');
    await expect(chat.startRun({ sessionId: 's2', runId: 'r1', message: 'two' })).rejects.toMatchObject({ reason: 'run-exists' });
    expect(chat.listSessions().map((s) => s.sessionId)).toStrictEqual(['s1']);
    expect((await store.listSessions()).map((s) => s.sessionId)).toStrictEqual(['s1']);
  });

  it('when the model cannot be had, the message is not kept', async () => {
    const store = new MemoryStore();
    const chat = new ChatService({
      registry: new ApprovalRegistry(),
      model: () => {
        throw new Error('no model');
      },
      tools: () => [],
      store,
    });
    services.push(chat);
    await expect(chat.startRun({ sessionId: 's', message: 'hello' })).rejects.toThrow('no model');
    expect(chat.listSessions()).toStrictEqual([]);
    expect(await store.listSessions()).toStrictEqual([]);
  });

  it('updatedAt is stored as of the run that just ended', async () => {
    const store = new MemoryStore();
    const { chat } = await start(store, [textStep('a')], []);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'one' });
    await runEnded(chat, 's');
    const inMemory = chat.listSessions()[0]!;
    expect((await store.getSession('s'))?.updatedAt).toBe(inMemory.updatedAt);
  });

  it('with confirmation off for the session, calls run unasked and the ledger says so', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const { chat } = await start(store, [textStep('first'), echoCall('x'), textStep('done')], [echoTool(ran)]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'one' });
    await runEnded(chat, 's');
    await chat.updateSession('s', { confirmToolCalls: false });
    await chat.startRun({ sessionId: 's', runId: 'r2', message: 'two' });
    await runEnded(chat, 's');
    expect(ran).toStrictEqual(['x']);
    expect(chat.listSessions()[0]?.confirmToolCalls).toBe(false);
    expect((await chat.audit({ sessionId: 's' })).entries).toMatchObject([{ decision: 'allow', source: 'confirmation-off', outcome: 'executed' }]);
  });

  it('confirmation turned back on while a run goes on holds from its next call: that call waits for the person', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const hold = deferred<void>();
    const { chat } = await start(store, [echoCall('first'), echoCall('second'), textStep('done')], [echoTool(ran, hold.promise)]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go', options: { confirmToolCalls: false } });
    await vi.waitFor(() => expect(ran).toStrictEqual(['first']));
    await chat.updateSession('s', { confirmToolCalls: true });
    hold.resolve();
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    expect(ran).toStrictEqual(['first']);
    const [waiting] = chat.pending('s');
    await chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'deny' });
    await runEnded(chat, 's');
    expect(ran).toStrictEqual(['first']);
    expect((await chat.audit({ sessionId: 's' })).entries.map((entry) => [entry.decision, entry.source, entry.outcome])).toStrictEqual([
      ['deny', 'user', 'denied'],
      ['allow', 'confirmation-off', 'executed'],
    ]);
  });

  it('titles come from the first line of the first message, without code marks', async () => {
    const { chat } = await start(new MemoryStore(), [textStep('a')], []);
    await chat.startRun({ sessionId: 's', message: '  run `npm test`\nand tell me' });
    expect(chat.listSessions()[0]?.title).toBe('run npm test');
  });
});

describe('ChatService with a tool that changes during a run', () => {
  it('an allow given for a tool that changed before it ran does not run the changed tool', async () => {
    const ran: string[] = [];
    const original = echoTool(ran);
    const changed = { ...original, description: 'echoes, and now also uploads your files' };
    let current: AnyTool[] = [original];
    const model = new ScriptedModel([echoCall('x'), textStep('ok')]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => current, store: new MemoryStore() });
    services.push(chat);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    // The server behind the tool rewrote it while the person was deciding on the old one.
    current = [changed];
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await runEnded(chat, 's');
    expect(ran).toStrictEqual([]);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'allow', outcome: 'error', result: toolResultText.toolChanged('echo') }]);
  });
});

/** A MemoryStore that counts the reads of a whole conversation. */
class CountingStore extends MemoryStore {
  wholeReads = 0;
  override loadMessages(sessionId: string) {
    this.wholeReads++;
    return super.loadMessages(sessionId);
  }
}

describe('ChatService memory', () => {
  it('reads a chat a page at a time, never its whole conversation, after a restart too; a run reads it once, at its start', async () => {
    const store = new CountingStore();
    const before = await start(store, [textStep('one'), textStep('two')], []);
    for (const runId of ['r1', 'r2']) {
      await before.chat.startRun({ sessionId: 's', runId, message: `go ${runId}` });
      await runEnded(before.chat, 's');
    }
    await before.chat.shutdown();

    store.wholeReads = 0;
    const after = await start(store, [textStep('three')], []);
    const newest = await after.chat.getSession('s');
    expect(newest.messages).toStrictEqual([
      { role: 'user', content: 'go r1' },
      { role: 'assistant', content: 'one' },
      { role: 'user', content: 'go r2' },
      { role: 'assistant', content: 'two' },
    ]);
    expect((await after.chat.getSession('s', 2)).messages).toStrictEqual(newest.messages.slice(0, 2));
    expect(store.wholeReads).toBe(0);
    await after.chat.startRun({ sessionId: 's', runId: 'r3', message: 'go r3' });
    await runEnded(after.chat, 's');
    expect(store.wholeReads).toBe(1);
    expect(after.model.requests[0]?.messages.map((message) => message.content)).toStrictEqual(['go r1', 'one', 'go r2', 'two', 'go r3']);
  });

  it('starts runs in many sessions while the others wait on decisions, and reads each chat back', async () => {
    const ran: string[] = [];
    const store = new MemoryStore();
    const steps = Array.from({ length: 6 }, () => echoCall('x'));
    const { chat } = await start(store, steps, [echoTool(ran)]);
    for (let i = 0; i < 6; i++) {
      await chat.startRun({ sessionId: `s${i}`, runId: `r${i}`, message: 'go' });
      await vi.waitFor(() => expect(chat.pending(`s${i}`)).toHaveLength(1));
    }
    expect(chat.activeRunCount).toBe(6);
    expect((await chat.getSession('s0')).messages.map((m) => m.role)).toStrictEqual(['user', 'assistant']);
  });
});

describe('ChatService reading a long chat', () => {
  it('answers with its newest messages and their calls, and earlier pages on request, each call with its own ledger row', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const runs = 300;
    // Every run's call has the same id, as a model numbering its calls per turn gives them.
    const steps = Array.from({ length: runs }, (_, n) => [toolCallStep({ name: 'echo', arguments: { text: `n${n}` }, id: 'call_1' }), textStep(`done ${n}`)]).flat();
    const { chat } = await start(store, steps, [echoTool(ran)]);
    for (let n = 0; n < runs; n++) {
      await chat.startRun({ sessionId: 's', runId: `r${n}`, message: `run ${n}`, options: { confirmToolCalls: false } });
      await runEnded(chat, 's');
    }
    expect(ran).toHaveLength(runs);

    // Four messages a run (the person's, the call, its result, the answer): 1,200 in all.
    const newest = await chat.getSession('s');
    expect(newest.messages).toHaveLength(MAX_DETAIL_MESSAGES);
    expect(newest.messagesBefore).toBe(4 * runs - MAX_DETAIL_MESSAGES);
    expect(newest.messages[0]).toStrictEqual({ role: 'user', content: 'run 175' });
    expect(newest.toolCalls.map((call) => call.arguments.text)).toStrictEqual(Array.from({ length: 125 }, (_, i) => `n${175 + i}`));

    const earlier = await chat.getSession('s', newest.messagesBefore);
    expect(earlier.messagesBefore).toBe(200);
    expect(earlier.messages[0]).toStrictEqual({ role: 'user', content: 'run 50' });
    expect(earlier.toolCalls.map((call) => call.arguments.text)).toStrictEqual(Array.from({ length: 125 }, (_, i) => `n${50 + i}`));
    expect((await chat.getSession('s', 200)).toolCalls.map((call) => call.arguments.text)).toStrictEqual(Array.from({ length: 50 }, (_, i) => `n${i}`));
  });

  it('keeps an answer within its size, whatever the messages hold, and always gives the newest message', async () => {
    const store = new MemoryStore();
    const big = 'x'.repeat(MAX_DETAIL_CHARS / 3);
    const { chat } = await start(store, Array.from({ length: 5 }, () => textStep(big)), []);
    for (let n = 0; n < 5; n++) {
      await chat.startRun({ sessionId: 's', runId: `r${n}`, message: `m${n}` });
      await runEnded(chat, 's');
    }
    const detail = await chat.getSession('s');
    expect(detail.messages.map((message) => message.role)).toStrictEqual(['user', 'assistant', 'user', 'assistant']);
    expect(detail.messagesBefore).toBe(6);
  });
});

