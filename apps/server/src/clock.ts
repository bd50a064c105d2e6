/**
 * The time the server keeps its floors and grace periods by (an MCP connection's floors, how long a closing socket has
 * to answer). Tests pass a clock of their own, to show a bound held by counting against it rather than against the
 * time a machine happened to take.
 */
export interface Clock {
  /** Milliseconds on a clock that never goes back. */
  now(): number;
  /** Calls `callback` once `ms` have passed on this clock; returns what cancels it. */
  after(ms: number, callback: () => void): () => void;
}

/** The longest delay a Node timer keeps: past it, Node fires the timer at once (and warns). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The process's monotonic clock (`performance.now()`) and its timers. A delay past what a timer keeps (about 24.8 days)
 * waits that long instead of firing at once.
 */
export const SYSTEM_CLOCK: Clock = {
  now: () => performance.now(),
  after: (ms, callback) => {
    const timer = setTimeout(callback, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    return () => clearTimeout(timer);
  },
};

/** Resolves once `ms` have passed on `clock` (at once for none), or rejects with the signal's reason when it is aborted first. */
export function clockDelay(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      cancel();
      reject(signal?.reason as Error);
    };
    const cancel = clock.after(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
