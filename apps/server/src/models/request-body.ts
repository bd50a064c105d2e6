/** Characters of JSON encoded at once: pieces are put together up to this before they are sent. */
const PIECE_CHARS = 1024 * 1024;

export interface RequestBody {
  /** The JSON, encoded a piece at a time as it is sent. */
  stream: ReadableStream<Uint8Array>;
  /** Its length in bytes, for Content-Length: a model server need not read a chunked request. */
  length: number;
}

/**
 * A chat completion request's JSON made a message at a time: the client's own `JSON.stringify(body)` of a long chat is
 * one string as long as the whole conversation, flattened again and encoded whole before it is sent (three copies of
 * 120 MB for a chat of 6,000 messages of 20 KB each, on top of the conversation). Here each message's JSON is its own
 * string, encoded as it is sent and let go of once sent. `messages` comes last in the object; the rest as
 * `JSON.stringify` writes it.
 */
export function requestBody(body: { readonly messages: readonly unknown[] }): RequestBody {
  const { messages, ...rest } = body;
  const head = JSON.stringify(rest);
  const pieces = [`${head.length > 2 ? `${head.slice(0, -1)},` : '{'}"messages":[`];
  messages.forEach((message, index) => pieces.push(`${index === 0 ? '' : ','}${JSON.stringify(message)}`));
  pieces.push(']}');
  let length = 0;
  for (const piece of pieces) length += Buffer.byteLength(piece);
  const encoder = new TextEncoder();
  let next = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (next === pieces.length) {
          controller.close();
          return;
        }
        let text = '';
        while (next < pieces.length && (text === '' || text.length + pieces[next]!.length <= PIECE_CHARS)) {
          text += pieces[next]!;
          pieces[next++] = '';
        }
        controller.enqueue(encoder.encode(text));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, length };
}
