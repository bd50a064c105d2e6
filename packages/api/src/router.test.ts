import { ApprovalRegistry, defineTool, type AnyTool, type ChatModel, type LoopEvent } from '@airlock/core';
import { hangingStep, ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { TRPCError } from '@trpc/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ChatService } from './chat-service';
import { ConnectionState, LeftRuns, type ConnectionLimits, type ConnectionOptions, type RuleService } from './context';
import { MemoryStore } from './memory-store';
import { appRouter, createCallerFactory } from './router';
import { MAX_AUDIT_PAGE_CHARS, type ToolCallRecord } from './store';

const createCaller = createCallerFactory(appRouter);
const services: ChatService[] = [];

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

function setup(steps: ScriptStep[], limits?: ConnectionLimits & Pick<ConnectionOptions, 'now'>) {
  const ran: string[] = [];
  const echo = defineTool({
    name: 'echo',
    description: 'echoes',
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }) => {
      ran.push(text);
      return `echo: ${text}`;
    },
  });
  const model: ChatModel = new ScriptedModel(steps);
  const registry = new ApprovalRegistry();
  let available: AnyTool[] = [echo];
  const chat = new ChatService({ registry, model: () => model, tools: () => available });
  services.push(chat);
  const ctx = () => ({
    services: { chat, catalog: { tools: () => [echo], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1', limits),
  });
  const controller = new AbortController();
  const caller = createCaller(ctx(), { signal: controller.signal });
  return { caller, chat, ran, registry, stop: () => controller.abort(), setTools: (tools: AnyTool[]) => (available = tools) };
}

type Tracked = [string, LoopEvent, ...unknown[]];

/** Reads a subscription until `until` matches; answers tool-starts with `onEvent`. */
async function read(iterable: AsyncIterable<unknown>, until: (e: LoopEvent) => boolean, onEvent?: (e: LoopEvent) => Promise<void> | void) {
  const seen: { id: string; event: LoopEvent }[] = [];
  for await (const item of iterable) {
    const [id, event] = item as Tracked;
    seen.push({ id, event });
    await onEvent?.(event);
    if (until(event)) break;
  }
  return seen;
}

/** A context for another caller of the same service. */
function contextFor(chat: ChatService) {
  return {
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c2'),
  };
}

const echoCall = (text: string) => toolCallStep({ name: 'echo', arguments: { text } });

describe('appRouter', () => {
  it('streams a run, takes a decision, and answers a repeat as already-decided', async () => {
    const { caller, ran } = setup([echoCall('hi'), textStep('done')]);
    const stream = await caller.chat.stream({ sessionId: 's1', runId: 'run-a', message: 'say hi' });
    const confirmations: unknown[] = [];
    const seen = await read(stream, (e) => e.type === 'run-end', async (event) => {
      if (event.type === 'tool-start' && event.awaitingConfirmation) {
        const input = { sessionId: 's1', approvalId: event.approvalId, decision: 'allow' as const };
        confirmations.push(await caller.chat.confirmTool(input));
        confirmations.push(await caller.chat.confirmTool(input));
        confirmations.push(await caller.chat.confirmTool({ ...input, sessionId: 'other' }));
      }
    });
    expect(confirmations).toStrictEqual([
      { resolved: true, status: 'resolved', decision: 'allow' },
      { resolved: false, status: 'already-decided', decision: 'allow' },
      { resolved: false, status: 'not-found' },
    ]);
    expect(ran).toStrictEqual(['hi']);
    expect(seen.map((s) => s.id)).toStrictEqual(seen.map((_, i) => `run-a:${i + 1}`));
    expect(seen.at(-1)?.event).toStrictEqual({ type: 'run-end', runId: 'run-a', reason: 'done' });
  });

  it('re-attaches with lastEventId and replays exactly the events after it', async () => {
    const { caller } = setup([echoCall('x'), textStep('the end')]);
    const first = await read(await caller.chat.stream({ sessionId: 's1', runId: 'run-b', message: 'go' }), (e) => e.type === 'tool-start');
    const approvalId = first.at(-1)!.event.type === 'tool-start' ? (first.at(-1)!.event as { approvalId: string }).approvalId : '';
    const cursor = first[1]!.id;
    const replay = await read(await caller.chat.stream({ sessionId: 's1', runId: 'run-b', message: 'go', lastEventId: cursor }), (e) => e.type === 'tool-start');
    expect(replay.map((r) => r.id)).toStrictEqual(first.slice(2).map((f) => f.id));
    // The pending approval survived the "disconnect" and still works.
    expect(await caller.chat.pending({ sessionId: 's1' })).toMatchObject([{ approvalId, toolName: 'echo', runId: 'run-b' }]);
    expect(await caller.chat.confirmTool({ sessionId: 's1', approvalId, decision: 'allow' })).toMatchObject({ resolved: true });
    const rest = await read(await caller.chat.stream({ sessionId: 's1', lastEventId: first.at(-1)!.id }), (e) => e.type === 'run-end');
    expect(rest[0]?.id).toBe(`run-b:${first.length + 1}`);
    expect(rest.map((r) => r.event.type)).toContain('tool-end');
  });

  it('answers an attach to a run not in this chat as not found, alike whether it is in another chat or nowhere', async () => {
    const { caller } = setup([echoCall('x')]);
    await read(await caller.chat.stream({ sessionId: 's1', runId: 'run-e', message: 'go' }), (e) => e.type === 'tool-start');
    const refusals = [];
    for (const input of [
      { sessionId: 'other_session', runId: 'run-e' },
      { sessionId: 's1', runId: 'run_0123456789' },
    ]) {
      refusals.push(await read(await caller.chat.stream(input), () => true).catch((error: TRPCError) => ({ code: error.code, message: error.message })));
    }
    expect(refusals).toStrictEqual([
      { code: 'NOT_FOUND', message: 'runId: no run "run-e" in this chat' },
      { code: 'NOT_FOUND', message: 'runId: no run "run_0123456789" in this chat' },
    ]);
    // A start with an empty message is still asked for one.
    await expect(read(await caller.chat.stream({ sessionId: 's1', runId: 'run-f', message: ' ' }), () => true)).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: 'message: a new run needs a non-empty message',
    });
  });

  it('refuses a lastEventId it never sent, rather than replaying the run from its start', async () => {
    const { caller } = setup([echoCall('x')]);
    await read(await caller.chat.stream({ sessionId: 's1', runId: 'run-c', message: 'go' }), (e) => e.type === 'tool-start');
    for (const lastEventId of ['run-c:', 'run-c:-1', 'run-c:abc', 'run-c:1.5', 'run-c:99999999999999999999', 'run-c']) {
      await expect(read(await caller.chat.stream({ sessionId: 's1', runId: 'run-c', lastEventId }), () => true), lastEventId).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    }
  });

  it('refuses a lastEventId past the events its run has sent, going or finished, and one whose run id is not one', async () => {
    const { caller } = setup([echoCall('x'), textStep('the end')]);
    const first = await read(await caller.chat.stream({ sessionId: 's1', runId: 'run-d', message: 'go' }), (e) => e.type === 'tool-start');
    const last = first.length;
    const refusal = (seq: number) => ({ code: 'BAD_REQUEST', message: `lastEventId: run "run-d" has sent ${last} events, none numbered ${seq}` });
    // Going: followed from there, it sent nothing more, not even its end.
    for (const seq of [last + 1, 999_999_999_999_999]) {
      await expect(read(await caller.chat.stream({ sessionId: 's1', lastEventId: `run-d:${seq}` }), () => true)).rejects.toMatchObject(refusal(seq));
    }
    await expect(read(await caller.chat.stream({ sessionId: 's1', lastEventId: 'run/d:1' }), () => true)).rejects.toMatchObject({ code: 'BAD_REQUEST' });

    // The last event sent is where a client that saw everything goes on from.
    const approvalId = (first.at(-1)!.event as { approvalId: string }).approvalId;
    const rest = read(await caller.chat.stream({ sessionId: 's1', lastEventId: `run-d:${last}` }), (e) => e.type === 'run-end');
    await caller.chat.confirmTool({ sessionId: 's1', approvalId, decision: 'allow' });
    const events = last + (await rest).length;
    expect((await rest)[0]?.id).toBe(`run-d:${last + 1}`);

    // Finished: it completed at once with no event.
    await expect(read(await caller.chat.stream({ sessionId: 's1', lastEventId: `run-d:${events + 1}` }), () => true)).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: `lastEventId: run "run-d" has sent ${events} events, none numbered ${events + 1}`,
    });
    expect(await read(await caller.chat.stream({ sessionId: 's1', lastEventId: `run-d:${events}` }), () => true)).toStrictEqual([]);
  });

  it('refuses a second run while the session is busy, and continues the conversation after', async () => {
    const gate = { open: () => undefined as void };
    const held: ScriptStep = async function* () {
      await new Promise<void>((resolve) => (gate.open = resolve));
      yield { type: 'text-delta', text: 'first' };
    };
    const { caller, chat } = setup([held, textStep('second')]);
    const firstRun = await caller.chat.stream({ sessionId: 's1', runId: 'r1', message: 'one' });
    const iterator = firstRun[Symbol.asyncIterator]();
    await iterator.next(); // run-start: the run is going
    const second = await caller.chat.stream({ sessionId: 's1', runId: 'r2', message: 'two' });
    await expect(read(second, () => true)).rejects.toMatchObject({ code: 'CONFLICT' });
    gate.open();
    await read({ [Symbol.asyncIterator]: () => iterator }, (e) => e.type === 'run-end');
    await read(await caller.chat.stream({ sessionId: 's1', runId: 'r3', message: 'two' }), (e) => e.type === 'run-end');
    expect((await chat.getSession('s1')).messages.map((m) => `${m.role}:${m.content}`)).toStrictEqual(['user:one', 'assistant:first', 'user:two', 'assistant:second']);
  });

  it('never starts a finished run again when a client re-sends its old input: it replays it from the store', async () => {
    const model = new ScriptedModel([textStep('once')]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [], finishedRunTtlMs: 0 });
    services.push(chat);
    const caller = createCaller({
      services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
      connection: new ConnectionState('c1'),
    });
    const input = { sessionId: 's-old', runId: 'run-old', message: 'hello' };
    const first = await read(await caller.chat.stream(input), (e) => e.type === 'run-end');
    // Forgotten from memory at once (ttl 0): the re-sent input finds the run in the store.
    await vi.waitFor(() => expect(chat.isRunActive('run-old')).toBe(false));
    const again = await read(await caller.chat.stream(input), (e) => e.type === 'run-end');
    expect(again).toStrictEqual(first);
    model.assertConsumed();
    expect((await chat.getSession('s-old')).messages.filter((m) => m.role === 'user')).toHaveLength(1);
    // Another session cannot reach it by its id.
    await expect(read(await caller.chat.stream({ ...input, sessionId: 's-other' }), () => true)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('names the bad field in a BAD_REQUEST', async () => {
    const { caller } = setup([]);
    const error = await caller.chat.confirmTool({ sessionId: 's1', approvalId: 'x', decision: 'maybe' as 'allow' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe('BAD_REQUEST');
    const long = await caller.chat.confirmTool({ sessionId: 's1', approvalId: 'x', decision: 'deny', reason: 'x'.repeat(2001) }).catch((e: unknown) => e);
    expect((long as TRPCError).code).toBe('BAD_REQUEST');
    const noMessage = await caller.chat.stream({ sessionId: 's1' });
    await expect(read(noMessage, () => true)).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('message') });
  });

  it('cancels a run waiting on a decision', async () => {
    const { caller, ran, registry } = setup([echoCall('never')]);
    const events = await read(await caller.chat.stream({ sessionId: 's1', runId: 'rc', message: 'go' }), (e) => e.type === 'run-end', async (event) => {
      if (event.type === 'tool-start') expect(await caller.chat.cancel({ sessionId: 's1' })).toStrictEqual({ cancelled: 1 });
    });
    expect(events.map((e) => e.event.type)).toStrictEqual(['run-start', 'status', 'tool-start', 'tool-decision', 'tool-end', 'run-end']);
    expect(events.at(-1)?.event).toMatchObject({ reason: 'cancelled' });
    expect(ran).toStrictEqual([]);
    expect(registry.pendingCount).toBe(0);
  });

  it('lists sessions, grants and tools; revokes and deletes', async () => {
    const { caller } = setup([echoCall('a'), textStep('ok')]);
    await read(await caller.chat.stream({ sessionId: 's1', runId: 'rg', message: 'hello there' }), (e) => e.type === 'run-end', async (event) => {
      if (event.type === 'tool-start') await caller.chat.confirmTool({ sessionId: 's1', approvalId: event.approvalId, decision: 'allow', always: true });
    });
    expect(await caller.sessions.list()).toMatchObject({ sessions: [{ sessionId: 's1', title: 'hello there', activeRunId: null }], nextCursor: null });
    const grants = await caller.grants.list({ sessionId: 's1' });
    expect(grants).toMatchObject([{ toolName: 'echo', arguments: null }]);
    expect(await caller.grants.revoke({ sessionId: 's1', grantId: grants[0]!.grantId })).toStrictEqual({ revoked: true });
    expect(await caller.tools.list()).toMatchObject({ tools: [{ name: 'echo', source: 'builtin', inputSchema: { type: 'object' } }], servers: [] });
    expect(await caller.sessions.delete({ sessionId: 's1' })).toStrictEqual({ deleted: true });
    await expect(caller.sessions.get({ sessionId: 's1' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('holds a run’s place from its admission: requests sent together cannot start more runs than the limit', async () => {
    const { caller, chat } = setup([hangingStep('1'), hangingStep('2'), hangingStep('3'), hangingStep('4')], { maxConcurrentRuns: 2 });
    // Started in the same tick, each request is admitted before any run has started.
    const streams = await Promise.all([1, 2, 3, 4].map((n) => caller.chat.stream({ sessionId: `race-${n}`, runId: `race-run-${n}`, message: 'x' })));
    const outcomes = await Promise.allSettled(streams.map((stream) => read(stream, (e) => e.type === 'run-start')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    const refused = outcomes.flatMap((o): unknown[] => (o.status === 'rejected' ? [o.reason as unknown] : []));
    expect(refused).toMatchObject([{ code: 'TOO_MANY_REQUESTS' }, { code: 'TOO_MANY_REQUESTS' }]);
    expect([1, 2, 3, 4].filter((n) => chat.isRunActive(`race-run-${n}`))).toHaveLength(2);
  });

  it('names the connection that started a run to the model with each of its turns, a turn after its calls too, so its places are shared fairly between connections', async () => {
    const scripted = new ScriptedModel([echoCall('hi'), textStep('done'), textStep('other')]);
    const requesters: (string | undefined)[] = [];
    const model: ChatModel = { name: 'recording', stream: (request, signal) => (requesters.push(request.requester), scripted.stream(request, signal)) };
    const echo = defineTool({ name: 'echo', description: 'echoes', parameters: z.object({ text: z.string() }), execute: ({ text }) => Promise.resolve(text) });
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [echo] });
    services.push(chat);
    const callerOf = (id: string) => createCaller({ services: { ...contextFor(chat).services }, connection: new ConnectionState(id) });
    const first = callerOf('conn-1');
    await read(await first.chat.stream({ sessionId: 's1', runId: 'r1', message: 'x' }), (e) => e.type === 'run-end', async (event) => {
      if (event.type === 'tool-start' && event.awaitingConfirmation) await first.chat.confirmTool({ sessionId: 's1', approvalId: event.approvalId, decision: 'allow' });
    });
    await read(await callerOf('conn-2').chat.stream({ sessionId: 's2', runId: 'r2', message: 'x' }), (e) => e.type === 'run-end');
    expect(requesters).toStrictEqual(['conn-1', 'conn-1', 'conn-2']);
  });

  it('counts the runs of a closed connection against the next connection that starts one, until they end', async () => {
    const model = new ScriptedModel([hangingStep('1'), hangingStep('2'), hangingStep('3'), textStep('4')]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [] });
    services.push(chat);
    const left = new LeftRuns();
    const connect = (id: string) => {
      const connection = new ConnectionState(id, { maxConcurrentRuns: 2, leftRuns: left });
      const caller = createCaller({ services: { ...contextFor(chat).services }, connection });
      return { connection, caller };
    };
    const first = connect('c1');
    for (const n of [1, 2]) await read(await first.caller.chat.stream({ sessionId: `s${n}`, runId: `r${n}`, message: 'x' }), (e) => e.type === 'run-start');
    first.connection.close();
    expect([chat.isRunActive('r1'), chat.isRunActive('r2')]).toStrictEqual([true, true]);

    const second = connect('c2');
    await expect(read(await second.caller.chat.stream({ sessionId: 's3', runId: 'r3', message: 'x' }), () => true)).rejects.toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      message: 'limit exceeded: at most 2 concurrent runs per connection (2 of them started on connections since closed, counted here until they end)',
    });
    // Closed in turn, the second hands them on: a third connection has no more room than the first had.
    second.connection.close();
    const third = connect('c3');
    await expect(read(await third.caller.chat.stream({ sessionId: 's3', runId: 'r3', message: 'x' }), () => true)).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });

    await third.caller.chat.cancel({ sessionId: 's1', runId: 'r1' });
    await vi.waitFor(() => expect(chat.isRunActive('r1')).toBe(false));
    await read(await third.caller.chat.stream({ sessionId: 's3', runId: 'r3', message: 'x' }), (e) => e.type === 'run-start');
    await expect(read(await third.caller.chat.stream({ sessionId: 's4', runId: 'r4', message: 'x' }), () => true)).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
  });

  it('limits the run rate of one connection, naming the limit as its setting does and saying when to try again', async () => {
    let now = 1_000_000;
    const { caller } = setup([textStep('1'), textStep('2')], { messageBurst: 2, messagesPerMinute: 1, now: () => now });
    await read(await caller.chat.stream({ sessionId: 'a', runId: 'l1', message: 'x' }), (e) => e.type === 'run-end');
    await read(await caller.chat.stream({ sessionId: 'b', runId: 'l2', message: 'x' }), (e) => e.type === 'run-end');
    await expect(read(await caller.chat.stream({ sessionId: 'c', runId: 'l3', message: 'x' }), () => true)).rejects.toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      message: 'limit exceeded: at most 1 run per minute per connection, after a burst of 2; try again in 60 s',
    });
    now += 45_000;
    await expect(read(await caller.chat.stream({ sessionId: 'c', runId: 'l3', message: 'x' }), () => true)).rejects.toMatchObject({
      message: 'limit exceeded: at most 1 run per minute per connection, after a burst of 2; try again in 15 s',
    });
  });

  it('tells a watcher when a session starts or ends a run, when a call starts or stops waiting, and when it is deleted, after a first "ready"', async () => {
    const { caller } = setup([echoCall('a'), textStep('ok')]);
    const watch = (await caller.sessions.watch())[Symbol.asyncIterator]();
    const next = async () => (await watch.next()).value as Record<string, unknown>;
    expect(await next()).toStrictEqual({ type: 'ready' });

    await read(await caller.chat.stream({ sessionId: 's1', runId: 'w1', message: 'watch me' }), (e) => e.type === 'run-end', async (event) => {
      if (event.type !== 'tool-start') return;
      // A tab that is not showing this chat learns from the watch alone that a call waits here.
      expect(await next()).toMatchObject({ type: 'session-changed', session: { sessionId: 's1', title: 'watch me', activeRunId: 'w1' } });
      expect(await next()).toStrictEqual({ type: 'waiting-changed', sessionId: 's1' });
      await caller.chat.confirmTool({ sessionId: 's1', approvalId: event.approvalId, decision: 'allow' });
    });
    expect(await next()).toStrictEqual({ type: 'waiting-changed', sessionId: 's1' });
    expect(await next()).toMatchObject({ type: 'session-changed', session: { sessionId: 's1', activeRunId: null } });

    await caller.sessions.delete({ sessionId: 's1' });
    expect(await next()).toStrictEqual({ type: 'session-deleted', sessionId: 's1' });
    await watch.return?.();
  });

  it('tells a watcher once when a turn puts three calls up at once, and once when a cancel ends their waits', async () => {
    const three = toolCallStep(...['a', 'b', 'c'].map((text, index) => ({ name: 'echo', arguments: { text }, id: `call_${index}` })));
    const { caller } = setup([three, textStep('ok')]);
    const watch = (await caller.sessions.watch())[Symbol.asyncIterator]();
    const next = async () => (await watch.next()).value as Record<string, unknown>;
    expect(await next()).toStrictEqual({ type: 'ready' });

    const stream = await caller.chat.stream({ sessionId: 's1', runId: 'w3', message: 'three at once' });
    let starts = 0;
    await read(stream, (e) => e.type === 'run-end', async (event) => {
      if (event.type !== 'tool-start' || ++starts < 3) return;
      expect(await next()).toMatchObject({ type: 'session-changed', session: { sessionId: 's1', activeRunId: 'w3' } });
      expect(await next()).toStrictEqual({ type: 'waiting-changed', sessionId: 's1' });
      expect((await caller.chat.pending({ sessionId: 's1' })).map((p) => p.toolName)).toStrictEqual(['echo', 'echo', 'echo']);
      await caller.chat.cancel({ sessionId: 's1', runId: 'w3' });
    });
    expect(await next()).toStrictEqual({ type: 'waiting-changed', sessionId: 's1' });
    expect(await next()).toMatchObject({ type: 'session-changed', session: { sessionId: 's1', activeRunId: null } });
    await watch.return?.();
  });

  it('ends a watch when its subscription is stopped, and stops listening', async () => {
    const { caller, chat, stop } = setup([textStep('ok')]);
    const watch = (await caller.sessions.watch())[Symbol.asyncIterator]();
    expect((await watch.next()).value).toStrictEqual({ type: 'ready' });
    const waiting = watch.next();
    stop();
    expect(await waiting).toStrictEqual({ done: true, value: undefined });
    // No listener is left behind: a run now reaches no watcher (the set is private; a new watcher sees only its own "ready").
    await read(await createCaller(contextFor(chat)).chat.stream({ sessionId: 's2', runId: 'w2', message: 'x' }), (e) => e.type === 'run-end');
    expect((chat as unknown as { watchers: Set<unknown> }).watchers.size).toBe(0);
  });
});


