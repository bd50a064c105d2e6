import { PassThrough, Writable } from 'node:stream';
import { describe, expect, test, vi } from 'vitest';
import { manualClock } from './fixtures/manual-clock';
import { readAtRate } from './read-at-rate';

/** A source of `chunks` pieces of `size` bytes, all written at once, and a target counting what reaches it. */
function piped(chunks: number, size: number) {
  const source = new PassThrough();
  const copied = { bytes: 0, ended: false };
  const target = new Writable({
    write(chunk: Buffer, _encoding, done) {
      copied.bytes += chunk.length;
      done();
    },
    final(done) {
      copied.ended = true;
      done();
    },
  });
  for (let index = 0; index < chunks; index++) source.write(Buffer.alloc(size));
  return { source, target, copied };
}

describe('readAtRate', () => {
  test('reads at most the bound in each second of its clock, the chunk that went past it included, and pauses its source until the second is over', async () => {
    const clock = manualClock();
    const { source, target, copied } = piped(10, 300);
    readAtRate(source, target, 1000, clock);
    // 300, 600, 900, then 1,200: past the bound, so the source is paused with the rest unread, until the second ends.
    await vi.waitFor(() => expect(copied.bytes).toBe(1200));
    expect(source.isPaused()).toBe(true);
    expect(clock.pending()).toStrictEqual([1000]);
    clock.advance(999);
    expect(source.isPaused()).toBe(true);
    expect(copied.bytes).toBe(1200);
    clock.advance(1);
    await vi.waitFor(() => expect(copied.bytes).toBe(2400));
    expect(source.isPaused()).toBe(true);
    expect(clock.pending()).toStrictEqual([2000]);
    clock.advance(1000);
    // The last 600 bytes are under the bound: read as they come, and the end passed on.
    await vi.waitFor(() => expect(copied.bytes).toBe(3000));
    source.end();
    await vi.waitFor(() => expect(copied.ended).toBe(true));
    expect(clock.pending()).toStrictEqual([]);
  });

  test('starts a new second at the first read after one has passed, with the whole bound to read', async () => {
    const clock = manualClock();
    const { source, target, copied } = piped(2, 300);
    readAtRate(source, target, 1000, clock);
    await vi.waitFor(() => expect(copied.bytes).toBe(600));
    clock.advance(5000);
    for (let index = 0; index < 4; index++) source.write(Buffer.alloc(300));
    // 600 of the second before are not counted: 1,200 this second before the pause.
    await vi.waitFor(() => expect(copied.bytes).toBe(1800));
    expect(source.isPaused()).toBe(true);
    expect(clock.pending()).toStrictEqual([6000]);
  });

  test('once the bound is lifted, reads what is left at once, without the clock moving, and sets no more timers', async () => {
    const clock = manualClock();
    const { source, target, copied } = piped(10, 300);
    const unbounded = readAtRate(source, target, 1000, clock);
    await vi.waitFor(() => expect(copied.bytes).toBe(1200));
    unbounded();
    expect(clock.pending()).toStrictEqual([]);
    await vi.waitFor(() => expect(copied.bytes).toBe(3000));
    source.write(Buffer.alloc(5000));
    source.end();
    await vi.waitFor(() => expect(copied).toStrictEqual({ bytes: 8000, ended: true }));
    expect(clock.pending()).toStrictEqual([]);
  });
});
