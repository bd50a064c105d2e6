import type { SendWindow, Waker } from '@airlock/api';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { SendBufferBudget, SendBufferHolder } from './send-buffer-budget';
import { SocketReads } from './socket-read-budget';

export interface SocketSendWindowOptions {
  /** Bytes waiting to be sent (frames corked for the tick included) above which the window shuts. */
  highWaterBytes: number;
  /** How long the window may stay shut before `onStall` runs. */
  stallMs: number;
  /** Runs once when the socket has not drained within `stallMs`. */
  onStall: () => void;
  /** Whether the socket is read, shared with its read budget. Default one of its own. */
  reads?: SocketReads;
  /** What all the server's sockets hold unsent together, and what closes this one when they hold too much. Default none. */
  budget?: { total: SendBufferBudget; onEvict: () => void };
}

/**
 * The send window of one WebSocket. It shuts when more than `highWaterBytes` wait to be sent, and opens
 * again once the socket's buffer has drained (Node's `drain`: everything handed to the kernel). While it
 * is shut, run streams wait and the socket is not read, so a client that does not read gets no more
 * answers queued for it either.
 */
export class SocketSendWindow implements SendWindow, SendBufferHolder {
  /** The run streams waiting for the window to open; made when the first parks (most windows never shut). */
  private waiters: Set<Waker> | undefined = undefined;
  private stallTimer: NodeJS.Timeout | undefined = undefined;
  private shutAt: number | undefined = undefined;
  private readonly reads: SocketReads;

  constructor(
    private readonly client: WebSocket,
    private readonly socket: Duplex,
    private readonly options: SocketSendWindowOptions,
  ) {
    this.reads = options.reads ?? new SocketReads(client);
    client.on('close', () => this.dispose());
  }

  get open(): boolean {
    // A closing socket sends nothing more: its streams wait until the close returns them.
    if (this.stallTimer !== undefined || this.client.readyState !== this.client.OPEN) return false;
    return !this.shutIfFull();
  }

  /**
   * Called after every frame sent, whoever sent it: answers to queries and mutations go straight to the socket, so
   * they too shut the window once more than the high-water mark waits, and the socket is then not read until it
   * drains. A client that sends requests and reads no answers holds at most what it asked for before that.
   */
  sent(): void {
    if (this.client.readyState !== this.client.OPEN) return;
    if (this.stallTimer === undefined) this.shutIfFull();
    this.options.budget?.total.note(this);
  }

  get bufferedBytes(): number {
    return this.client.bufferedAmount;
  }

  get shutSince(): number | undefined {
    return this.shutAt;
  }

  evict(): void {
    this.options.budget?.onEvict();
  }

  private shutIfFull(): boolean {
    if (this.client.bufferedAmount <= this.options.highWaterBytes) return false;
    // Above Node's own high-water mark the last write said "wait", so a drain event will follow.
    this.shut();
    return true;
  }

  park(waiter: Waker): void {
    (this.waiters ??= new Set()).add(waiter);
  }

  unpark(waiter: Waker): void {
    this.waiters?.delete(waiter);
  }

  private shut(): void {
    this.shutAt = performance.now();
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      this.shutAt = undefined;
      this.socket.off('drain', this.reopen);
      this.reads.release('send window');
      this.options.onStall();
    }, this.options.stallMs);
    this.reads.hold('send window');
    this.socket.once('drain', this.reopen);
  }

  private readonly reopen = (): void => {
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    this.shutAt = undefined;
    this.options.budget?.total.note(this);
    this.reads.release('send window');
    const waiters = this.waiters;
    this.waiters = undefined;
    for (const waiter of waiters ?? []) waiter.wake();
  };

  private dispose(): void {
    this.options.budget?.total.forget(this);
    clearTimeout(this.stallTimer);
    this.socket.off('drain', this.reopen);
    this.waiters = undefined;
  }
}
