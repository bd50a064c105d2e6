/** The longest line a model server's event stream may send: far past one chunk of a turn (a whole tool call's). */
export const MAX_MODEL_LINE_BYTES = 8 * 1024 * 1024;
/** The most an error answer of a model server may hold (an error page, an error's JSON). */
export const MAX_MODEL_BODY_BYTES = 1024 * 1024;

export class ModelAnswerTooLargeError extends Error {
  override readonly name = 'ModelAnswerTooLargeError';
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * A fetch for the OpenAI client whose event streams reach it in whole lines, each at most `MAX_MODEL_LINE_BYTES`, whose
 * other successful answers (a whole completion, from a server that does not stream) fail past the same, and whose
 * error answers fail past `MAX_MODEL_BODY_BYTES`. The client's line decoder joins every piece to what it holds of
 * the line and searches it again from its start: one 100 MB line without a line end kept the server's thread busy for
 * minutes (10 MB: 12 s; 20 MB: 46 s), every chat stalled behind it. Given whole lines it holds nothing between pieces.
 */
export function lineAlignedFetch(baseFetch: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await baseFetch(input, init);
    if (response.body === null) return response;
    const eventStream = (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    const body = response.body.pipeThrough(eventStream ? wholeLines(MAX_MODEL_LINE_BYTES) : boundedBody(response.ok ? MAX_MODEL_LINE_BYTES : MAX_MODEL_BODY_BYTES));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** Passes on the bytes up to and with the last line end seen; holds the rest (in pieces, joined once) until its end. */
function wholeLines(maxLineBytes: number): TransformStream<Uint8Array, Uint8Array> {
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  const join = (last: Uint8Array): Uint8Array => {
    if (held.length === 0) return last;
    const joined = new Uint8Array(heldBytes + last.byteLength);
    let at = 0;
    for (const piece of held) {
      joined.set(piece, at);
      at += piece.byteLength;
    }
    joined.set(last, at);
    held = [];
    heldBytes = 0;
    return joined;
  };
  return new TransformStream({
    transform(chunk, controller) {
      let end = chunk.byteLength;
      while (end > 0 && chunk[end - 1] !== LF && chunk[end - 1] !== CR) end--;
      if (end > 0) controller.enqueue(join(chunk.subarray(0, end)));
      const rest = chunk.subarray(end);
      if (rest.byteLength === 0) return;
      held.push(rest);
      heldBytes += rest.byteLength;
      if (heldBytes > maxLineBytes) controller.error(new ModelAnswerTooLargeError(`the model server sent a line of more than ${maxLineBytes / (1024 * 1024)} MiB`));
    },
    flush(controller) {
      if (heldBytes > 0) controller.enqueue(join(new Uint8Array(0)));
    },
  });
}

function boundedBody(maxBytes: number): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > maxBytes) controller.error(new ModelAnswerTooLargeError(`the model server's answer was over ${maxBytes / (1024 * 1024)} MiB`));
      else controller.enqueue(chunk);
    },
  });
}
