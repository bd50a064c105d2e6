import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from './concurrency-limit';

describe('ConcurrencyLimit', () => {
  it('admits at most max at once and lets the others in, first come first served, as places are given back', async () => {
    const limit = new ConcurrencyLimit(2);
    const first = await limit.acquire();
    const second = await limit.acquire();
    const entered: string[] = [];
    const third = limit.acquire().then((release) => (entered.push('third'), release));
    const fourth = limit.acquire().then((release) => (entered.push('fourth'), release));
    await Promise.resolve();
    expect({ size: limit.size, waiting: limit.waiting, entered }).toStrictEqual({ size: 2, waiting: 2, entered: [] });

    first!();
    const releaseThird = await third;
    expect({ size: limit.size, waiting: limit.waiting, entered }).toStrictEqual({ size: 2, waiting: 1, entered: ['third'] });
    // Giving a place back twice frees it once.
    first!();
    expect(limit.waiting).toBe(1);

    second!();
    const releaseFourth = await fourth;
    expect(entered).toStrictEqual(['third', 'fourth']);
    releaseThird!();
    releaseFourth!();
    expect({ size: limit.size, waiting: limit.waiting }).toStrictEqual({ size: 0, waiting: 0 });
  });

  it('tryAcquire takes a free place at once, and none while the places are taken or someone waits for one', async () => {
    const limit = new ConcurrencyLimit(1);
    const held = limit.tryAcquire();
    expect(held).toBeTypeOf('function');
    expect(limit.tryAcquire()).toBeUndefined();
    const waiting = limit.acquire();
    // The place given back goes to the one in line, not to whoever asks at that moment.
    held!();
    expect(limit.tryAcquire()).toBeUndefined();
    (await waiting)!();
    expect(limit.size).toBe(0);
    limit.tryAcquire()!();
    expect(limit.size).toBe(0);
  });

  it('a waiter whose signal aborts leaves the line without a place, and one aborted before asking gets none', async () => {
    const limit = new ConcurrencyLimit(1);
    const held = await limit.acquire();
    const controller = new AbortController();
    const gaveUp = limit.acquire(controller.signal);
    const next = limit.acquire();
    controller.abort();
    expect(await gaveUp).toBeUndefined();
    expect(limit.waiting).toBe(1);

    held!();
    const release = await next;
    expect(limit.size).toBe(1);
    expect(await limit.acquire(AbortSignal.abort())).toBeUndefined();
    release!();
    expect(limit.size).toBe(0);
  });

  it('refuses a maximum below 1', () => {
    expect(() => new ConcurrencyLimit(0)).toThrow(RangeError);
  });
});
