import { describe, expect, it, vi } from 'vitest';
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

  it('gives a freed place to the waiting holder that holds the fewest, so one holder queuing many turns cannot starve another', async () => {
    const limit = new ConcurrencyLimit(2);
    const a1 = limit.tryAcquire('a');
    const a2 = limit.tryAcquire('a');
    const entered: string[] = [];
    const waitFor = (owner: string, name: string) => limit.acquire(undefined, owner).then((release) => (entered.push(name), release));
    const a3 = waitFor('a', 'a3');
    const a4 = waitFor('a', 'a4');
    const a5 = waitFor('a', 'a5');
    // b asks last, behind three of a's turns, and holds nothing: it is the next in.
    expect(limit.aheadOf('b')).toBe(0);
    expect(limit.aheadOf('a')).toBe(3);
    const b1 = waitFor('b', 'b1');
    await Promise.resolve();
    expect({ waiting: limit.waiting, entered }).toStrictEqual({ waiting: 4, entered: [] });

    a1!();
    await b1;
    expect(entered).toStrictEqual(['b1']);
    // a gives back its other place: it holds none now and b one, so a's first turn in line goes in.
    a2!();
    await a3;
    expect(entered).toStrictEqual(['b1', 'a3']);
    (await b1)!();
    await a4;
    (await a3)!();
    (await a4)!();
    (await a5)!();
    expect(entered).toStrictEqual(['b1', 'a3', 'a4', 'a5']);
    expect({ size: limit.size, waiting: limit.waiting }).toStrictEqual({ size: 0, waiting: 0 });
  });

  it('between holders holding as many, the one whose turn waited longest goes first; within a holder, first come first served', async () => {
    const limit = new ConcurrencyLimit(1);
    const held = limit.tryAcquire('x');
    const entered: string[] = [];
    const waitFor = (owner: string, name: string) => void limit.acquire(undefined, owner).then((release) => (entered.push(name), release?.()));
    waitFor('c', 'c1');
    waitFor('d', 'd1');
    waitFor('c', 'c2');
    waitFor('d', 'd2');
    held!();
    await vi.waitFor(() => expect(entered).toHaveLength(4));
    expect(entered).toStrictEqual(['c1', 'd1', 'c2', 'd2']);
    expect({ size: limit.size, waiting: limit.waiting }).toStrictEqual({ size: 0, waiting: 0 });
  });

  it('refuses a maximum below 1', () => {
    expect(() => new ConcurrencyLimit(0)).toThrow(RangeError);
  });
});
