import { describe, expect, it } from 'vitest';
import { ConnectionRates, LeftRates } from './connection-rates';

/** Spends `runs` new runs of `rates`, answering how many were let through. */
function spendRuns(rates: ConnectionRates, runs: number): number {
  let through = 0;
  for (let i = 0; i < runs; i++) {
    try {
      rates.spendRun();
      through++;
    } catch {
      // refused: counted by what got through
    }
  }
  return through;
}

describe('LeftRates', () => {
  const settings = (clock: { now: number }) => ({ runsPerMinute: 6, runBurst: 3, now: () => clock.now });

  it('hands a new connection the most spent budget a closed one left, as it stands, and a full one once none is left', () => {
    const clock = { now: 0 };
    const left = new LeftRates(settings(clock));
    const emptied = left.take();
    const half = left.take();
    expect(spendRuns(emptied, 5)).toBe(3);
    expect(spendRuns(half, 1)).toBe(1);
    left.leave(half);
    left.leave(emptied);
    const next = left.take();
    expect(next).toBe(emptied);
    expect(spendRuns(next, 1)).toBe(0);
    expect(left.take()).toBe(half);
    expect(spendRuns(left.take(), 5)).toBe(3);
  });

  it('refills what it keeps at the rate, and lets go of a budget once it is full again', () => {
    const clock = { now: 0 };
    const left = new LeftRates(settings(clock));
    const rates = left.take();
    expect(spendRuns(rates, 3)).toBe(3);
    left.leave(rates);
    clock.now += 10_000;
    const taken = left.take();
    expect(taken).toBe(rates);
    expect(spendRuns(taken, 3)).toBe(1);
    left.leave(taken);
    clock.now += 60_000;
    expect(left.size).toBe(1);
    expect(left.take()).not.toBe(taken);
    expect(left.size).toBe(0);
  });

  it('keeps at most maxKept budgets, letting the least spent go', () => {
    const clock = { now: 0 };
    const left = new LeftRates({ ...settings(clock), maxKept: 2 });
    const budgets = [1, 3, 2].map((runs) => {
      const rates = new ConnectionRates(settings(clock));
      spendRuns(rates, runs);
      return rates;
    });
    for (const rates of budgets) left.leave(rates);
    expect(left.size).toBe(2);
    expect([left.take(), left.take()]).toStrictEqual([budgets[1], budgets[2]]);
  });

  it('keeps nothing of a connection that spent nothing', () => {
    const left = new LeftRates();
    left.leave(left.take());
    expect(left.size).toBe(0);
  });
});
