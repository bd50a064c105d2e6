import { describe, expect, it } from 'vitest';
import { subscriptionIterator, type Sink } from './subscription-iterator';

function started<T>(signal?: AbortSignal) {
  let sink!: Sink<T>;
  let unsubscribed = 0;
  const iterator = subscriptionIterator<T>((s) => {
    sink = s;
    return () => unsubscribed++;
  }, signal);
  return { iterator, sink, unsubscribed: () => unsubscribed };
}

describe('subscriptionIterator', () => {
  it('delivers values in order, also those pushed before anyone waits, then ends and unsubscribes once', async () => {
    const { iterator, sink, unsubscribed } = started<number>();
    sink.push(1);
    const first = iterator.next();
    const second = iterator.next();
    sink.push(2);
    sink.push(3);
    sink.end();
    sink.push(4);
    expect([await first, await second]).toStrictEqual([
      { value: 1, done: false },
      { value: 2, done: false },
    ]);
    expect(await iterator.next()).toStrictEqual({ value: 3, done: false });
    expect(await iterator.next()).toStrictEqual({ value: undefined, done: true });
    expect(unsubscribed()).toBe(1);
  });

  it('throws a failure after the values queued before it', async () => {
    const { iterator, sink } = started<string>();
    sink.push('a');
    sink.fail(new Error('boom'));
    expect(await iterator.next()).toStrictEqual({ value: 'a', done: false });
    await expect(iterator.next()).rejects.toThrow('boom');
    expect(await iterator.next()).toStrictEqual({ value: undefined, done: true });
  });

  it('unsubscribes when the consumer breaks out of its loop', async () => {
    const { iterator, sink, unsubscribed } = started<number>();
    sink.push(1);
    sink.push(2);
    for await (const value of iterator) if (value === 1) break;
    expect(unsubscribed()).toBe(1);
    expect(await iterator.next()).toStrictEqual({ value: undefined, done: true });
  });

  it('stops at once on abort, dropping what is queued, and ends quietly', async () => {
    const controller = new AbortController();
    const { iterator, sink, unsubscribed } = started<number>(controller.signal);
    sink.push(1);
    const waiting = iterator.next();
    await expect(waiting).resolves.toStrictEqual({ value: 1, done: false });
    sink.push(2);
    controller.abort(new Error('stopped by the caller'));
    expect(await iterator.next()).toStrictEqual({ value: undefined, done: true });
    expect(unsubscribed()).toBe(1);
  });

  it('ends a for await waiting on the next value when the signal aborts, without throwing', async () => {
    const controller = new AbortController();
    const { iterator, sink } = started<number>(controller.signal);
    const seen: number[] = [];
    const reading = (async () => {
      for await (const value of iterator) {
        seen.push(value);
        if (value === 1) controller.abort();
      }
      return 'ended';
    })();
    sink.push(1);
    expect(await reading).toBe('ended');
    expect(seen).toStrictEqual([1]);
  });

  it('never subscribes with a signal already aborted', async () => {
    let subscribed = false;
    const iterator = subscriptionIterator(() => {
      subscribed = true;
      return () => undefined;
    }, AbortSignal.abort(new Error('too late')));
    expect(await iterator.next()).toStrictEqual({ value: undefined, done: true });
    expect(subscribed).toBe(false);
  });
});
