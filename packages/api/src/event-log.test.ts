import type { LoopEvent } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { EventLog, eventSize, parseEventId, StoredRunFollower, type EventPageReader } from './event-log';
import { ManualWindow } from './test-support';

const text = (t: string): LoopEvent => ({ type: 'text-delta', text: t });
const idOf = (id: string, event: LoopEvent) => `${id}=${event.type === 'text-delta' ? event.text : event.type}`;

async function drain<T>(iterator: AsyncIterator<T>): Promise<T[]> {
  const values: T[] = [];
  for (;;) {
    const next = await iterator.next();
    if (next.done) return values;
    values.push(next.value);
  }
}

describe('EventLog', () => {
  it('replays the events after a seq, then follows live ones until the log closes', async () => {
    const log = new EventLog('run-1');
    log.append(text('a'));
    log.append(text('b'));
    const follower = log.follow(1, idOf);
    const all = drain(follower);
    log.append(text('c'));
    log.close();
    expect(await all).toEqual(['run-1:2=b', 'run-1:3=c']);
  });

  it('keeps every event, its place and its waiting followers when compacted, and appends after it', async () => {
    const log = new EventLog('run-1');
    log.append(text('a'));
    log.append(text('b'));
    const waiting = log.follow(2, idOf);
    const next = waiting.next();
    log.compact();
    expect([log.size, log.eventAt(1), log.eventAt(2)]).toEqual([2, text('a'), text('b')]);
    log.append(text('c'));
    expect(await next).toEqual({ done: false, value: 'run-1:3=c' });
    log.close();
    expect(await drain(log.follow(0, idOf))).toEqual(['run-1:1=a', 'run-1:2=b', 'run-1:3=c']);
  });

  it('wakes every waiting follower on one append, each at its own place', async () => {
    const log = new EventLog('r');
    log.append(text('a'));
    const fromStart = log.follow(0, idOf);
    const fromEnd = log.follow(1, idOf);
    expect(await fromStart.next()).toEqual({ done: false, value: 'r:1=a' });
    const waitingA = fromStart.next();
    const waitingB = fromEnd.next();
    log.append(text('b'));
    expect(await waitingA).toEqual({ done: false, value: 'r:2=b' });
    expect(await waitingB).toEqual({ done: false, value: 'r:2=b' });
  });

  it('ends a pending next() at once on return(), and the follower stays done', async () => {
    const log = new EventLog('r');
    const follower = log.follow(0, idOf);
    const pending = follower.next();
    expect(await follower.return()).toEqual({ done: true, value: undefined });
    expect(await pending).toEqual({ done: true, value: undefined });
    log.append(text('late'));
    expect(await follower.next()).toEqual({ done: true, value: undefined });
  });

  it('ends on dispose, as tRPC does when a subscription stops', async () => {
    const log = new EventLog('r');
    const follower = log.follow(0, idOf);
    const pending = follower.next();
    await follower[Symbol.asyncDispose]();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('stops at the next step once its signal has aborted', async () => {
    const log = new EventLog('r');
    const controller = new AbortController();
    log.append(text('a'));
    log.append(text('b'));
    const follower = log.follow(0, idOf, controller.signal);
    expect(await follower.next()).toEqual({ done: false, value: 'r:1=a' });
    controller.abort();
    expect(await follower.next()).toEqual({ done: true, value: undefined });
  });

  it('refuses a second next() while one is pending', async () => {
    const log = new EventLog('r');
    const follower = log.follow(0, idOf);
    const first = follower.next();
    await expect(follower.next()).rejects.toThrow(/earlier next\(\) is pending/);
    log.append(text('a'));
    expect(await first).toEqual({ done: false, value: 'r:1=a' });
  });

  it('fails only the read whose wrap throws, which ends that follower; other followers still wake', async () => {
    const log = new EventLog('r');
    const broken = log.follow(0, () => {
      throw new Error('cannot wrap');
    });
    const healthy = log.follow(0, idOf);
    const failing = broken.next();
    const fine = healthy.next();
    log.append(text('a'));
    await expect(failing).rejects.toThrow('cannot wrap');
    expect(await fine).toEqual({ done: false, value: 'r:1=a' });
    expect(await broken.next()).toEqual({ done: true, value: undefined });
  });

  it('ignores appends after close', async () => {
    const log = new EventLog('r');
    log.append(text('a'));
    log.close();
    log.append(text('b'));
    expect(await drain(log.follow(0, idOf))).toEqual(['r:1=a']);
    expect(log.size).toBe(1);
  });
});


describe('LogFollower bound to a send window', () => {
  it('waits while the window is shut and goes on where it stopped, with no gap', async () => {
    const log = new EventLog('r');
    for (const t of ['a', 'b', 'c']) log.append(text(t));
    const window = new ManualWindow();
    const follower = log.follow(0, idOf).bind({ window });
    expect(await follower.next()).toEqual({ done: false, value: 'r:1=a' });

    window.open = false;
    let settled = false;
    const waiting = follower.next().finally(() => (settled = true));
    log.append(text('d'));
    await Promise.resolve();
    expect([settled, window.parked.size]).toEqual([false, 1]);

    window.reopen();
    expect(await waiting).toEqual({ done: false, value: 'r:2=b' });
    log.close();
    expect(await drain(follower)).toEqual(['r:3=c', 'r:4=d']);
  });

  it('ends at once on return() while it waits for the window, and reports its end once', async () => {
    const log = new EventLog('r');
    log.append(text('a'));
    const window = new ManualWindow();
    window.open = false;
    let finished = 0;
    const follower = log.follow(0, idOf).bind({ window, places: { releaseSubscription: () => finished++ } });
    const waiting = follower.next();

    await follower.return();

    expect(await waiting).toEqual({ done: true, value: undefined });
    expect([window.parked.size, finished]).toEqual([0, 1]);
    await follower.return();
    expect(finished).toBe(1);
  });

  it('reports its end when the log closes and when a read fails', async () => {
    const log = new EventLog('r');
    let finished = 0;
    const follower = log.follow(0, idOf).bind({ places: { releaseSubscription: () => finished++ } });
    const all = drain(follower);
    log.close();
    expect(await all).toEqual([]);
    expect(finished).toBe(1);

    const failing = new EventLog('f');
    failing.append(text('x'));
    const broken = failing.follow(0, () => {
      throw new Error('wrap failed');
    }).bind({ places: { releaseSubscription: () => finished++ } });
    await expect(broken.next()).rejects.toThrow('wrap failed');
    expect(finished).toBe(2);
  });
});

describe('StoredRunFollower', () => {
  /** A run of `count` text events in the store, read `size` at a time; each read is counted. */
  function storedRun(count: number, size: number) {
    const events = Array.from({ length: count }, (_, at) => text(String.fromCharCode(97 + at)));
    const reads: number[] = [];
    const read: EventPageReader = (afterSeq) => {
      reads.push(afterSeq);
      return Promise.resolve(events.slice(afterSeq, afterSeq + size));
    };
    return { read, reads };
  }

  it('replays after a seq a page at a time up to the last seq it was given', async () => {
    const { read, reads } = storedRun(5, 2);
    expect(await drain(new StoredRunFollower('r', 1, 4, read, idOf, undefined))).toStrictEqual(['r:2=b', 'r:3=c', 'r:4=d']);
    expect(reads).toStrictEqual([1, 3]);
  });

  it('refuses a second next() while one is pending', async () => {
    const { read } = storedRun(1, 1);
    const follower = new StoredRunFollower('r', 0, 1, read, idOf, undefined);
    const first = follower.next();
    await expect(follower.next()).rejects.toThrow('StoredRunFollower.next() called while an earlier next() is pending');
    expect(await first).toStrictEqual({ done: false, value: 'r:1=a' });
  });

  it('ends at once on return() while it waits for the window, reports its end once, and stays done', async () => {
    const { read, reads } = storedRun(2, 2);
    const window = new ManualWindow();
    window.open = false;
    let finished = 0;
    const follower = new StoredRunFollower('r', 0, 2, read, idOf, undefined).bind({ window, places: { releaseSubscription: () => finished++ } });
    const waiting = follower.next();
    expect(window.parked.size).toBe(1);

    await follower.return();

    expect(await waiting).toStrictEqual({ done: true, value: undefined });
    expect([window.parked.size, finished]).toStrictEqual([0, 1]);
    await follower[Symbol.asyncDispose]();
    expect(await follower.next()).toStrictEqual({ done: true, value: undefined });
    expect([finished, reads]).toStrictEqual([1, []]);
  });

  it('rejects next() when a page cannot be read, reports its end, and is done', async () => {
    let finished = 0;
    const follower = new StoredRunFollower('r', 0, 3, () => Promise.reject(new Error('store gone')), idOf, undefined).bind({
      places: { releaseSubscription: () => finished++ },
    });
    await expect(follower.next()).rejects.toThrow('store gone');
    expect(finished).toBe(1);
    expect(await follower.next()).toStrictEqual({ done: true, value: undefined });
    expect(finished).toBe(1);
  });
});

describe('parseEventId', () => {
  it('reads the run and seq of an event id, and nothing else', () => {
    expect(parseEventId('run:x:7')).toEqual({ runId: 'run:x', seq: 7 });
    expect(parseEventId(undefined)).toBeUndefined();
    expect(parseEventId('no-seq')).toBeUndefined();
    expect(parseEventId('run:-1')).toBeUndefined();
    expect(parseEventId('run:1.5')).toBeUndefined();
    expect(parseEventId('run:')).toBeUndefined();
    expect(parseEventId('run:1e3')).toBeUndefined();
    expect(parseEventId('run: 7')).toBeUndefined();
    expect(parseEventId('run:99999999999999999999')).toBeUndefined();
  });
});

describe('eventSize', () => {
  it('is about the length of the event as JSON, so a large result weighs what it holds and a delta little', () => {
    const events: LoopEvent[] = [
      text('a'),
      { type: 'run-start', runId: 'run_1', sessionId: 's1' },
      { type: 'tool-end', toolCallId: 'call_1', toolName: 'read_file', outcome: 'executed', result: 'x'.repeat(100_000), startedAt: 1_700_000_000_000 },
      { type: 'run-end', runId: 'run_1', reason: 'error', error: 'é'.repeat(1_000) },
    ];
    for (const event of events) {
      const json = JSON.stringify(event).length;
      expect(Math.abs(eventSize(event) - json)).toBeLessThanOrEqual(16);
    }
  });

  it('walks arguments nested however deep without running out of stack', () => {
    let nested: unknown = 'leaf';
    for (let depth = 0; depth < 100_000; depth++) nested = [nested];
    const start: LoopEvent = { type: 'tool-start', toolCallId: 'c', toolName: 't', arguments: { nested }, approvalId: '', awaitingConfirmation: false };
    expect(eventSize(start)).toBeGreaterThan(300_000);
  });

  it('is counted by the log as events are appended', () => {
    const log = new EventLog('r');
    log.append(text('hello'));
    log.append(text('x'.repeat(1_000)));
    expect(log.bytes).toBe(eventSize(text('hello')) + eventSize(text('x'.repeat(1_000))));
    log.close();
    log.append(text('after close'));
    expect(log.bytes).toBe(eventSize(text('hello')) + eventSize(text('x'.repeat(1_000))));
  });
});
