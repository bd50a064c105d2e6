import type { LoopEvent } from '@airlock/client';
import { describe, expect, it } from 'vitest';
import { RunEvents } from './run-events';

/** A run's stream that gives out only what the test has pushed, like events arriving over the socket. */
function liveStream() {
  const queue: LoopEvent[] = [];
  const waiters: ((result: IteratorResult<LoopEvent>) => void)[] = [];
  let ended = false;
  let failure: Error | undefined;
  const settle = () => {
    while (waiters.length > 0 && (queue.length > 0 || ended || failure !== undefined)) {
      const waiter = waiters.shift()!;
      const value = queue.shift();
      if (value !== undefined) waiter({ value, done: false });
      else waiter({ value: undefined, done: true });
    }
  };
  const source: AsyncIterator<LoopEvent> = {
    next: () =>
      failure !== undefined && queue.length === 0
        ? Promise.reject(failure)
        : new Promise((resolve) => {
            waiters.push(resolve);
            settle();
          }),
  };
  return {
    source,
    push: (...events: LoopEvent[]) => {
      queue.push(...events);
      settle();
    },
    end: () => {
      ended = true;
      settle();
    },
    fail: (error: Error) => {
      failure = error;
    },
  };
}

const start = (toolCallId: string): LoopEvent => ({ type: 'tool-start', toolCallId, toolName: 'echo', arguments: {}, approvalId: `apv_${toolCallId}`, awaitingConfirmation: true });
const decision = (toolCallId: string): LoopEvent => ({ type: 'tool-decision', toolCallId, approvalId: `apv_${toolCallId}`, decision: 'allow', source: 'user' });
const end = (toolCallId: string): LoopEvent => ({ type: 'tool-end', toolCallId, toolName: 'echo', outcome: 'executed', result: 'ok' });
const isDecisionOf = (toolCallId: string) => (event: LoopEvent) => event.type === 'tool-decision' && event.toolCallId === toolCallId;

describe('RunEvents', () => {
  it('reads ahead for an event while the ones before it stay queued, in their order', async () => {
    const stream = liveStream();
    const events = new RunEvents(stream.source);
    stream.push(start('c1'));
    expect(await events.next()).toStrictEqual(start('c1'));

    const watching = new AbortController();
    const arrival = events.arrival(isDecisionOf('c1'), watching.signal);
    stream.push(start('c2'));
    stream.push(decision('c1'), end('c1'));
    expect(await arrival).toStrictEqual(decision('c1'));
    watching.abort();

    expect(await events.next()).toStrictEqual(start('c2'));
    expect(await events.next()).toStrictEqual(decision('c1'));
    expect(await events.next()).toStrictEqual(end('c1'));
  });

  it('finds an event read already, and gives no more an event taken out of its place', async () => {
    const stream = liveStream();
    const events = new RunEvents(stream.source);
    stream.push(start('c1'), start('c2'), decision('c2'));
    expect(await events.arrival(isDecisionOf('c2'), new AbortController().signal)).toStrictEqual(decision('c2'));
    expect(await events.next()).toStrictEqual(start('c1'));
    const found = events.find(isDecisionOf('c2'));
    expect(found).toStrictEqual(decision('c2'));
    events.remove(found!);
    expect(events.find(isDecisionOf('c2'))).toBeUndefined();
    stream.push(end('c2'));
    stream.end();
    expect(await events.next()).toStrictEqual(start('c2'));
    expect(await events.next()).toStrictEqual(end('c2'));
    expect(await events.next()).toBeUndefined();
  });

  it('stops watching when told to, or when the events end without the one watched for, losing nothing', async () => {
    const stream = liveStream();
    const events = new RunEvents(stream.source);
    const watching = new AbortController();
    const arrival = events.arrival(isDecisionOf('c1'), watching.signal);
    watching.abort();
    expect(await arrival).toBeUndefined();
    // The read in flight when the watch stopped still lands in the queue.
    stream.push(start('c1'));
    expect(await events.next()).toStrictEqual(start('c1'));

    const untilEnd = events.arrival(isDecisionOf('c1'), new AbortController().signal);
    stream.end();
    expect(await untilEnd).toBeUndefined();
    expect(await events.next()).toBeUndefined();
  });

  it('throws what the stream failed with once the events before it are taken', async () => {
    const stream = liveStream();
    const events = new RunEvents(stream.source);
    stream.push(start('c1'));
    stream.fail(new Error('socket closed'));
    expect(await events.arrival(isDecisionOf('c1'), new AbortController().signal)).toBeUndefined();
    expect(await events.next()).toStrictEqual(start('c1'));
    await expect(events.next()).rejects.toThrow('socket closed');
  });
});
