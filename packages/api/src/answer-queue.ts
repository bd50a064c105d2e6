import { LimitExceededError } from '@airlock/core';
import type { SendWindow, Waker } from './event-log';

/** Queries one connection may have waiting for their turn; the one over it is refused with LimitExceededError. */
export const MAX_WAITING_QUERIES = 256;

/**
 * Answers the queries of one connection one at a time, each started only while the connection's send window is open.
 *
 * tRPC starts every request of a batch message at once and writes each answer straight into the socket's buffer,
 * so the window (which stops the socket being read once shut) came too late for a batch: 64 reads of a chat whose
 * page is 12 MB, sent in one message by a client that reads nothing, queued 760 MB. Here a query starts once the one
 * before it has been answered and only while the window is open, so a connection holds at most one answer past the
 * window's mark, whatever it asks at once. Mutations do not take a turn: their answers are small, and one may wait
 * long (a delete waits for its run to stop).
 *
 * On a socket that closes meanwhile the waiting queries never start; they are collected with the connection.
 */
export class AnswerQueue {
  private readonly waiting: (() => void)[] = [];
  private answering = false;
  private parked = false;
  private readonly waker: Waker = {
    wake: () => {
      this.parked = false;
      this.next();
    },
  };

  /**
   * @param window The connection's send window. Default none: queries run at once, as many together as asked.
   * @param maxWaiting Queries that may wait for their turn. Default MAX_WAITING_QUERIES.
   */
  constructor(
    private readonly window: SendWindow | undefined,
    private readonly maxWaiting = MAX_WAITING_QUERIES,
  ) {}

  async answer<T>(query: () => Promise<T>): Promise<T> {
    if (this.window === undefined) return query();
    if (this.waiting.length >= this.maxWaiting) throw new LimitExceededError('queries waiting per connection', this.maxWaiting);
    await new Promise<void>((start) => {
      this.waiting.push(start);
      this.next();
    });
    try {
      return await query();
    } finally {
      // tRPC writes the answer in the promise jobs that follow this return, and a tick callback runs once every
      // promise job is done: the next query looks at the window with this answer in the buffer.
      process.nextTick(() => {
        this.answering = false;
        this.next();
      });
    }
  }

  private next(): void {
    if (this.answering || this.parked || this.waiting.length === 0 || this.window === undefined) return;
    if (!this.window.open) {
      this.parked = true;
      this.window.park(this.waker);
      return;
    }
    this.answering = true;
    this.waiting.shift()?.();
  }
}
