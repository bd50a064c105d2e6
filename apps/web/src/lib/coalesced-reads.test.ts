import { describe, expect, it, vi } from 'vitest';
import { CoalescedReads } from './coalesced-reads';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('CoalescedReads', () => {
  it('makes one more read after the one on its way, however many asks came meanwhile', async () => {
    const reads = new CoalescedReads();
    const answers = [deferred(), deferred()];
    let made = 0;
    const read = () => answers[made++]!.promise;
    reads.request('list', read);
    for (let ask = 0; ask < 100; ask++) reads.request('list', read);
    expect(made).toBe(1);
    answers[0]!.resolve();
    await vi.waitFor(() => expect(made).toBe(2));
    answers[1]!.resolve();
    await answers[1]!.promise;
    // Nothing asked since the second read started: no third.
    await new Promise((settle) => setImmediate(settle));
    expect(made).toBe(2);
  });

  it('reads each key on its own, and reads again after a failed read when asked to', async () => {
    const reads = new CoalescedReads();
    const a = deferred();
    const b = deferred();
    const made: string[] = [];
    reads.request('a', () => (made.push('a'), a.promise));
    reads.request('b', () => (made.push('b'), b.promise));
    expect(made).toStrictEqual(['a', 'b']);
    reads.request('a', () => (made.push('a again'), Promise.resolve()));
    a.reject(new Error('refused'));
    await vi.waitFor(() => expect(made).toStrictEqual(['a', 'b', 'a again']));
    b.resolve();
    reads.request('b', () => (made.push('b later'), Promise.resolve()));
    await vi.waitFor(() => expect(made).toContain('b later'));
  });
});
