/** The longest line, and event, a model server's event stream may send: far past one chunk of a turn (a whole tool call's). */
export const MAX_MODEL_LINE_BYTES = 8 * 1024 * 1024;
/** The most an error answer of a model server may hold (an error page, an error's JSON). */
export const MAX_MODEL_BODY_BYTES = 1024 * 1024;

export class ModelAnswerTooLargeError extends Error {
  override readonly name = 'ModelAnswerTooLargeError';
}

/**
 * An error a model server sent as an `error` field in place of `data` (`error: {"code":400,"message":"…"}`, as
 * a common local server did through 2025 when a request outgrew the context), or as an event of the type `error`: the
 * client reads no such field, nor such an event as an error, and the turn ended as cut off, the reason lost. `body` is
 * the field's value (the event's data), its JSON read when it is JSON.
 */
export class ModelServerErrorEvent extends Error {
  override readonly name = 'ModelServerErrorEvent';
  constructor(readonly body: unknown) {
    super('the model server sent an error in its event stream');
  }
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * A fetch for the OpenAI client whose event streams reach it one whole event at a time, each (and each of its lines)
 * at most `MAX_MODEL_LINE_BYTES`, whose
 * other successful answers (a whole completion, from a server that does not stream) fail past the same, and whose
 * error answers fail past `MAX_MODEL_BODY_BYTES`. The client's line decoder joins every piece to what it holds of
 * the line and searches it again from its start: one 100 MB line without a line end kept the server's thread busy for
 * minutes (10 MB: 12 s; 20 MB: 46 s), every chat stalled behind it; its event decoder does the same with an event
 * (see `wholeEvents`). Given whole events it holds nothing between pieces.
 */
export function lineAlignedFetch(baseFetch: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await baseFetch(input, init);
    if (response.body === null) return response;
    const rebuilt = (body: ReadableStream<Uint8Array>) => new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    if (!response.ok) return rebuilt(response.body.pipeThrough(boundedBody(MAX_MODEL_BODY_BYTES)));
    // Whatever its label, what the body starts with says which it is: some proxies and servers label an event stream
    // `application/json` (or text/plain), and a server that ignores `stream: true`, or a proxy rewriting the type, labels
    // a whole completion `text/event-stream` (read as a stream, it held no event: the turn ended as cut off, its calls lost).
    const { whole, body } = await sniffedBody(response.body);
    if (!whole) return rebuilt(body.pipeThrough(withoutByteOrderMark()).pipeThrough(wholeEvents(MAX_MODEL_LINE_BYTES)));
    const answer = rebuilt(body.pipeThrough(boundedBody(MAX_MODEL_LINE_BYTES)));
    wholeAnswers.add(answer);
    return answer;
  };
}

const wholeAnswers = new WeakSet<Response>();

/** Whether a successful answer of `lineAlignedFetch` is one whole JSON body (a server that does not stream), not an event stream. */
export function isWholeAnswer(response: Response): boolean {
  return wholeAnswers.has(response);
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/**
 * Reads `body` up to its first byte that is not blank (nor a byte order mark): a JSON value starts with `{` or `[`,
 * and an event stream never does (a line so starting is a field of a name no reader knows). Answers that verdict and
 * the body whole again. The blank bytes read first are bounded as a line is.
 */
async function sniffedBody(body: ReadableStream<Uint8Array>): Promise<{ whole: boolean; body: ReadableStream<Uint8Array> }> {
  const reader = body.getReader();
  const held: Uint8Array[] = [];
  let offset = 0;
  let first: number | undefined;
  while (first === undefined) {
    const next = await reader.read();
    if (next.done) break;
    held.push(next.value);
    for (let at = 0; at < next.value.byteLength && first === undefined; at++) {
      const byte = next.value[at]!;
      const bom = offset + at < 3 && byte === [0xef, 0xbb, 0xbf][offset + at];
      if (!bom && byte !== 0x20 && byte !== 0x09 && byte !== LF && byte !== CR) first = byte;
    }
    offset += next.value.byteLength;
    if (first === undefined && offset > MAX_MODEL_LINE_BYTES) {
      await reader.cancel();
      throw new ModelAnswerTooLargeError(`the model server sent more than ${MAX_MODEL_LINE_BYTES / (1024 * 1024)} MiB of blank space before its answer`);
    }
  }
  const rest = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of held) controller.enqueue(piece);
    },
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: async (reason) => await reader.cancel(reason),
  });
  return { whole: first === OPEN_BRACE || first === OPEN_BRACKET, body: rest };
}

