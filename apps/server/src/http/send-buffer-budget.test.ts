import { describe, expect, it } from 'vitest';
import { SendBufferBudget, type SendBufferHolder } from './send-buffer-budget';

class Holder implements SendBufferHolder {
  evicted = false;
  constructor(
    readonly name: string,
    public bufferedBytes: number,
    public shutSince: number | undefined,
    private readonly evictions: string[],
  ) {}
  evict(): void {
    this.evicted = true;
    this.evictions.push(this.name);
  }
}

describe('SendBufferBudget', () => {
  it('closes the holder shut the longest first, then the next, until the sum is under the bound; one under it alone stays', () => {
    const evictions: string[] = [];
    const budget = new SendBufferBudget(1000);
    const recent = new Holder('recent', 400, 30, evictions);
    const oldest = new Holder('oldest', 400, 10, evictions);
    const older = new Holder('older', 400, 20, evictions);
    const open = new Holder('open', 100, undefined, evictions);
    for (const holder of [recent, oldest, open]) budget.note(holder);
    expect([evictions, budget.noted]).toStrictEqual([[], 900]);
    older.bufferedBytes = 700;
    budget.note(older);
    expect([evictions, budget.noted]).toStrictEqual([['oldest', 'older'], 500]);
  });

  it('measures every holder again before closing any: bytes sent since they were noted are not counted', () => {
    const evictions: string[] = [];
    const budget = new SendBufferBudget(1000);
    const drained = new Holder('drained', 900, 10, evictions);
    budget.note(drained);
    drained.bufferedBytes = 0;
    const newcomer = new Holder('newcomer', 500, 20, evictions);
    budget.note(newcomer);
    expect([evictions, budget.noted]).toStrictEqual([[], 500]);
  });

  it('closes the holder holding the most when none has its window shut, and forgets a holder that closed', () => {
    const evictions: string[] = [];
    const budget = new SendBufferBudget(1000);
    const small = new Holder('small', 300, undefined, evictions);
    const large = new Holder('large', 600, undefined, evictions);
    budget.note(small);
    budget.note(large);
    budget.forget(small);
    expect(budget.noted).toBe(600);
    budget.note(new Holder('third', 500, undefined, evictions));
    expect([evictions, budget.noted]).toStrictEqual([['large'], 500]);
  });
});
