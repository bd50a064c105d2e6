import { AnswerUnknownError } from '@airlock/client';

/** Calls remembered at most; the oldest goes first. */
const MAX_HOLDS = 500;

/**
 * The calls on which a decision sent from this tab lost its connection before its answer, each with the time
 * (`Date.now()`) until which the server may still apply it. No other decision on such a call is sent from this tab
 * before then, by any way of deciding (its card, Waiting for you, a notification): the first could overtake it,
 * read late by a frozen server, and the person would have decided twice.
 */
const holds = new Map<string, number>();

/** Holds `approvalId` when `error` is a decision's unknown answer (`AnswerUnknownError`); answers until when, if so. */
export function holdAfterUnknownAnswer(approvalId: string, error: unknown, now = Date.now()): number | undefined {
  const cause = error instanceof AnswerUnknownError ? error : error instanceof Error && error.cause instanceof AnswerUnknownError ? error.cause : undefined;
  if (cause === undefined || cause.openForMs <= 0) return undefined;
  for (const [id, until] of holds) if (until <= now) holds.delete(id);
  holds.delete(approvalId);
  holds.set(approvalId, now + cause.openForMs);
  while (holds.size > MAX_HOLDS) holds.delete(holds.keys().next().value!);
  return now + cause.openForMs;
}

/** How long (ms) a decision on `approvalId` is still held back; 0 when it is not. */
export function heldFor(approvalId: string, now = Date.now()): number {
  const until = holds.get(approvalId);
  return until === undefined ? 0 : Math.max(0, until - now);
}

/** Said where a decision was not sent because an earlier one on the call may still be applied. */
export function heldText(ms: number): string {
  return `an earlier decision on this call lost its connection and may still be applied in the next ${Math.ceil(ms / 1_000)} s: it is shown if it is; decide again once that time has passed`;
}

/** Forgets every hold (a test's clean slate). */
export function clearAnswerHolds(): void {
  holds.clear();
}
