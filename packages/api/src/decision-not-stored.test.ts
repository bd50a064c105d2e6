import { textStep, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatService } from './chat-service';
import { MemoryStore } from './memory-store';
import { DISK_FULL, echoCall, runEnded, startEchoChat } from './test-support';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

/**
 * A store whose disk fills up on demand: while `full`, writing a decision or a grant fails as SQLite's would; while
 * `fullForAll`, writing any event does.
 */
function fillingStore() {
  const store = new MemoryStore();
  const state = { full: false, fullForAll: false };
  const one = store.appendEvent.bind(store);
  const many = store.appendEvents.bind(store);
  const grant = store.saveGrant.bind(store);
  const fails = (type: string) => state.fullForAll || (state.full && type === 'tool-decision');
  store.appendEvent = (input) => (fails(input.event.type) ? Promise.reject(new Error(DISK_FULL)) : one(input));
  store.appendEvents = (inputs) => (inputs.some((input) => fails(input.event.type)) ? Promise.reject(new Error(DISK_FULL)) : many(inputs));
  const endRun = store.endRun.bind(store);
  store.endRun = (...args) => (state.fullForAll ? Promise.reject(new Error(DISK_FULL)) : endRun(...args));
  store.saveGrant = (input) => (state.full ? Promise.reject(new Error(DISK_FULL)) : grant(input));
  return { store, state };
}

const start = (store: MemoryStore, steps: ScriptStep[], ran: string[]) => startEchoChat(services, store, steps, ran);

async function waiting(chat: ChatService, sessionId: string): Promise<string> {
  await vi.waitFor(() => expect(chat.pending(sessionId)).toHaveLength(1), { timeout: 10_000 });
  return chat.pending(sessionId)[0]!.approvalId;
}

describe('ChatService when a decision cannot be stored', () => {
  it('answers an allow it could not store with an error; the call still waits, and an allow once space is back runs it once', async () => {
    const { store, state } = fillingStore();
    const ran: string[] = [];
    const chat = await start(store, [echoCall('ls'), textStep('done')], ran);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const approvalId = await waiting(chat, 's');
    state.full = true;
    await expect(chat.confirm({ sessionId: 's', approvalId, decision: 'allow' })).rejects.toThrow(/could not be stored \(database or disk is full\): the call still waits/);
    expect(chat.pending('s').map((p) => p.approvalId)).toStrictEqual([approvalId]);
    expect(ran).toStrictEqual([]);
    expect(chat.listSessions().find((s) => s.sessionId === 's')?.activeRunId).toBe('r1');
    expect((await store.listRunToolCalls('r1')).map((call) => call.decision)).toStrictEqual([null]);

    state.full = false;
    expect(await chat.confirm({ sessionId: 's', approvalId, decision: 'allow' })).toStrictEqual({ resolved: true, status: 'resolved', decision: 'allow' });
    await runEnded(chat, 's');
    expect(ran).toStrictEqual(['ls']);
    expect(await store.listRunToolCalls('r1')).toMatchObject([{ approvalId, decision: 'allow', outcome: 'executed' }]);
    const events = await store.loadEvents('r1', 0);
    expect(events.map((event) => event.type)).not.toContain('run-end-error');
    expect(events.at(-1)).toMatchObject({ type: 'run-end', reason: 'done' });
  });

  it('does not report a deny it could not store as resolved: the call waits, and the deny given again holds', async () => {
    const { store, state } = fillingStore();
    const ran: string[] = [];
    const chat = await start(store, [echoCall('rm'), textStep('done')], ran);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const approvalId = await waiting(chat, 's');
    state.full = true;
    await expect(chat.confirm({ sessionId: 's', approvalId, decision: 'deny', reason: 'no' })).rejects.toThrow(/could not be stored/);
    expect(chat.pending('s').map((p) => p.approvalId)).toStrictEqual([approvalId]);
    state.full = false;
    expect(await chat.confirm({ sessionId: 's', approvalId, decision: 'deny', reason: 'no' })).toMatchObject({ resolved: true, decision: 'deny' });
    await runEnded(chat, 's');
    expect(ran).toStrictEqual([]);
    expect(await store.listRunToolCalls('r1')).toMatchObject([{ approvalId, decision: 'deny', outcome: 'denied' }]);
  });

  it('makes no grant it could not store: the grant is not listed, the call still waits, and a later call is asked', async () => {
    const { store, state } = fillingStore();
    const ran: string[] = [];
    const chat = await start(store, [echoCall('ls'), echoCall('pwd'), textStep('done')], ran);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const first = await waiting(chat, 's');
    state.full = true;
    await expect(chat.confirm({ sessionId: 's', approvalId: first, decision: 'allow', always: true })).rejects.toThrow(/could not be stored/);
    expect(chat.listGrants('s')).toStrictEqual([]);
    expect(chat.pending('s').map((p) => p.approvalId)).toStrictEqual([first]);
    expect(ran).toStrictEqual([]);

    state.full = false;
    expect(await chat.confirm({ sessionId: 's', approvalId: first, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    // The next call of the tool (a grant would cover any of its arguments): no grant lets it through, it waits.
    await vi.waitFor(() => expect(chat.pending('s').map((p) => p.approvalId)).toHaveLength(1), { timeout: 10_000 });
    expect(chat.pending('s')[0]!.approvalId).not.toBe(first);
    expect(ran).toStrictEqual(['ls']);
    expect(await store.listGrants()).toStrictEqual([]);
  });

  it('a run resumed after a restart whose first write fails leaves none of its calls waiting: a decision is answered, not held', async () => {
    const { store, state } = fillingStore();
    const ran: string[] = [];
    const first = await start(store, [echoCall('ls'), textStep('done')], ran);
    await first.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const approvalId = await waiting(first, 's');
    await first.shutdown();
    // Restarted with the disk full: the resumed run stops at its first write.
    state.fullForAll = true;
    const second = await start(store, [textStep('done')], ran);
    await runEnded(second, 's');
    expect(second.pending('s')).toStrictEqual([]);
    // Ended with its run. Before, the call stayed listed and an allow waited for a loop that was gone, then read
    // "already-decided" allow, while nothing was stored or run.
    expect(await second.confirm({ sessionId: 's', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'cancel' });
    expect(ran).toStrictEqual([]);
    expect((await store.listRunToolCalls('r1')).map((call) => call.decision)).toStrictEqual([null]);

    // With space again, the next start puts the call back to waiting, and an allow runs it once.
    state.fullForAll = false;
    await second.shutdown();
    const third = await start(store, [textStep('done')], ran);
    expect(await waiting(third, 's')).toBe(approvalId);
    expect(await third.confirm({ sessionId: 's', approvalId, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    await runEnded(third, 's');
    expect(ran).toStrictEqual(['ls']);
  });
});
