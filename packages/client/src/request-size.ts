import type { TRPCResponseMessage } from '@trpc/server/rpc';

/** The most the server takes in one WebSocket message (its `maxPayload`): past it, it closes the connection with 1009. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;

const encoder = new TextEncoder();

/** The size of `text` in UTF-8 when it is over `max` bytes; undefined when it is not (a UTF-16 unit is at most 3 bytes: most texts are not encoded). */
export function bytesOver(text: string, max: number): number | undefined {
  if (text.length * 3 <= max) return undefined;
  const bytes = encoder.encode(text).byteLength;
  return bytes > max ? bytes : undefined;
}

function shownSize(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes} bytes (${bytes / (1024 * 1024)} MiB)` : `${bytes} bytes`;
}

/** The input's field that weighs the most as JSON, to say what to shorten. */
function heaviestField(input: unknown): { name: string; bytes: number } | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  let heaviest: { name: string; bytes: number } | undefined;
  for (const [name, value] of Object.entries(input)) {
    const bytes = encoder.encode(JSON.stringify(value) ?? '').byteLength;
    if (heaviest === undefined || bytes > heaviest.bytes) heaviest = { name, bytes };
  }
  return heaviest;
}

/**
 * The error answer for a request too big to send: what the server would say if it read it, with the limit, the
 * request's size and the field to shorten. The server never does: it closes the connection instead (1009).
 */
export function oversizeAnswer(request: { id: number; path: string; input: unknown }, bytes: number, max: number): Extract<TRPCResponseMessage, { error: unknown }> {
  const field = heaviestField(request.input);
  const shorten = field === undefined ? 'shorten the input' : `shorten ${field.name} (${field.bytes} bytes of it)`;
  return {
    id: request.id,
    error: {
      code: -32013,
      message: `${field?.name ?? 'input'}: the request is ${bytes} bytes, over the ${shownSize(max)} the server takes in one message; ${shorten}`,
      data: { code: 'PAYLOAD_TOO_LARGE', httpStatus: 413, path: request.path },
    },
  };
}