describe('appRouter: arguments edited before allowing', () => {
  it('refuses an edit the tool schema rejects, naming the field, and leaves the call waiting; a valid edit runs and both versions are kept', async () => {
    const { caller, ran, chat } = setup([echoCall('rm everything'), textStep('done')]);
    const stream = await caller.chat.stream({ sessionId: 's1', runId: 'run-e', message: 'go' });
    const refusals: unknown[] = [];
    const answers: unknown[] = [];
    const seen = await read(stream, (e) => e.type === 'run-end', async (event) => {
      if (event.type !== 'tool-start' || !event.awaitingConfirmation) return;
      const input = { sessionId: 's1', approvalId: event.approvalId, decision: 'allow' as const };
      refusals.push(await caller.chat.confirmTool({ ...input, arguments: { text: 42 } }).catch((error: unknown) => error));
      refusals.push(await caller.chat.confirmTool({ ...input, arguments: { text: 'x'.repeat(70_000) } }).catch((error: unknown) => error));
      // An argument the tool does not take would show on the card and in the ledger, and do nothing.
      refusals.push(await caller.chat.confirmTool({ ...input, arguments: { text: 'list everything', recursive: true } }).catch((error: unknown) => error));
      let deep: unknown = 'bottom';
      for (let level = 0; level < 200_000; level++) deep = [deep];
      refusals.push(await caller.chat.confirmTool({ ...input, arguments: { text: 'x', deep } }).catch((error: unknown) => error));
      expect((await caller.chat.pending({ sessionId: 's1' })).map((p) => p.approvalId)).toStrictEqual([event.approvalId]);
      answers.push(await caller.chat.confirmTool({ ...input, arguments: { text: 'list everything' } }));
    });
    expect(refusals).toMatchObject([
      { code: 'BAD_REQUEST', message: expect.stringMatching(/^arguments: invalid for "echo": text: /) },
      { code: 'BAD_REQUEST', message: expect.stringContaining('arguments') },
      { code: 'BAD_REQUEST', message: 'arguments: invalid for "echo": recursive: not an argument of this tool' },
      { code: 'BAD_REQUEST', message: expect.stringContaining('at most 64 levels of nesting') },
    ]);
    expect(refusals[0]).toBeInstanceOf(TRPCError);
    expect(answers).toStrictEqual([{ resolved: true, status: 'resolved', decision: 'allow' }]);
    expect(ran).toStrictEqual(['list everything']);
    const events = seen.map((s) => s.event);
    expect(events.filter((e) => e.type === 'tool-decision')).toMatchObject([{ decision: 'allow', source: 'user', editedArguments: { text: 'list everything' } }]);
    const told = 'The person edited the arguments before allowing this call. It ran with: {"text":"list everything"}\n\necho: list everything';
    expect(events.filter((e) => e.type === 'tool-end')).toMatchObject([{ outcome: 'executed', result: told }]);
    const detail = await chat.getSession('s1');
    expect(detail.toolCalls).toMatchObject([{ arguments: { text: 'rm everything' }, editedArguments: { text: 'list everything' }, decision: 'allow', outcome: 'executed', result: told }]);
    expect(detail.messages.filter((m) => m.role === 'tool')).toMatchObject([{ content: told }]);
  });

  it('refuses an edit naming a key that reaches a prototype, at any depth, where it was dropped unseen, and the call keeps waiting', async () => {
    const { caller, ran } = setup([echoCall('rm everything'), textStep('done')]);
    const stream = await caller.chat.stream({ sessionId: 's4', runId: 'run-p', message: 'go' });
    const refusals: unknown[] = [];
    await read(stream, (e) => e.type === 'run-end', async (event) => {
      if (event.type !== 'tool-start' || !event.awaitingConfirmation) return;
      const input = { sessionId: 's4', approvalId: event.approvalId, decision: 'allow' as const };
      // As a client's message is read: JSON.parse makes `__proto__` an own key, where an object literal would not.
      for (const edit of ['{"text":"x","__proto__":{"text":"y"}}', '{"text":"x","constructor":"y"}', '{"text":"x","meta":[{"prototype":1}]}']) {
        refusals.push(await caller.chat.confirmTool({ ...input, arguments: JSON.parse(edit) as Record<string, unknown> }).catch((error: unknown) => error));
      }
      expect((await caller.chat.pending({ sessionId: 's4' })).map((p) => p.approvalId)).toStrictEqual([event.approvalId]);
      await caller.chat.confirmTool({ ...input, decision: 'deny' });
    });
    expect(refusals).toMatchObject(
      ['__proto__', 'constructor', 'prototype'].map((key) => ({ code: 'BAD_REQUEST', message: expect.stringContaining(`no argument may be named \`${key}\`, a name that reaches a prototype`) })),
    );
    expect(ran).toStrictEqual([]);
  });

  it('refuses an edit it cannot check because the tool went away while the call waited, and the call keeps waiting', async () => {
    const { caller, ran, setTools } = setup([echoCall('rm everything'), textStep('done')]);
    const stream = await caller.chat.stream({ sessionId: 's3', runId: 'run-gone', message: 'go' });
    const answers: unknown[] = [];
    await read(stream, (e) => e.type === 'run-end', async (event) => {
      if (event.type !== 'tool-start' || !event.awaitingConfirmation) return;
      setTools([]);
      const input = { sessionId: 's3', approvalId: event.approvalId };
      answers.push(await caller.chat.confirmTool({ ...input, decision: 'allow', arguments: { text: 'list everything' } }).catch((error: unknown) => error));
      expect((await caller.chat.pending({ sessionId: 's3' })).map((p) => p.approvalId)).toStrictEqual([event.approvalId]);
      answers.push(await caller.chat.confirmTool({ ...input, decision: 'deny' }));
    });
    expect(answers).toMatchObject([
      { code: 'BAD_REQUEST', message: 'arguments: invalid for "echo": (arguments): the tool is not available on this server now, so an edit cannot be checked; allow the call as proposed or deny it' },
      { resolved: true, status: 'resolved', decision: 'deny' },
    ]);
    expect(ran).toStrictEqual([]);
  });

  it('takes an edit identical to the proposal as a plain allow', async () => {
    const { caller, ran, chat } = setup([echoCall('same'), textStep('done')]);
    const stream = await caller.chat.stream({ sessionId: 's2', runId: 'run-same', message: 'go' });
    const seen = await read(stream, (e) => e.type === 'run-end', async (event) => {
      if (event.type === 'tool-start' && event.awaitingConfirmation) {
        await caller.chat.confirmTool({ sessionId: 's2', approvalId: event.approvalId, decision: 'allow', arguments: { text: 'same' } });
      }
    });
    expect(ran).toStrictEqual(['same']);
    expect(seen.map((s) => s.event).filter((e) => e.type === 'tool-decision')).toStrictEqual([
      { type: 'tool-decision', toolCallId: expect.any(String), approvalId: expect.any(String), decision: 'allow', source: 'user' },
    ]);
    expect((await chat.getSession('s2')).toolCalls).toMatchObject([{ editedArguments: null, result: 'echo: same' }]);
  });
});

