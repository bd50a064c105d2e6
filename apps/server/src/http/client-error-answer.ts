import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { securityHeaders } from './security-headers';

/** The status Node answers a request it could not take with, by the parser's or its own error code; 400 for any other. */
const STATUS_BY_CODE = new Map<string, number>([
  ['HPE_HEADER_OVERFLOW', 431],
  ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 413],
  ['ERR_HTTP_REQUEST_TIMEOUT', 408],
]);

/**
 * Answers a request Node refused before any handler saw it (headers too large, not HTTP, too slow), as Node does with
 * no `clientError` listener — the same status, then the socket closed — but with the security headers every other
 * answer carries: Node's own answer had none.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex & { _httpMessage?: ServerResponse | null }): void {
  // Node's own rule: answer only when nothing of a response has been written on this socket yet.
  if (error.code !== 'ECONNRESET' && socket.writable && socket._httpMessage?.headersSent !== true) {
    const status = STATUS_BY_CODE.get(error.code ?? '') ?? 400;
    const headers = Object.entries({ ...securityHeaders(undefined), Connection: 'close' }).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${headers.join('')}\r\n`, 'latin1');
  }
  socket.destroy(error);
}
