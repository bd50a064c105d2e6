import type { RawData, WebSocket } from 'ws';
import { SYSTEM_CLOCK, type Clock } from '../clock';

/** Bytes of messages one socket may send back to back, then how fast it may go on. */
export interface ReadBudget {
  burstBytes: number;
  bytesPerSecond: number;
  /**
   * What each message costs besides its bytes. Default 0. The server's work on a message (its parse, its answer or its
   * refusal) comes with every message whatever its size: counted in bytes alone, an empty message cost nothing.
   */
  messageBytes?: number;
}

/**
 * What one WebSocket may send: 2 MiB of messages back to back, then 512 KiB a second. A person's client sends a few
 * small messages a second, and its largest (a message of the 1 MiB allowed) rarely. Each 1 MiB message costs the
 * server's one thread 35-50 ms to read and refuse, so one socket sending them back to back delayed other clients'
 * queries by 0.15-3 s (docs/benchmarks.md, "One socket sending 1 MiB messages back to back").
 *
 * Each message costs 256 bytes more, whatever its size: 8,192 messages back to back, then 2,048 a second. Counted in
 * bytes alone, a socket sending empty messages (a 6-byte frame each) spent nothing and was read without end, and one
 * sending one-byte messages 2 million back to back: either delayed other clients' queries by 0.5 to 4 s.
 */
export const DEFAULT_READ_BUDGET: ReadBudget = { burstBytes: 2 * 1024 * 1024, bytesPerSecond: 512 * 1024, messageBytes: 256 };

/**
 * Whether a WebSocket is read, for every reason it may not be: it is read only while nothing holds it. Its send
 * window and its read budget pause it each for their own reason, and one letting go must not resume it for the other.
 */
export class SocketReads {
  /** The reasons holding it, each once: at most two, so a list (an empty one costs next to nothing; a Set, its table). */
  private readonly holds: string[] = [];

  constructor(private readonly client: Pick<WebSocket, 'pause' | 'resume'>) {}

  hold(reason: string): void {
    if (this.holds.includes(reason)) return;
    if (this.holds.length === 0) this.client.pause();
    this.holds.push(reason);
  }

  release(reason: string): void {
    const at = this.holds.indexOf(reason);
    if (at === -1) return;
    this.holds.splice(at, 1);
    if (this.holds.length === 0) this.client.resume();
  }
}

type MessageListener = (data: RawData, isBinary: boolean) => void;

/**
 * Holds a socket to `budget`: each message read spends its bytes, each ping or pong too, and once it has spent more than it had, the socket
 * is not read (back pressure: its bytes wait in its client and the network, it is not closed) until the budget is
 * back at nothing owed. Messages its WebSocket had already taken in before the pause wait with it, handed on in order
 * as the budget allows, so none of them costs the server's thread meanwhile and other sockets are read. Installed
 * after every other message listener, which it then wraps, so a message is counted before anything reads it.
 */
export function budgetReads(client: WebSocket, reads: SocketReads, budget: ReadBudget, clock: Clock = SYSTEM_CLOCK): void {
  const listeners = client.listeners('message') as MessageListener[];
  client.removeAllListeners('message');
  let tokens = budget.burstBytes;
  let refilledAt = clock.now();
  const waiting: [RawData, boolean][] = [];
  /** Cancels the wait for the budget to refill; set while the socket owes. */
  let timer: (() => void) | undefined;
  const refill = () => {
    const at = clock.now();
    tokens = Math.min(budget.burstBytes, tokens + ((at - refilledAt) / 1000) * budget.bytesPerSecond);
    refilledAt = at;
  };
  const messageBytes = budget.messageBytes ?? 0;
  const handOn = (data: RawData, isBinary: boolean) => {
    tokens -= sizeOf(data) + messageBytes;
    for (const listener of listeners) listener.call(client, data, isBinary);
  };
  const owe = () => {
    reads.hold('read budget');
    timer = clock.after(Math.max(1, Math.ceil((-tokens / budget.bytesPerSecond) * 1000)), goOn);
  };
  const goOn = () => {
    timer = undefined;
    refill();
    while (waiting.length > 0 && tokens >= 0) {
      const [data, isBinary] = waiting.shift()!;
      handOn(data, isBinary);
    }
    if (tokens < 0) owe();
    else reads.release('read budget');
  };
  client.on('message', (data, isBinary) => {
    if (timer !== undefined) {
      waiting.push([data, isBinary]);
      return;
    }
    refill();
    handOn(data, isBinary);
    if (tokens < 0) owe();
  });
  // Pings and pongs are spent as messages are, a pong sent at once for each ping: uncounted, a socket sending them back
  // to back was read without end, each costing the server's thread a parse and an answer (found in review).
  const spendControlFrame = (data: Buffer) => {
    if (timer === undefined) refill();
    tokens -= data.length + messageBytes;
    if (tokens < 0 && timer === undefined) owe();
  };
  client.on('ping', spendControlFrame);
  client.on('pong', spendControlFrame);
  client.on('close', () => {
    timer?.();
    timer = undefined;
    waiting.length = 0;
  });
}

/** A message's bytes, as `ws` hands it on. */
export function sizeOf(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.length, 0);
  return data.byteLength;
}