describe('appRouter: rules.preview', () => {
  it('looks through the newest calls only as far as one page of the audit holds them (by characters as well as by rows)', async () => {
    const store = new MemoryStore();
    await store.createSession({ sessionId: 's', title: 's', createdAt: 1, updatedAt: 1, confirmToolCalls: true, lastRunId: null });
    await store.createRun({ runId: 'r', sessionId: 's', options: {}, startedAt: 1, endedAt: null, endReason: null });
    const content = 'x'.repeat(MAX_AUDIT_PAGE_CHARS / 3);
    for (let seq = 1; seq <= 6; seq++) {
      const toolCallId = `call-${seq}`;
      const ledger = { kind: 'start' as const, toolCallId, toolName: 'write_file', arguments: { content }, approvalId: '', requestedAt: seq, expiresAt: null, executesCode: false, toolVersion: 'v1' };
      await store.appendEvent({ runId: 'r', sessionId: 's', seq, event: { type: 'status', text: 'started' }, at: seq, ledger });
    }
    const looked: string[][] = [];
    const judgedWith: (readonly AnyTool[] | undefined)[] = [];
    const rules = {
      preview: async (_draft: unknown, calls: readonly ToolCallRecord[], tools?: readonly AnyTool[]) => {
        looked.push(calls.map((call) => call.toolCallId));
        judgedWith.push(tools);
        return [...calls];
      },
    } as unknown as RuleService;
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [], store });
    services.push(chat);
    const listed = [defineTool({ name: 'echo', description: 'echoes', parameters: z.object({ text: z.string() }), execute: async () => 'echoed' })];
    const caller = createCaller({
      services: { chat, rules, catalog: { tools: () => listed, servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
      connection: new ConnectionState('c1'),
    });

    const answer = await caller.rules.preview({ effect: 'allow', tool: 'write_file', match: { kind: 'path-glob', glob: '**' }, scope: { kind: 'global' }, source: 'user' });
    expect(looked).toStrictEqual([['call-6', 'call-5']]);
    // Judged with the tools as listed, as a call is: an exact-arguments draft is compared with their defaults filled in.
    expect(judgedWith).toStrictEqual([listed]);
    expect(answer.matches.map((call) => call.toolCallId)).toStrictEqual(['call-6', 'call-5']);
  });
});
