import type { ConnectionState, WatchKind } from './context';
import { toTRPCError } from './error-mapping';

/** What one watch holds for its client between sends, and how it stops listening. Its policy bounds it. */
export interface WatchQueue<T> {
  /** Takes the next item to send off the queue; undefined when none waits. */
  take(): T | undefined;
  /** Whether an item waits to be sent. */
  waiting(): boolean;
  /** Stops listening for changes. */
  stop(): void;
  /** Runs once, after it listens and before the first item is taken (default: nothing). */
  load?(): Promise<void>;
}

/**
 * A watch that holds one of the connection's places for a watch of its kind (and so a subscription place) from its
 * first read (a generator's body runs then) until it ends, and sends while the connection's send window is open.
 * `listen` starts listening, calling `wake` after each change, and answers the queue the changes go to.
 */
export async function* boundedWatch<T>(
  connection: Pick<ConnectionState, 'takeWatch' | 'releaseWatch' | 'sendWindow'>,
  kind: WatchKind,
  signal: AbortSignal | undefined,
  listen: (wake: () => void) => WatchQueue<T>,
): AsyncGenerator<T, void, undefined> {
  try {
    connection.takeWatch(kind);
  } catch (error) {
    // Mapped here, as for a stream: the body runs after the middleware has returned, and an unmapped refusal went out
    // as INTERNAL_SERVER_ERROR with a log line each (a client asking in a loop wrote thousands a second).
    throw toTRPCError(error);
  }
  const window = connection.sendWindow;
  let wake: (() => void) | undefined;
  // Parked on a shut window, a change only joins the queue: the window wakes the watch when it opens. Woken for each
  // change, every watch of a client that reads nothing cost a turn of its loop per change.
  let parked = false;
  const queue = listen(() => {
    if (!parked) wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    await queue.load?.();
    while (!signal?.aborted) {
      // A shut send window holds changes here, where the queue bounds them, not in the socket's buffer.
      const next = window?.open === false ? undefined : queue.take();
      if (next !== undefined) {
        yield next;
        continue;
      }
      const waker = { wake: () => wake?.() };
      parked = queue.waiting() && window !== undefined;
      if (parked) window?.park(waker);
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      if (parked) window?.unpark(waker);
      parked = false;
    }
  } finally {
    queue.stop();
    connection.releaseWatch(kind);
    signal?.removeEventListener('abort', onAbort);
  }
}
