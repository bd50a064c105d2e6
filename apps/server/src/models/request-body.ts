/** Characters of JSON encoded at once: messages are put together up to this before they are sent. */
const PIECE_CHARS = 1024 * 1024;

export interface RequestBody {
  /** The JSON, made and encoded a piece at a time as it is sent. */
  stream: ReadableStream<Uint8Array>;
  /** Its length in bytes, for Content-Length: a model server need not read a chunked request. */
  length: number;
}

/**
 * A chat completion request's JSON made a message at a time: the client's own `JSON.stringify(body)` of a long chat is
 * one string as long as the whole conversation, flattened again and encoded whole before it is sent (three copies of
 * 120 MB for a chat of 6,000 messages of 20 KB each, on top of the conversation). Here each message's JSON is made
 * twice, once to count its bytes and once as it is sent, and let go of each time: no copy of the conversation is
 * held while the request goes. `messages` comes last in the object; the rest as `JSON.stringify` writes it. The
 * messages must not change until the body is sent.
 */
export function requestBody(body: { readonly messages: readonly unknown[] }): RequestBody {
  const { messages, ...rest } = body;
  const head = JSON.stringify(rest);
  const open = `${head.length > 2 ? `${head.slice(0, -1)},` : '{'}"messages":[`;
  const piece = (index: number) => `${index === 0 ? '' : ','}${JSON.stringify(messages[index])}`;
  let length = Buffer.byteLength(open) + 2;
  for (let index = 0; index < messages.length; index++) length += Buffer.byteLength(piece(index));
  const encoder = new TextEncoder();
  /** The next message to send; -1 before the opening. */
  let next = -1;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (next > messages.length) {
          controller.close();
          return;
        }
        let text = next === -1 ? open : '';
        if (next === -1) next = 0;
        while (next < messages.length && (text === '' || text.length < PIECE_CHARS)) text += piece(next++);
        if (next === messages.length) {
          text += ']}';
          next++;
        }
        controller.enqueue(encoder.encode(text));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, length };
}
