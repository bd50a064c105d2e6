/**
 * The time an MCP connection keeps its floors by: the least time between two listings of a server's tools, between an
 * event stream's end and its reopening, and the rate its stderr is read at. Tests pass a clock of their own, to show
 * a floor held by counting against it rather than against the time a machine happened to take.
 */
export interface McpClock {
  /** Milliseconds on a clock that never goes back. */
  now(): number;
  /** Calls `callback` once `ms` have passed on this clock; returns what cancels it. */
  after(ms: number, callback: () => void): () => void;
}

/** The process's monotonic clock (`performance.now()`) and its timers. */
export const SYSTEM_CLOCK: McpClock = {
  now: () => performance.now(),
  after: (ms, callback) => {
    const timer = setTimeout(callback, Math.max(0, ms));
    return () => clearTimeout(timer);
  },
};

/** Resolves once `ms` have passed on `clock` (at once for none), or rejects with the signal's reason when it is aborted first. */
export function clockDelay(clock: McpClock, ms: number, signal?: AbortSignal): Promise<void> {
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
