/** The tRPC code of an error the server answered with; undefined when no answer came (the client's own error). */
export function serverCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('data' in error)) return undefined;
  const { data } = error as { data?: unknown };
  if (typeof data !== 'object' || data === null) return undefined;
  const { code } = data as { code?: unknown };
  return typeof code === 'string' ? code : undefined;
}

/** Why the server refused a decision, applying nothing (see confirmTool and toTRPCError), by tRPC code. */
const REFUSED = new Map<string, string>([
  ['TIMEOUT', 'it reached the server after its deadline'],
  ['BAD_REQUEST', 'it was not valid'],
  ['CONFLICT', 'it cannot be applied to the call as it is now'],
  ['TOO_MANY_REQUESTS', 'too many requests for now'],
  ['UNAUTHORIZED', 'this terminal is not authorized'],
  ['FORBIDDEN', 'this terminal is not authorized'],
  ['NOT_FOUND', 'what it names is gone'],
]);

/**
 * What a decision that threw came to, said after the card: the server refused it and applied nothing (its code says
 * why, its message more), the server failed on it (another code: it may have been applied, and the run's events show
 * it if it was), or it was not sent (no code: the client's own error). `message`: the error's words, escaped.
 */
export function decisionErrorNote(code: string | undefined, message: string): string {
  if (code === undefined) return `The decision was not sent (${message}); try again.`;
  const why = REFUSED.get(code);
  if (why === undefined) return `The server failed on the decision (${message}): it may have been applied, and is shown if it was. If the call is asked again, it still waits.`;
  return `The server refused the decision: ${why} (${message}). Nothing was applied; the call still waits.`;
}
