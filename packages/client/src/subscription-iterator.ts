/** Where a subscription's callbacks deliver to. */
export interface Sink<T> {
  push(value: T): void;
  /** No more values: the iterator finishes after the ones queued. */
  end(): void;
  /** The iterator throws `error` after the values queued. */
  fail(error: unknown): void;
}

/** How many values may wait unread, and what the iterator throws once one more comes. */
export interface QueueBound {
  maxQueued: number;
  /** The error thrown after the values queued; the value that did not fit is not given out. */
  overflow(): unknown;
}

/** How many values may wait unread, and the one value that takes the place of them all once one more comes. */
export interface QueueCollapse<T> {
  maxQueued: number;
  /** Replaces the values queued and the one that did not fit (a "read everything again"); the iterator goes on. */
  collapse(): T;
}

/**
 * Turns a callback subscription into an async iterator. `start` subscribes at once and returns the function that
 * unsubscribes, which runs when the iterator ends, fails, is returned from (a `break`) or `signal` aborts; an abort
 * drops what is queued and ends the iterator quietly, as a `break` does: a `for await` over it just stops. With a
 * `bound`, a value pushed while `maxQueued` wait unread unsubscribes and fails the iterator after them; with a
 * `QueueCollapse`, it replaces them with the one value `collapse` gives, and the iterator goes on.
 */
export function subscriptionIterator<T>(start: (sink: Sink<T>) => () => void, signal?: AbortSignal, bound?: QueueBound | QueueCollapse<T>): AsyncIterableIterator<T> {
  const queue: T[] = [];
  const waiters: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void }[] = [];
  let finished = false;
  let failure: { error: unknown } | undefined;
  let unsubscribe: (() => void) | undefined;

  const finish = (error?: { error: unknown }) => {
    if (finished) return;
    finished = true;
    failure = error;
    signal?.removeEventListener('abort', onAbort);
    unsubscribe?.();
    drain();
  };
  const drain = () => {
    while (waiters.length > 0) {
      const value = queue.shift();
      const waiter = waiters.shift()!;
      if (value !== undefined) waiter.resolve({ value, done: false });
      else if (failure !== undefined) {
        const { error } = failure;
        failure = undefined;
        waiter.reject(error);
      } else if (finished) waiter.resolve({ value: undefined, done: true });
      else {
        waiters.unshift(waiter);
        return;
      }
    }
  };
  const onAbort = () => {
    queue.length = 0;
    finish();
  };

  const sink: Sink<T> = {
    push(value) {
      if (finished) return;
      if (bound !== undefined && queue.length >= bound.maxQueued) {
        if ('collapse' in bound) queue.splice(0, queue.length, bound.collapse());
        else finish({ error: bound.overflow() });
        return;
      }
      queue.push(value);
      drain();
    },
    end: () => finish(),
    fail: (error) => finish({ error }),
  };

  if (signal?.aborted) onAbort();
  else {
    signal?.addEventListener('abort', onAbort, { once: true });
    const stop = start(sink);
    if (finished) stop();
    else unsubscribe = stop;
  }

  return {
    next: () =>
      new Promise<IteratorResult<T>>((resolve, reject) => {
        waiters.push({ resolve, reject });
        drain();
      }),
    return: async () => {
      queue.length = 0;
      finish();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
