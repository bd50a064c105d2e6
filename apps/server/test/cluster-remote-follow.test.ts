import { ChatService, type LoopEvent } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel } from '@airlock/core/testing';
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/store';
import { escapeIdentifier } from 'pg';
import { openTestDatabase, probeTestDatabase, withClient } from './support/postgres';

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the test of following a run another instance owns: ${postgres.reason}`);

/** The most one read of a followed run may take: the store's page for replays (REPLAY_PAGE in @airlock/api). */
const PAGE = { events: 100, chars: 256 * 1024 };

/** A store whose reads of run events are recorded: how many events, and how many characters of JSON, each answered. */
function recordingReads(store: PostgresStore): { store: PostgresStore; reads: { events: number; chars: number }[] } {
  const reads: { events: number; chars: number }[] = [];
  const recording = new Proxy(store, {
    get(target, key) {
      if (key === 'loadEvents') {
        return async (...args: Parameters<PostgresStore['loadEvents']>) => {
          const events = await target.loadEvents(...args);
          reads.push({ events: events.length, chars: events.reduce((sum, event) => sum + JSON.stringify(event).length, 0) });
          return events;
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: recording, reads };
}

const delta = (seq: number): LoopEvent => ({ type: 'text-delta', text: `delta ${seq} ` });
const bigResult = (seq: number): LoopEvent => ({ type: 'tool-end', toolCallId: `call_${seq}`, toolName: 'read_file', outcome: 'executed', result: `${seq}`.padEnd(100_000, 'x') });

describe.skipIf(!postgres.available)('following a run another instance owns', { timeout: 120_000 }, () => {
  it('reads it from the store a page at a time, from its start and as its owner writes, every event once and in order', async () => {
    await using db = await openTestDatabase();
    // The owner, A: writes the run as its ChatService would (owned under fencing token 1), and lives on meanwhile.
    const owner = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: 'a', leaseMs: 600_000, log: () => {} });
    await using _owner = { [Symbol.asyncDispose]: () => owner.close() };
    await owner.createSession({ sessionId: 's1', title: 'long', createdAt: 1, updatedAt: 1, confirmToolCalls: true, lastRunId: 'r1' });
    await owner.createRun({ runId: 'r1', sessionId: 's1', options: {}, startedAt: 1, endedAt: null, endReason: null }, 'a');
    const written: LoopEvent[] = [];
    const write = async (events: LoopEvent[]) => {
      const from = written.length;
      written.push(...events);
      await owner.appendEvents(events.map((event, index) => ({ runId: 'r1', sessionId: 's1', seq: from + index + 1, event, at: 1, fence: 1 })));
    };
    await write([{ type: 'run-start', runId: 'r1', sessionId: 's1' }, ...Array.from({ length: 1_499 }, (_, index) => delta(index + 2))]);

    // B follows it from its start: a client attached to B.
    const raw = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: 'b', leaseMs: 600_000, log: () => {} });
    await using _raw = { [Symbol.asyncDispose]: () => raw.close() };
    const { store, reads } = recordingReads(raw);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [], store, cluster: raw, log: () => {} });
    await using _chat = { [Symbol.asyncDispose]: () => chat.shutdown() };
    await chat.open();
    expect(await chat.attachable('s1', 'r1')).toBe(true);
    await using follower = chat.follow('s1', 'r1', 0, (id, event) => ({ id, event }));
    const seen: { id: string; event: LoopEvent }[] = [];
    const readUpTo = async (count: number) => {
      while (seen.length < count) {
        const next = await follower.next();
        if (next.done) break;
        seen.push(next.value);
      }
    };
    await readUpTo(1_500);

    // A writes on, each write announced to B with its last seq: many deltas at once, then ten results of 100,000
    // characters, then the end.
    await write(Array.from({ length: 1_000 }, (_, index) => delta(1_501 + index)));
    await readUpTo(2_500);
    await write(Array.from({ length: 10 }, (_, index) => bigResult(2_501 + index)));
    await write([{ type: 'run-end', runId: 'r1', reason: 'done' }]);
    await readUpTo(Number.POSITIVE_INFINITY);

    expect(seen.map(({ id }) => id)).toStrictEqual(written.map((_, index) => `r1:${index + 1}`));
    expect(seen.map(({ event }) => event)).toStrictEqual(written);
    // Each event read once, never more than a page at a time (the old follow read all 1,500 of the start at once).
    expect(reads.reduce((sum, read) => sum + read.events, 0)).toBe(written.length);
    expect(Math.max(...reads.map((read) => read.events))).toBeLessThanOrEqual(PAGE.events);
    expect(Math.max(...reads.filter((read) => read.events > 1).map((read) => read.chars))).toBeLessThanOrEqual(PAGE.chars);
  });

  it('leaves out an event whose stored record is damaged: a status naming it takes its seq, the events after it follow, and the log says it', async () => {
    await using db = await openTestDatabase();
    const owner = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: 'a', leaseMs: 600_000, log: () => {} });
    await using _owner = { [Symbol.asyncDispose]: () => owner.close() };
    await owner.createSession({ sessionId: 's1', title: 'damaged', createdAt: 1, updatedAt: 1, confirmToolCalls: true, lastRunId: 'r1' });
    await owner.createRun({ runId: 'r1', sessionId: 's1', options: {}, startedAt: 1, endedAt: null, endReason: null }, 'a');
    const written: LoopEvent[] = [];
    const write = async (events: LoopEvent[]) => {
      const from = written.length;
      written.push(...events);
      await owner.appendEvents(events.map((event, index) => ({ runId: 'r1', sessionId: 's1', seq: from + index + 1, event, at: 1, fence: 1 })));
    };
    await write([{ type: 'run-start', runId: 'r1', sessionId: 's1' }, delta(2), delta(3)]);
    await withClient(async (client) => {
      await client.query(`UPDATE ${escapeIdentifier(db.schema)}.events SET json = '{"type":"text-delta","text":5}' WHERE run_id = 'r1' AND seq = 2`);
    });

    const store = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: 'b', leaseMs: 600_000, log: () => {} });
    await using _store = { [Symbol.asyncDispose]: () => store.close() };
    const logged: string[] = [];
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [], store, cluster: store, log: (line) => logged.push(line) });
    await using _chat = { [Symbol.asyncDispose]: () => chat.shutdown() };
    await chat.open();
    expect(await chat.attachable('s1', 'r1')).toBe(true);
    await using follower = chat.follow('s1', 'r1', 0, (id, event) => ({ id, event }));
    await write([delta(4), { type: 'run-end', runId: 'r1', reason: 'done' }]);
    const seen: { id: string; event: LoopEvent }[] = [];
    for (let next = await follower.next(); next.done !== true; next = await follower.next()) seen.push(next.value);

    const record = 'an event of run r1: text: Invalid input: expected string, received number';
    expect(seen.map(({ id }) => id)).toStrictEqual(written.map((_, index) => `r1:${index + 1}`));
    expect(seen.map(({ event }) => event)).toStrictEqual([
      written[0],
      { type: 'status', text: `A stored event of this run is damaged (${record}): left out of what is shown here, and left as stored.` },
      ...written.slice(2),
    ]);
    expect(logged).toStrictEqual([`Run r1 of chat s1, followed here: a stored event of it is damaged (${record}): left out of what its clients here are shown, and left as stored.`]);
  });

  it('closes once the run has ended in the store when its damaged event left out is its last one (its run-end): the status in its place is the last its clients are shown', async () => {
    await using db = await openTestDatabase();
    const owner = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: 'a', leaseMs: 600_000, log: () => {} });
    await using _owner = { [Symbol.asyncDispose]: () => owner.close() };
    await owner.createSession({ sessionId: 's1', title: 'damaged end', createdAt: 1, updatedAt: 1, confirmToolCalls: true, lastRunId: 'r1' });
    await owner.createRun({ runId: 'r1', sessionId: 's1', options: {}, startedAt: 1, endedAt: null, endReason: null }, 'a');
    const written: LoopEvent[] = [{ type: 'run-start', runId: 'r1', sessionId: 's1' }, delta(2), { type: 'run-end', runId: 'r1', reason: 'done' }];
    await owner.appendEvents(written.map((event, index) => ({ runId: 'r1', sessionId: 's1', seq: index + 1, event, at: 1, fence: 1 })));
    await withClient(async (client) => {
      const damaged = await client.query(`UPDATE ${escapeIdentifier(db.schema)}.events SET json = '{"type":"run-end","runId":5,"reason":"done"}' WHERE run_id = 'r1' AND seq = 3`);
      expect(damaged.rowCount).toBe(1);
    });

    const store = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: 'b', leaseMs: 600_000, log: () => {} });
    await using _store = { [Symbol.asyncDispose]: () => store.close() };
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [], store, cluster: store, log: () => {} });
    await using _chat = { [Symbol.asyncDispose]: () => chat.shutdown() };
    await chat.open();
    // Followed while its row says it goes on: every event is read, the run-end left out, and the follow goes on.
    expect(await chat.attachable('s1', 'r1')).toBe(true);
    await using follower = chat.follow('s1', 'r1', 0, (id, event) => ({ id, event }));
    const seen: { id: string; event: LoopEvent }[] = [];
    while (seen.length < written.length) {
      const next = await follower.next();
      if (next.done === true) break;
      seen.push(next.value);
    }
    expect(chat.isRunActive('r1')).toBe(true);

    // Its owner ends it as a run's end is recorded: the row marked ended, then the chat's change told.
    await owner.endRun('r1', 'done', 2, 1);
    await owner.publish({ type: 'session', sessionId: 's1' });
    await expect.poll(() => chat.isRunActive('r1')).toBe(false);
    expect((await follower.next()).done).toBe(true);

    const record = 'an event of run r1: runId: Invalid input: expected string, received number';
    expect(seen.map(({ id }) => id)).toStrictEqual(['r1:1', 'r1:2', 'r1:3']);
    expect(seen.map(({ event }) => event)).toStrictEqual([...written.slice(0, 2), { type: 'status', text: `A stored event of this run is damaged (${record}): left out of what is shown here, and left as stored.` }]);
  });
});
