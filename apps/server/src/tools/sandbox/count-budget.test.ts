import { describe, expect, test } from 'vitest';
import { CountBudget } from './count-budget';

/** This machine's, as the kernel's defaults make them: 128 fanotify groups, 3,072 ptys for every devpts but the first, 800 KiB of message queues. */
const ALL = { instances: 128, watches: 192_543, fanotifyGroups: 128, fanotifyMarks: 205_042, ptys: 3072, messageQueueBytes: 819_200 };

describe('what calls at once may hold of each count', () => {
  test('half of each in all: each call its share, or half what the others leave of that half, so eight calls each get some', () => {
    const budget = new CountBudget();
    const parts = Array.from({ length: 10 }, () => budget.take(ALL)!);
    expect(parts.map((part) => part.instances)).toStrictEqual([16, 16, 16, 8, 4, 2, 1, 1, 0, 0]);
    expect(parts.map((part) => part.watches)).toStrictEqual([24_067, 24_067, 24_067, 12_035, 6_018, 3_009, 1_504, 752, 376, 188]);
    expect(parts.map((part) => part.fanotifyGroups)).toStrictEqual([16, 16, 16, 8, 4, 2, 1, 1, 0, 0]);
    expect(parts.map((part) => part.messageQueueBytes)).toStrictEqual([102_400, 102_400, 102_400, 51_200, 25_600, 12_800, 6400, 3200, 1600, 800]);
    // At most 64 ptys a call, whatever the pool.
    expect(parts.map((part) => part.ptys)).toStrictEqual(Array.from({ length: 10 }, () => 64));
    for (const kind of ['instances', 'watches', 'fanotifyGroups', 'fanotifyMarks', 'ptys', 'messageQueueBytes'] as const) {
      expect(parts.reduce((sum, part) => sum + (part[kind] ?? 0), 0)).toBeLessThanOrEqual(ALL[kind] / 2);
    }
  });

  test('ptys: 64 a call until near half the machine’s pool is held, then half of what is left, then none', () => {
    const budget = new CountBudget();
    const parts = Array.from({ length: 30 }, () => budget.take(ALL)!.ptys);
    expect(parts.slice(20)).toStrictEqual([64, 64, 64, 32, 16, 8, 4, 2, 1, 1]);
    expect(parts.reduce((sum, part) => sum + part, 0)).toBe(1536);
    expect(budget.take(ALL)!.ptys).toBe(0);
  });

  test('what a call held is given back once it ends, once', () => {
    const budget = new CountBudget();
    const [first, second] = [budget.take(ALL)!, budget.take(ALL)!];
    budget.release(first);
    budget.release(first);
    expect(budget.take(ALL)).toStrictEqual({ instances: 16, watches: 24_067, fanotifyGroups: 16, fanotifyMarks: 25_630, ptys: 64, messageQueueBytes: 102_400 });
    budget.release(second);
    expect(budget.take(ALL)?.instances).toBe(16);
  });

  test('a call alone on a kernel of 8192 watches gets a quarter of them, a second an eighth', () => {
    const budget = new CountBudget();
    const all = { ...ALL, watches: 8192 };
    expect([budget.take(all)?.watches, budget.take(all)?.watches]).toStrictEqual([2048, 1024]);
  });

  test('a kernel without fanotify’s counts (before Linux 5.13) gives none', () => {
    const { fanotifyGroups: _groups, fanotifyMarks: _marks, ...older } = ALL;
    expect(new CountBudget().take(older)).toStrictEqual({ instances: 16, watches: 24_067, ptys: 64, messageQueueBytes: 102_400 });
  });

  test('none when the user’s limits cannot be read', () => {
    expect(new CountBudget().take(undefined)).toBeUndefined();
  });
});
