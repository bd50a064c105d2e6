const AUTH_CODES = new Set(['UNAUTHORIZED', 'FORBIDDEN']);

/**
 * The message of the error the server sends, with no request id, before closing a socket whose token it refuses;
 * null for anything else. tRPC's own client drops such messages and reconnects forever.
 */
export function connectionRejection(data: unknown): string | null {
  if (typeof data !== 'string' || !data.startsWith('{"id":null')) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return null;
  }
  if (!isRecord(parsed) || !isRecord(parsed.error)) return null;
  const details = parsed.error.data;
  const code = isRecord(details) ? details.code : undefined;
  if (typeof code !== 'string' || !AUTH_CODES.has(code)) return null;
  return typeof parsed.error.message === 'string' ? parsed.error.message : code;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
