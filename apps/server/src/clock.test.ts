import { afterEach, describe, expect, it, vi } from 'vitest';
import { SYSTEM_CLOCK } from './clock';

describe('SYSTEM_CLOCK', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits the longest a timer keeps for a delay past it, rather than firing at once as a bare Node timer does', () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    SYSTEM_CLOCK.after(2 ** 31 + 5_000, fired);
    vi.advanceTimersByTime(1_000);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(2 ** 31 - 1 - 1_000);
    expect(fired).toHaveBeenCalledOnce();
  });

  it('calls back once its delay has passed, and not once cancelled', () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    const kept = vi.fn();
    SYSTEM_CLOCK.after(100, kept);
    const cancel = SYSTEM_CLOCK.after(100, fired);
    cancel();
    vi.advanceTimersByTime(99);
    expect(kept).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(kept).toHaveBeenCalledOnce();
    expect(fired).not.toHaveBeenCalled();
  });
});