/**
 * Passes on each event of the stream alone, as the client finds events: up to and with the first `\n\n`, `\r\r` or
 * `\r\n\r\n` from the event's start. The client joins every piece to what it holds of the event and searches it again
 * from its start, and copies what follows an event once per event it finds in a piece: 16 MiB of comment lines with
 * no blank line between held the server's thread for 37 s, and 1 MiB of empty events (`:\n\n`) for 3.4 s, each of its
 * pieces over a second at once. Given one whole event at a time it holds nothing between pieces. What is held of an
 * event is kept in pieces and joined once; an event past `maxBytes`, or a line of one, fails the stream. An event
 * without data is not passed on (`hasData`), nor is a ping event (`isEventOfType`); an error event fails the stream.
 * The stream ends with its `[DONE]` event, the connection let go: the client reads nothing after it, and a server that kept the connection open past it
 * held the whole answer, its calls, until the idle limit ended the turn in an error.
 */
function wholeEvents(maxBytes: number): TransformStream<Uint8Array, Uint8Array> {
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  // The last three bytes of the event so far (-1 before its start), and the length of its last line so far.
  let back1 = -1;
  let back2 = -1;
  let back3 = -1;
  let lineBytes = 0;
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
  const tooLarge = (what: string) => new ModelAnswerTooLargeError(`the model server sent ${what} of more than ${maxBytes / (1024 * 1024)} MiB`);
  return new TransformStream({
    transform(chunk, controller) {
      let start = 0;
      for (let at = 0; at < chunk.byteLength; at++) {
        const byte = chunk[at]!;
        const ends = (byte === LF && (back1 === LF || (back1 === CR && back2 === LF && back3 === CR))) || (byte === CR && back1 === CR);
        if (byte === LF || byte === CR) lineBytes = 0;
        else if (++lineBytes > maxBytes) return controller.error(tooLarge('a line'));
        if (ends) {
          if (heldBytes + at + 1 - start > maxBytes) return controller.error(tooLarge('an event'));
          const event = join(chunk.subarray(start, at + 1));
          if (isEventOfType(event, PING)) {
            // A keep-alive, passed on no more than a comment is.
          } else if (isEventOfType(event, ERROR)) return controller.error(new ModelServerErrorEvent(fieldValue(event, 'data')));
          else if (hasData(event)) controller.enqueue(event);
          else if (hasField(event, ERROR)) return controller.error(new ModelServerErrorEvent(fieldValue(event, 'error')));
          if (isDoneEvent(event)) return controller.terminate();
          start = at + 1;
          back1 = back2 = back3 = -1;
        } else {
          back3 = back2;
          back2 = back1;
          back1 = byte;
        }
      }
      const rest = chunk.subarray(start);
      if (rest.byteLength === 0) return;
      held.push(rest);
      heldBytes += rest.byteLength;
      if (heldBytes > maxBytes) controller.error(tooLarge('an event'));
    },
    flush(controller) {
      if (heldBytes > 0) controller.enqueue(join(new Uint8Array(0)));
    },
  });
}

const DATA = [0x64, 0x61, 0x74, 0x61];
const EVENT = [0x65, 0x76, 0x65, 0x6e, 0x74];
const ERROR = [0x65, 0x72, 0x72, 0x6f, 0x72];

/**
 * Whether an event has data, a `data` field with more than blank space in it: the client reads only `data` and `event`
 * fields. It reads no other (comments, `id`, `retry`), but keeps each such line until an event with data comes: 100 MB
 * of keep-alive comments were all kept, and each such event cost the client more than a whole chunk of text does. And
 * it reads an event of empty data (`data:`, as relays send to keep a connection alive), or of an `event` field alone,
 * as a chunk, whose JSON it cannot parse: the first such keep-alive ended the turn as a malformed chunk. None of
 * these is passed on.
 */
function hasData(event: Uint8Array): boolean {
  let lineStart = 0;
  let isData = false;
  for (let at = 0; at < event.byteLength; at++) {
    const byte = event[at]!;
    if (byte === LF || byte === CR) {
      lineStart = at + 1;
      continue;
    }
    if (at === lineStart) isData = isFieldAt(event, at, DATA);
    else if (isData && at > lineStart + DATA.length && byte !== 0x20 && byte !== 0x09) return true;
  }
  return false;
}

