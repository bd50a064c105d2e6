import { decisionRefusal, type RefusedWhy } from '@airlock/client';

/** Why the server refused a decision, applying nothing, as this terminal says it. */
const REFUSED: Record<RefusedWhy, string> = {
  'too-late': 'it reached the server after its deadline',
  invalid: 'it was not valid',
  conflict: 'it cannot be applied to the call as it is now',
  busy: 'too many requests for now',
  'not-authorized': 'this terminal is not authorized',
  gone: 'what it names is gone',
};

/**
 * What a decision that threw `error` came to, said after the card: the server refused it and applied nothing (its
 * code says why, its message more), the server failed on it (another code: it may have been applied, and the run's
 * events show it if it was), or no answer came (no code: the client's own error), in the web card's words. `message`:
 * the error's words, escaped.
 */
export function decisionErrorNote(error: unknown, message: string): string {
  const refusal = decisionRefusal(error);
  switch (refusal.kind) {
    case 'unanswered':
      return `No answer came to the decision (${message}). Check the connection and try again.`;
    case 'failed':
      return `The server failed on the decision (${message}): it may have been applied, and is shown if it was. If the call is asked again, it still waits.`;
    case 'refused':
      return `The server refused the decision: ${REFUSED[refusal.why]} (${message}). Nothing was applied; the call still waits.`;
  }
}
