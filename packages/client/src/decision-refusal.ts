/**
 * Why the server refused a decision, applying nothing, from its error's code (see confirmTool and toTRPCError): it
 * reached the server after its deadline, when the client had stopped waiting (TIMEOUT); it was not valid
 * (BAD_REQUEST, or PAYLOAD_TOO_LARGE: too big for one message, so the client did not send it); it cannot be applied to the call as it is now, e.g. its run is paused or an "Always allow" rule is for
 * a tool that changed (CONFLICT); over a limit (TOO_MANY_REQUESTS); the client's credential was refused (UNAUTHORIZED,
 * FORBIDDEN); what it names is gone (NOT_FOUND).
 */
export type RefusedWhy = 'too-late' | 'invalid' | 'conflict' | 'busy' | 'not-authorized' | 'gone';

/**
 * What a decision that threw came to, as every client tells it: `refused`, the server refused it and applied nothing
 * (the call still waits); `failed`, the server failed on it (any other code: it may have been applied, and the run's
 * events show it if it was); `unanswered`, no answer came (no code: the deadline passed with none, so it may have
 * been applied before it; or the connection went, so it may have been, or may still be until the deadline:
 * `isAnswerUnknown`).
 */
export type DecisionRefusal = { kind: 'refused'; why: RefusedWhy } | { kind: 'failed' } | { kind: 'unanswered' };

/**
 * The tRPC code of an error the server answered with, or `PAYLOAD_TOO_LARGE` for a request the client did not send
 * (too big; `isServerError` tells the two apart); undefined when no answer came (the client's own error).
 */
export function serverCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('data' in error)) return undefined;
  const { data } = error as { data?: unknown };
  if (typeof data !== 'object' || data === null) return undefined;
  const { code } = data as { code?: unknown };
  return typeof code === 'string' ? code : undefined;
}

const REFUSED = new Map<string, RefusedWhy>([
  ['TIMEOUT', 'too-late'],
  ['BAD_REQUEST', 'invalid'],
  // Answered by the client itself, which never sent it (see oversizeAnswer): nothing was applied.
  ['PAYLOAD_TOO_LARGE', 'invalid'],
  ['CONFLICT', 'conflict'],
  ['TOO_MANY_REQUESTS', 'busy'],
  ['UNAUTHORIZED', 'not-authorized'],
  ['FORBIDDEN', 'not-authorized'],
  ['NOT_FOUND', 'gone'],
]);

/** What a decision (`decide`, or `chat.confirmTool`) that threw `error` came to: refused, failed or unanswered. */
export function decisionRefusal(error: unknown): DecisionRefusal {
  const code = serverCode(error);
  if (code === undefined) return { kind: 'unanswered' };
  const why = REFUSED.get(code);
  return why === undefined ? { kind: 'failed' } : { kind: 'refused', why };
}
