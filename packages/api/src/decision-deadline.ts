import { AirlockError } from '@airlock/core';

/**
 * A decision that reached the point of being applied after the deadline its client sent with it (`notAfter`): the
 * client had stopped waiting and reported it as not answered, so it is refused, and the call goes on waiting. A
 * decision sent into a connection that went silent (a frozen server, a stalled network) would otherwise land
 * whenever the server read it, minutes after the person was told it failed.
 */
export class DecisionPastDeadlineError extends AirlockError {
  readonly fault = 'caller';
  override readonly name = 'DecisionPastDeadlineError';
  constructor(
    readonly approvalId: string,
    /** How long after its deadline it came, in ms. */
    readonly lateByMs: number,
  ) {
    super(`notAfter: the decision came ${Math.ceil(lateByMs)} ms after its deadline, when its client had stopped waiting for it; it was not applied, and the call still waits`);
  }
}

/** A decision with a deadline (`notAfter`) on a connection whose client gave no clock to read it by. */
export class NoClientClockError extends AirlockError {
  readonly fault = 'caller';
  override readonly name = 'NoClientClockError';
  constructor() {
    super('notAfter: the connection gave no clock to read it by (the connection param "clock": its performance.now() as it sent them)');
  }
}

/**
 * Where the client's clock stands against this process's `performance.now()`, read from the connection param `clock`
 * (the client's `performance.now()` as it sent its params) and `openedAt`, when this process accepted the socket.
 * The params are sent once the socket is open, so after `openedAt`: the offset found is at most the real one, and a
 * deadline moved by it falls at or before the client's own. Undefined for a missing or unreadable clock.
 */
export function clientClockOffset(clock: unknown, openedAt: number): number | undefined {
  if (typeof clock !== 'string' || !/^\d{1,16}(\.\d{1,16})?$/.test(clock)) return undefined;
  return openedAt - Number(clock);
}

/** Throws DecisionPastDeadlineError once this process's `performance.now()` is past the decision's `deadline`. */
export function refuseIfPastDeadline(input: { approvalId: string; deadline?: number }): void {
  if (input.deadline === undefined) return;
  const lateByMs = performance.now() - input.deadline;
  if (lateByMs > 0) throw new DecisionPastDeadlineError(input.approvalId, lateByMs);
}
