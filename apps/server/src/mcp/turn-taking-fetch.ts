import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Bytes of an event stream handed on to the SDK's reader in one turn of the event loop. */
export const MAX_STREAM_BYTES_PER_TURN = 16 * 1024;

/**
 * A fetch whose event-stream response bodies reach the SDK at most MAX_STREAM_BYTES_PER_TURN at a time, other work
 * running between; any other body is left as it is. The SDK reads an event stream in promise callbacks only, so all
 * the stream had buffered was read before anything else ran: found from outside, a server that wrote 16 MB of short
 * events on its own stream (each no JSON, an error) held Airlock's thread for 3.5 s.
 */
export function turnTakingFetch(baseFetch: FetchLike): FetchLike {
  return async (url, init) => {
    const response = await baseFetch(url, init);
    if (response.body === null || mediaType(response.headers.get('content-type')) !== 'text/event-stream') return response;
    const body = response.body.pipeThrough(inTurns());
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** Passes the bytes on in pieces of at most MAX_STREAM_BYTES_PER_TURN, taking the next only in a later turn. */
export function inTurns(): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>({
    async transform(chunk, controller) {
      for (let at = 0; at < chunk.length; at += MAX_STREAM_BYTES_PER_TURN) {
        controller.enqueue(chunk.subarray(at, at + MAX_STREAM_BYTES_PER_TURN));
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  });
}

function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}
