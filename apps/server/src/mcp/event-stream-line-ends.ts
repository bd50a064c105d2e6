import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * A fetch whose event-stream response bodies have every line end (CRLF, a lone CR) rewritten to LF as they stream; any
 * other body is left as it is. The MCP SDK's event-stream parser searches for both CR and LF from each line's start, so
 * where one of them is rare each search runs to the end of the chunk: 16 chunks of 128 KiB of lone CRs held the
 * server's thread for 1.4 s, 100 MB about 40 s. Given only LFs it reads in time linear in the stream's size. The event
 * stream format reads CRLF, CR and LF alike as one line end, so the events are the same.
 */
export function lfLineEndsFetch(baseFetch: FetchLike): FetchLike {
  return async (url, init) => {
    const response = await baseFetch(url, init);
    if (response.body === null || mediaType(response.headers.get('content-type')) !== 'text/event-stream') return response;
    const body = response.body.pipeThrough(lfLineEnds());
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * Rewrites CRLF and lone CR to LF, in one pass over the bytes: a CR at the end of one chunk and an LF at the start of
 * the next are one line end. Bytes, not text: in UTF-8 neither byte is ever part of another character.
 */
export function lfLineEnds(): TransformStream<Uint8Array, Uint8Array> {
  let afterCR = false;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (chunk.length === 0) return;
      // The LF of a CRLF whose CR ended the chunk before, already written as an LF.
      const start = afterCR && chunk[0] === LF ? 1 : 0;
      afterCR = chunk[chunk.length - 1] === CR;
      let cr = chunk.indexOf(CR, start);
      if (cr === -1) {
        if (start < chunk.length) controller.enqueue(start === 0 ? chunk : chunk.subarray(start));
        return;
      }
      const out = new Uint8Array(chunk.length - start);
      let written = 0;
      let from = start;
      while (cr !== -1) {
        out.set(chunk.subarray(from, cr), written);
        written += cr - from;
        out[written] = LF;
        written += 1;
        from = cr + 1;
        if (chunk[from] === LF) from += 1;
        cr = chunk.indexOf(CR, from);
      }
      out.set(chunk.subarray(from), written);
      written += chunk.length - from;
      controller.enqueue(out.subarray(0, written));
    },
  });
}

function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}
