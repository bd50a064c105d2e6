import type { RawData, WebSocket } from 'ws';

/** Requests one WebSocket message may carry (a batch); more and the socket is closed. */
export const MAX_REQUESTS_PER_MESSAGE = 64;

type MessageListener = (data: RawData, isBinary: boolean) => void;

/**
 * Bounds the requests one WebSocket message may carry. tRPC starts every request of a batch message at once and
 * writes each answer straight into the socket's buffer, so one message of many small requests could queue many
 * times its own size in answers, whatever the send window says (about 60 MB from one 1 MiB message of queries).
 * A message with more than `max` requests is refused whole: nothing of it runs, and the socket is closed with the
 * reason. Installed once tRPC has added its own listener, which it then wraps, so the check always comes first.
 */
export function limitRequestsPerMessage(client: WebSocket, max = MAX_REQUESTS_PER_MESSAGE): void {
  const listeners = client.listeners('message') as MessageListener[];
  client.removeAllListeners('message');
  client.on('message', (data, isBinary) => {
    if (!isBinary && requestCount(data) > max) {
      client.close(1008, `at most ${max} requests per message`);
      return;
    }
    for (const listener of listeners) listener.call(client, data, isBinary);
  });
}

/** How many requests a text message holds: the length of a JSON array, else 1. Only an array is parsed. */
function requestCount(data: RawData): number {
  if (!Buffer.isBuffer(data)) return 1;
  let at = 0;
  while (at < data.length && (data[at] === 0x20 || data[at] === 0x09 || data[at] === 0x0a || data[at] === 0x0d)) at++;
  if (data[at] !== 0x5b) return 1;
  try {
    const parsed: unknown = JSON.parse(data.toString('utf8'));
    return Array.isArray(parsed) ? parsed.length : 1;
  } catch {
    // Not JSON: tRPC answers it with a parse error, and it runs nothing.
    return 1;
  }
}
