/**
 * The server answers a connection whose token it rejects with an error message that has no request id,
 * then closes the socket. The tRPC client drops such messages and just reconnects, forever; this
 * WebSocket subclass notices them so the UI can stop and explain instead.
 */
export function authAwareWebSocket(onRejected: (message: string) => void, Base: typeof WebSocket = WebSocket): typeof WebSocket {
  return class AuthAwareWebSocket extends Base {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      this.addEventListener('message', (event: MessageEvent) => {
        const rejection = connectionRejection(event.data);
        if (rejection !== null) onRejected(rejection);
      });
    }
  };
}

const AUTH_CODES = new Set(['UNAUTHORIZED', 'FORBIDDEN']);

/** The message of a connection-level auth error, or null for anything else. */
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
