import type { PendingApproval } from '@airlock/core';
import { deferred, textStep, type Deferred, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatService, ChatServiceOptions } from './chat-service';
import { toTRPCError } from './error-mapping';
import { MemoryStore } from './memory-store';
import { RunPausedError } from './run-paused-error';
import type { AppendEventInput } from './store';
import { DISK_FULL, echoCall, runEnded, startEchoChat } from './test-support';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

/**
 * A store of one instance whose disk fills up on demand: while `full`, every write fails, and the store says such a
 * failure means it cannot take writes for now (as SqliteStore does for SQLITE_FULL). Counts the runs it is asked for.
 */
function fillingStore() {
  const store = new MemoryStore();
  /**
   * `fillAt`: the disk fills up as an event of this type is written. `hold`: the next read of a run's events
   * (`read-back`), or the answer to the next write of events the store takes (`written`), waits for `release`, once
   * `reached` says it came.
   */
  const state: { full: boolean; runReads: number; fillAt?: string; hold?: Hold } = { full: false, runReads: 0 };
  const held = async (at: Hold['at']) => {
    const hold = state.hold;
    if (hold?.at !== at) return;
    state.hold = undefined;
    hold.reached.resolve();
    await hold.release.promise;
  };
  const unavailable = () => Promise.reject(new Error(DISK_FULL));
  const one = store.appendEvent.bind(store);
  const many = store.appendEvents.bind(store);
  const loadEvents = store.loadEvents.bind(store);
  const message = store.appendMessage.bind(store);
  const endRun = store.endRun.bind(store);
  const update = store.updateSession.bind(store);
  const requestCancel = store.requestCancel.bind(store);
  const getRun = store.getRun.bind(store);
  const fills = (inputs: readonly AppendEventInput[]) => {
    if (inputs.some((input) => input.event.type === state.fillAt)) state.full = true;
    return state.full;
  };
  const written = async <T>(write: Promise<T>) => {
    const answer = await write;
    await held('written');
    return answer;
  };
  store.appendEvent = (input) => (fills([input]) ? unavailable() : written(one(input)));
  store.appendEvents = (inputs) => (fills(inputs) ? unavailable() : written(many(inputs)));
  store.loadEvents = async (...args) => {
    await held('read-back');
    return loadEvents(...args);
  };
  store.appendMessage = (...args) => (state.full ? unavailable() : message(...args));
  const begin = store.beginRun.bind(store);
  store.beginRun = (beginning) => (state.full ? unavailable() : begin(beginning));
  store.endRun = (...args) => (state.full ? unavailable() : endRun(...args));
  store.updateSession = (...args) => (state.full ? unavailable() : update(...args));
  store.requestCancel = (runId) => (state.full ? unavailable() : requestCancel(runId));
  store.getRun = (runId) => {
    state.runReads++;
    return getRun(runId);
  };
  const withUnavailable = Object.assign(store, { isUnavailable: (error: unknown) => error instanceof Error && error.message === DISK_FULL });
  return { store: withUnavailable, state };
}

interface Hold {
  at: 'read-back' | 'written';
  reached: Deferred<void>;
  release: Deferred<void>;
}

const start = (store: MemoryStore, steps: ScriptStep[], ran: string[], extra: Partial<ChatServiceOptions> = {}) => startEchoChat(services, store, steps, ran, extra);

/** Run r1 of chat s, its call (echo ls) put up and left waiting by a server that shut down: answers the call. */
async function waitingAfterShutdown(store: MemoryStore, ran: string[]): Promise<PendingApproval> {
  const first = await start(store, [echoCall('ls'), textStep('done')], ran);
  await first.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
  await vi.waitFor(() => expect(first.pending('s')).toHaveLength(1));
  const [waiting] = first.pending('s');
  await first.shutdown();
  return waiting!;
}

/** A waiting call as listed, but for `requestedAt`: a start restores it from its ledger row, written a moment after it was put up. */
function listed(calls: readonly PendingApproval[]) {
  return calls.map((call) => ({ approvalId: call.approvalId, runId: call.runId, toolName: call.toolName, arguments: call.arguments, expiresAt: call.expiresAt }));
}

