/**
 * `promise`'s value, or the signal's reason thrown at its abort if that comes first (at once if it has come): for a
 * wait that may never end of itself. The signal's listener goes when either comes.
 */
export async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Not waited for: its failure, if it comes, is no one's.
    promise.catch(() => undefined);
    signal.throwIfAborted();
  }
  let onAbort!: () => void;
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const first = await Promise.race([promise, aborted]);
    if (first === ABORTED) signal.throwIfAborted();
    return first as T;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

const ABORTED = Symbol('aborted');