const PING = [0x70, 0x69, 0x6e, 0x67];

/**
 * Whether an event is of the type `expected`, its last `event` field's value. An event of the type `ping` is a
 * keep-alive: servers built on a common Python event-stream library sent one every 15 s by default (`event: ping`, its
 * data the time) until it sent comments instead. The client reads an event of any type but `thread.*` as a chunk, so
 * the first ping, sent while a long prompt was read, ended the turn as a malformed chunk. An event of the type `error`
 * is the server's report of a failure, its data the error: read as a chunk it held nothing, so the turn ended as cut
 * off with the server's words lost, or, sent after a finish, its calls were run.
 */
function isEventOfType(event: Uint8Array, expected: readonly number[]): boolean {
  let type: { start: number; end: number } | undefined;
  let lineStart = 0;
  for (let at = 0; at <= event.byteLength; at++) {
    if (at < event.byteLength && event[at] !== LF && event[at] !== CR) continue;
    if (isFieldAt(event, lineStart, EVENT)) {
      let start = lineStart + EVENT.length;
      if (event[start] === 0x3a) start++;
      if (event[start] === 0x20) start++;
      type = { start, end: at };
    }
    lineStart = at + 1;
  }
  return type !== undefined && type.end - type.start === expected.length && expected.every((byte, i) => event[type.start + i] === byte);
}

const DONE = [0x5b, 0x44, 0x4f, 0x4e, 0x45, 0x5d];

/** Whether an event is the stream's end as the client reads it: its data, its data lines joined, starts with `[DONE]`. */
function isDoneEvent(event: Uint8Array): boolean {
  const at = fieldLineAt(event, [DATA]);
  if (at === -1) return false;
  let value = at + DATA.length;
  if (event[value] === 0x3a) value++;
  else return false;
  if (event[value] === 0x20) value++;
  return DONE.every((expected, i) => event[value + i] === expected);
}

/**
 * Drops a byte order mark at the start of the stream, as an event stream's reader must: the client took it for part of
 * the first line's field name, so the first event was dropped unseen, its text or the start of a tool call with it.
 */
function withoutByteOrderMark(): TransformStream<Uint8Array, Uint8Array> {
  const BOM = [0xef, 0xbb, 0xbf];
  let start = new Uint8Array(0);
  let decided = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (decided) return controller.enqueue(chunk);
      const joined = new Uint8Array(start.byteLength + chunk.byteLength);
      joined.set(start);
      joined.set(chunk, start.byteLength);
      const matched = BOM.findIndex((byte, i) => i >= joined.byteLength || joined[i] !== byte);
      if (matched !== -1 && matched >= joined.byteLength) {
        start = joined;
        return;
      }
      decided = true;
      controller.enqueue(matched === -1 ? joined.subarray(BOM.length) : joined);
    },
    flush(controller) {
      if (!decided && start.byteLength > 0) controller.enqueue(start);
    },
  });
}

/** Whether a line of the event is the field `name`. */
function hasField(event: Uint8Array, name: readonly number[]): boolean {
  return fieldLineAt(event, [name]) !== -1;
}

/** Where the event's first line that is one of the fields `names` starts; -1 when none is. */
function fieldLineAt(event: Uint8Array, names: readonly (readonly number[])[]): number {
  let lineStart = true;
  for (let at = 0; at < event.byteLength; at++) {
    const byte = event[at]!;
    if (byte === LF || byte === CR) {
      lineStart = true;
      continue;
    }
    if (lineStart && names.some((name) => isFieldAt(event, at, name))) return at;
    lineStart = false;
  }
  return -1;
}

/** The value of the event's field `name`, its lines joined as an event's data is: its JSON, or its text when it is not JSON. */
function fieldValue(event: Uint8Array, name: 'data' | 'error'): unknown {
  const lines = new TextDecoder().decode(event).split(/\r\n|\r|\n/).filter((text) => text === name || text.startsWith(`${name}:`));
  const value = lines.map((line) => line.slice(name.length).replace(/^: ?/, '')).join('\n');
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** Whether the line at `at` is the field `name`: the name, then a colon, a line end or the end. */
function isFieldAt(bytes: Uint8Array, at: number, name: readonly number[]): boolean {
  for (let i = 0; i < name.length; i++) if (bytes[at + i] !== name[i]) return false;
  const next = bytes[at + name.length];
  return next === undefined || next === 0x3a || next === LF || next === CR;
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