describe('ChatService when its store cannot take a run’s writes for now', () => {
  it('pauses the run as stored: its call still listed, a decision refused, and takes it up once a write succeeds', async () => {
    const { store, state } = fillingStore();
    const ran: string[] = [];
    const waiting = await waitingAfterShutdown(store, ran);

    // Restarted with the disk full: the resumed run's first write fails.
    state.full = true;
    const lines: string[] = [];
    const second = await start(store, [textStep('done')], ran, { log: (line) => lines.push(line), retryStoreAfterMs: 20 });
    await vi.waitFor(() => expect(lines.length).toBeGreaterThan(0));
    expect(lines[0]).toBe(`Run r1 is paused: it could not be stored (${DISK_FULL}); it is taken up again from the store once a write succeeds`);
    // What is shown is what is stored: the run goes on, its call waits undecided. It was told stopped, its call
    // "already-decided: cancel", while the store kept both waiting, and the next start brought the call back.
    expect(second.listSessions().find((s) => s.sessionId === 's')).toMatchObject({ activeRunId: 'r1', paused: DISK_FULL });
    expect(await second.getSession('s')).toMatchObject({ activeRunId: 'r1', paused: DISK_FULL });
    expect(listed(second.pending('s'))).toStrictEqual(listed([waiting]));
    expect(listed(await second.listWaiting('s'))).toStrictEqual(listed([waiting]));
    const refused = second.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' });
    await expect(refused).rejects.toBeInstanceOf(RunPausedError);
    // A refusal, as a client tells it from a failure: nothing was applied.
    expect(toTRPCError(await refused.catch((error: unknown) => error)).code).toBe('CONFLICT');
    await expect(refused).rejects.toThrow(
      `The run r1 is paused until its data can be stored (${DISK_FULL}). Nothing was decided: the call still waits, and can be decided once Airlock can store again (it tries again by itself).`,
    );
    expect(lines.some((line) => line.includes('stopped') || line.includes('Could not record'))).toBe(false);
    expect((await store.listRunToolCalls('r1')).map((call) => [call.decision, call.outcome])).toStrictEqual([[null, null]]);
    expect(ran).toStrictEqual([]);

    // Tried again while the disk is still full: still paused, the call still listed.
    const reads = state.runReads;
    await vi.waitFor(() => expect(state.runReads).toBeGreaterThan(reads + 1), { timeout: 10_000 });
    expect(lines.filter((line) => line.startsWith('Run r1 is still paused (database or disk is full): next try in ')).length).toBeGreaterThan(0);
    await vi.waitFor(() => expect(second.listSessions().find((s) => s.sessionId === 's')?.paused).toBe(DISK_FULL));
    expect(listed(second.pending('s'))).toStrictEqual(listed([waiting]));
    await expect(second.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'deny' })).rejects.toBeInstanceOf(RunPausedError);

    // Space is back: the run is taken up from the store, the same call waits, and an allow runs it once.
    state.full = false;
    await vi.waitFor(() => expect(lines).toContain('Run r1 is taken up again: its data can be stored again'), { timeout: 10_000 });
    expect(second.listSessions().find((s) => s.sessionId === 's')).toMatchObject({ activeRunId: 'r1' });
    expect(second.listSessions().find((s) => s.sessionId === 's')?.paused).toBeUndefined();
    expect(listed(second.pending('s'))).toStrictEqual(listed([waiting]));
    expect(await second.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    await runEnded(second, 's');
    expect(ran).toStrictEqual(['ls']);
    const events = await store.loadEvents('r1', 0);
    // The start's own resume stored nothing: the disk was full.
    expect(events.filter((event) => event.type === 'status' && event.resumed === true).map((event) => event.type === 'status' && event.text)).toStrictEqual([
      'Taken up again: its data can be stored again',
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', reason: 'done' });
    expect((await store.getRun('r1'))?.endedAt).not.toBeNull();
  });

  it('lists no call whose start could not be stored; once taken up, the call is put up anew, as after a restart', async () => {
    const { store, state } = fillingStore();
    state.fillAt = 'tool-start';
    const ran: string[] = [];
    const lines: string[] = [];
    const chat = await start(store, [echoCall('ls'), textStep('done')], ran, { log: (line) => lines.push(line), retryStoreAfterMs: 20 });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(lines.length).toBeGreaterThan(0));
    expect(lines[0]).toMatch(/^Run r1 is paused: /);
    // Put up in the write that failed: never shown, and not in the store to be decided.
    expect(chat.pending('s')).toStrictEqual([]);
    expect(await store.listRunToolCalls('r1')).toStrictEqual([]);

    state.fillAt = undefined;
    state.full = false;
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
    const [waiting] = chat.pending('s');
    expect((await store.listRunToolCalls('r1')).map((call) => [call.approvalId, call.decision])).toStrictEqual([[waiting!.approvalId, null]]);
    expect(await chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    await runEnded(chat, 's');
    expect(ran).toStrictEqual(['ls']);
  });

  it('keeps a stop of a paused run, says it is not stored, and stops the run when it is taken up, before anything runs', async () => {
    const { store, state } = fillingStore();
    const ran: string[] = [];
    const waiting = await waitingAfterShutdown(store, ran);

    state.full = true;
    const lines: string[] = [];
    // The model has no step left: a turn taken after the stop fails the test.
    const second = await start(store, [], ran, { log: (line) => lines.push(line), retryStoreAfterMs: 20 });
    await vi.waitFor(() => expect(second.listSessions()[0]?.paused).toBe(DISK_FULL));
    // It was refused, and once the store took writes the run went on by itself (its call waited again, an allow ran it).
    expect(await second.cancel('s')).toBe(1);
    // The answer says what will happen; asked twice, the stop is kept once.
    expect(await second.stop('s')).toStrictEqual({
      cancelled: 1,
      paused:
        `The run r1 is paused until its data can be stored (${DISK_FULL}); it will be stopped when it is taken up, before anything more of it runs. ` +
        `The stop could not be stored (${DISK_FULL}): if Airlock restarts before then, the run goes on.`,
    });
    expect(lines).toContain(`Run r1: its stop could not be stored (${DISK_FULL}); it is kept in memory until the run is taken up`);

    state.full = false;
    await runEnded(second, 's');
    expect(ran).toStrictEqual([]);
    expect((await store.loadEvents('r1', 0)).at(-1)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    expect((await store.listRunToolCalls('r1')).map((call) => [call.approvalId, call.decision])).toStrictEqual([[waiting.approvalId, 'cancel']]);
    expect(second.pending('s')).toStrictEqual([]);
  });

  // A stop while the run is read back from the store (it is still the paused run), and one once the store has taken
  // the run's first write again but before the run goes on (it is the run taken up).
  it.each(['read-back', 'written'] as const)('stops a run taken up when a stop comes during its take-up (%s), before anything runs', async (at) => {
    const { store, state } = fillingStore();
    const ran: string[] = [];
    const waiting = await waitingAfterShutdown(store, ran);

    state.full = true;
    // The model has no step left: a turn taken after the stop fails the test.
    const second = await start(store, [], ran, { retryStoreAfterMs: 20 });
    await vi.waitFor(() => expect(second.listSessions()[0]?.paused).toBe(DISK_FULL));
    const hold: Hold = { at, reached: deferred(), release: deferred() };
    state.hold = hold;
    state.full = false;
    await hold.reached.promise;
    // Read back, the run is still the paused one: the stop is kept for it. Written, it is the run taken up: stopped.
    expect(await second.stop('s')).toStrictEqual(at === 'read-back' ? { cancelled: 1, paused: expect.stringMatching(/it will be stopped when it is taken up, before anything more of it runs\. The stop is stored/) } : { cancelled: 1 });
    hold.release.resolve();

    await runEnded(second, 's');
    expect(ran).toStrictEqual([]);
    expect((await store.loadEvents('r1', 0)).at(-1)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    expect(await store.getRun('r1')).toMatchObject({ endedAt: expect.any(Number), endReason: 'cancelled' });
    expect((await store.listRunToolCalls('r1')).map((call) => [call.approvalId, call.decision])).toStrictEqual([[waiting.approvalId, 'cancel']]);
    expect(second.pending('s')).toStrictEqual([]);
  });

  it('ends a stopped paused run that cannot go on (the model was mid-answer) as stopped, not as an error', async () => {
    const { store, state } = fillingStore();
    // The disk fills up as the model's answer is written: the run is paused in the middle of it.
    state.fillAt = 'text-delta';
    const ran: string[] = [];
    const lines: string[] = [];
    const chat = await start(store, [textStep('hello')], ran, { log: (line) => lines.push(line), retryStoreAfterMs: 20 });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.listSessions()[0]?.paused).toBe(DISK_FULL));
    expect((await chat.stop('s')).paused).toMatch(/it will be stopped when it is taken up, before anything more of it runs/);

    state.fillAt = undefined;
    state.full = false;
    await runEnded(chat, 's');
    // It ended as an error ("This run stopped when its data could not be stored"), though the person had stopped it.
    expect((await store.loadEvents('r1', 0)).at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(await store.getRun('r1')).toMatchObject({ endedAt: expect.any(Number), endReason: 'cancelled' });
  });

  it('ends a run stopped while paused mid-answer as stopped at the start after a restart, the stop stored', async () => {
    const { store, state } = fillingStore();
    state.fillAt = 'text-delta';
    const ran: string[] = [];
    const first = await start(store, [textStep('hello')], ran, { retryStoreAfterMs: 60_000 });
    await first.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(first.listSessions()[0]?.paused).toBe(DISK_FULL));
    state.fillAt = undefined;
    state.full = false;
    expect((await first.stop('s')).paused).toMatch(/The stop is stored: it holds across a restart\.$/);
    await first.shutdown();

    const second = await start(store, [], ran);
    await runEnded(second, 's');
    expect((await store.loadEvents('r1', 0)).at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(await store.getRun('r1')).toMatchObject({ endedAt: expect.any(Number), endReason: 'cancelled' });
  });

  it('stores a stop of a paused run when the store takes it: a start after a restart stops the run, running nothing', async () => {
    const { store, state } = fillingStore();
    const ran: string[] = [];
    await waitingAfterShutdown(store, ran);

    state.full = true;
    const second = await start(store, [], ran, { retryStoreAfterMs: 60_000 });
    await vi.waitFor(() => expect(second.listSessions()[0]?.paused).toBe(DISK_FULL));
    // The store takes writes again before the next try: the stop is stored.
    state.full = false;
    const answer = await second.stop('s', 'r1');
    expect(answer.paused).toMatch(/it will be stopped when it is taken up, before anything more of it runs\. The stop is stored: it holds across a restart\.$/);
    await second.shutdown();

    const third = await start(store, [], ran);
    await runEnded(third, 's');
    expect(ran).toStrictEqual([]);
    expect((await store.loadEvents('r1', 0)).at(-1)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
  });

  it('leaves a paused run as stored at shutdown: the next start resumes it waiting', async () => {
    const { store, state } = fillingStore();
    const ran: string[] = [];
    const waiting = await waitingAfterShutdown(store, ran);

    state.full = true;
    const lines: string[] = [];
    const second = await start(store, [], ran, { log: (line) => lines.push(line), retryStoreAfterMs: 60_000, suspendRunsOnShutdown: false });
    await vi.waitFor(() => expect(lines.some((line) => line.startsWith('Run r1 is paused'))).toBe(true));
    await second.shutdown();

    state.full = false;
    const third = await start(store, [textStep('done')], ran);
    await vi.waitFor(() => expect(listed(third.pending('s'))).toStrictEqual(listed([waiting])));
    expect(await third.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    await runEnded(third, 's');
    expect(ran).toStrictEqual(['ls']);
  });
});

describe('ChatService stopping a run going here while its store cannot take writes', () => {
  /** Run r1 of chat s, its call (echo ls) put up and waiting; the model has no step after it, so a turn taken after a stop fails the test. */
  async function waitingCall(store: MemoryStore, ran: string[], extra: Partial<ChatServiceOptions> = {}) {
    const chat = await start(store, [echoCall('ls')], ran, extra);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    return { chat, waiting: chat.pending('s')[0]! };
  }

  it('says a stop it could not store does not hold yet, keeps it, and stores it once it can: a start after a restart finds the run stopped', async () => {
    const { store, state } = fillingStore();
    const ran: string[] = [];
    const lines: string[] = [];
    const { chat, waiting } = await waitingCall(store, ran, { log: (line) => lines.push(line), retryStoreAfterMs: 20 });
    state.full = true;
    await expect(chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' })).rejects.toThrow(/could not be stored/);
    // It answered { cancelled: 1 } alone, the run ended as an error in memory with nothing stored and nothing tried
    // again, and the next start brought the call back waiting under the same id.
    expect(await chat.stop('s')).toStrictEqual({
      cancelled: 1,
      paused:
        `The run r1 is stopped here, but its stop could not be stored (${DISK_FULL}): it is stored once Airlock can store again (it tries again by itself). ` +
        'If Airlock restarts before then, the run comes back, its calls waiting for a decision again.',
    });
    expect(lines).toContain(`Run r1: its stop could not be stored (${DISK_FULL}); it is stopped here, and stored once the store takes writes again`);
    // Shown as stored: the run goes on, paused; its call is stopped here, and an allow on it runs nothing.
    await vi.waitFor(() => expect(chat.listSessions()[0]).toMatchObject({ activeRunId: 'r1', paused: DISK_FULL }));
    expect(chat.pending('s')).toStrictEqual([]);
    expect(await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'cancel' });

    state.full = false;
    await runEnded(chat, 's');
    expect((await store.loadEvents('r1', 0)).at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(await store.getRun('r1')).toMatchObject({ endedAt: expect.any(Number), endReason: 'cancelled' });
    expect((await store.listRunToolCalls('r1')).map((call) => [call.approvalId, call.decision, call.outcome])).toStrictEqual([[waiting.approvalId, 'cancel', 'cancelled']]);
    await chat.shutdown();

    const restarted = await start(store, [], ran);
    expect(restarted.listSessions()[0]?.activeRunId).toBeNull();
    expect(restarted.pending('s')).toStrictEqual([]);
    expect(ran).toStrictEqual([]);
  });

  it('stores the stop before the run’s end: a run whose cancel could not be written is stopped by the start after a restart', async () => {
    const { store, state } = fillingStore();
    // The disk fills up as the stop's cancel is written, after the stop itself was stored.
    state.fillAt = 'tool-decision';
    const ran: string[] = [];
    const { chat, waiting } = await waitingCall(store, ran, { retryStoreAfterMs: 60_000 });
    expect(await chat.stop('s')).toStrictEqual({ cancelled: 1 });
    await vi.waitFor(() => expect(chat.listSessions()[0]?.paused).toBe(DISK_FULL));
    await chat.shutdown();

    // Space is back at the restart: the run is taken up as stored, and stopped first.
    state.fillAt = undefined;
    state.full = false;
    const restarted = await start(store, [], ran);
    await runEnded(restarted, 's');
    expect(restarted.pending('s')).toStrictEqual([]);
    expect(ran).toStrictEqual([]);
    expect((await store.loadEvents('r1', 0)).at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect((await store.listRunToolCalls('r1')).map((call) => [call.approvalId, call.decision])).toStrictEqual([[waiting.approvalId, 'cancel']]);
  });
});

describe('ChatService resuming a run whose end was stored but not marked', () => {
  it('marks it ended, with the one run-end it has', async () => {
    const store = new MemoryStore();
    const endRun = store.endRun.bind(store);
    let marking = false;
    store.endRun = (...args) => (marking ? endRun(...args) : Promise.reject(new Error(DISK_FULL)));
    const ran: string[] = [];
    const lines: string[] = [];
    const first = await start(store, [textStep('hello')], ran, { log: (line) => lines.push(line) });
    await first.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await runEnded(first, 's');
    expect(lines).toStrictEqual([`Could not record the end of run r1: ${DISK_FULL}`]);
    await first.shutdown();

    marking = true;
    const second = await start(store, [], ran);
    expect(second.listSessions()[0]?.activeRunId).toBeNull();
    expect(await store.getRun('r1')).toMatchObject({ endedAt: expect.any(Number), endReason: 'done' });
    const ends = (await store.loadEvents('r1', 0)).filter((event) => event.type === 'run-end');
    expect(ends).toStrictEqual([{ type: 'run-end', runId: 'r1', reason: 'done' }]);
  });
});
