import { CLOSE_POLICY_VIOLATION } from '@airlock/core';
import { MAX_EDITED_ARGUMENTS_BYTES, MAX_RULE_ARGUMENTS_CHARS } from '@airlock/api';
import type { RawData, WebSocket } from 'ws';

/** Requests one WebSocket message may carry (a batch); more and the socket is closed. */
export const MAX_REQUESTS_PER_MESSAGE = 64;

/**
 * The deepest a message's JSON may nest (arrays and objects). A request nests a few levels around its input, and the
 * deepest input, a call's edited arguments, may nest 64 (MAX_EDITED_ARGUMENTS_DEPTH): well under this. A 1 MiB
 * message nested 500,000 deep cost about 380 ms of the server's time to parse, twice.
 */
export const MAX_MESSAGE_DEPTH = 128;

/**
 * The most commas and colons a message's JSON may hold outside its strings: each one an object member or an array
 * item, and each costing the parse and the input's schema far more than a byte of a string does. A `confirmTool` of
 * 60,000 keys in its edited arguments (650 KB) cost 190-520 ms of the server's thread before the schema refused it.
 * Every request's input takes a few dozen at most, but a call's edited arguments and a rule's exact arguments may
 * hold as many as their JSON's bytes allow, one per two bytes (`[0,0,…]`): the bound is that, for the larger of the
 * two, with room for the request around it and a few small requests sent in the same message. Under the old bound of
 * 8,192 a person's edit of 10,000 numbers (20 KB, well within its schema) closed the whole connection. At this bound
 * the costliest message found, 1 MiB of 16,896 keys of 56 characters, cost about 100 ms to parse and refuse; 64 KiB
 * of numbers cost about 30 ms.
 */
export const MAX_MESSAGE_SEPARATORS = Math.max(MAX_EDITED_ARGUMENTS_BYTES, MAX_RULE_ARGUMENTS_CHARS) / 2 + 1_024;

type MessageListener = (data: RawData, isBinary: boolean) => void;

/**
 * Bounds the requests one WebSocket message may carry, how deep its JSON nests and how many members and items it
 * holds (MAX_MESSAGE_SEPARATORS). tRPC starts every request of a
 * batch message at once and writes each answer straight into the socket's buffer, so one message of many small
 * requests could queue many times its own size in answers, whatever the send window says (about 60 MB from one 1 MiB
 * message of queries). A message with more than `max` requests, or nested deeper than MAX_MESSAGE_DEPTH, is refused
 * whole: nothing of it is parsed or runs, and the socket is closed with the reason. One with more members is refused
 * whole too, each of its requests answered BAD_REQUEST under its id (closed instead when those cannot be read). All
 * are read in one pass over the bytes, so tRPC's decoder is the only parse. Installed once tRPC has added its own
 * listener, which it then wraps, so the check always comes first.
 */
export function limitRequestsPerMessage(client: WebSocket, max = MAX_REQUESTS_PER_MESSAGE): void {
  const listeners = client.listeners('message') as MessageListener[];
  client.removeAllListeners('message');
  client.on('message', (data, isBinary) => {
    // tRPC's JSON decoder refuses a binary message without reading it.
    const shape = isBinary ? undefined : shapeOf(data, MAX_MESSAGE_DEPTH, MAX_MESSAGE_SEPARATORS);
    if (shape === 'too-deep') {
      client.close(CLOSE_POLICY_VIOLATION, `JSON nested deeper than ${MAX_MESSAGE_DEPTH} levels`);
      return;
    }
    if (shape === 'too-many-separators') {
      // Each request is refused under its own id when its id can be read without parsing, as its schema refuses
      // an input too large: the client then knows nothing of it was applied, and its other requests go on. Closing
      // the socket left a decision's client unable to tell whether it had been applied.
      const why = `more than ${MAX_MESSAGE_SEPARATORS} commas and colons in one message`;
      const ids = requestIds(data as Buffer, max);
      if (ids === undefined) {
        client.close(CLOSE_POLICY_VIOLATION, why);
        return;
      }
      for (const id of ids) client.send(JSON.stringify({ id, error: { message: `${why}: nothing of it was applied`, code: BAD_REQUEST_JSON_RPC, data: { code: 'BAD_REQUEST', httpStatus: 400 } } }));
      return;
    }
    if (shape !== undefined && shape.requests > max) {
      client.close(CLOSE_POLICY_VIOLATION, `at most ${max} requests per message`);
      return;
    }
    for (const listener of listeners) listener.call(client, data, isBinary);
  });
}

/** tRPC's JSON-RPC code for BAD_REQUEST, as its own refusal of an input carries. */
const BAD_REQUEST_JSON_RPC = -32600;
/** Longest id text read from a message refused whole; tRPC's clients number their requests. */
const MAX_ID_CHARS = 128;
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * How many requests a text message holds (the items of a top-level array, else 1), or 'too-deep' once its arrays and
 * objects nest deeper than `maxDepth`, or 'too-many-separators' once it holds more than `maxSeparators` commas and
 * colons outside strings. One pass over the bytes, parsing nothing: a message that is not JSON may be miscounted, and
 * tRPC answers it with a parse error whatever the count.
 */
function shapeOf(data: RawData, maxDepth: number, maxSeparators: number): { requests: number } | 'too-deep' | 'too-many-separators' | undefined {
  if (!Buffer.isBuffer(data)) return undefined;
  let depth = 0;
  let inString = false;
  let array: boolean | undefined;
  let commas = 0;
  let separators = 0;
  for (let at = 0; at < data.length; at++) {
    const byte = data[at];
    if (inString) {
      if (byte === BACKSLASH) at++;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (byte === QUOTE) inString = true;
    else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      array ??= byte === OPEN_ARRAY && depth === 0;
      if (++depth > maxDepth) return 'too-deep';
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) depth--;
    else if (byte === COMMA || byte === COLON) {
      if (++separators > maxSeparators) return 'too-many-separators';
      if (byte === COMMA && depth === 1) commas++;
    }
  }
  return { requests: array === true ? commas + 1 : 1 };
}

/**
 * The ids of the requests a text message holds (a request object, or a batch array of them), read in one pass over
 * its bytes without parsing it: only each id's own few bytes are parsed. Undefined when one of them cannot be read so
 * (not a request object, no id, an id that is not a short number or string, a key spelled with escapes) or when it
 * holds more than `max` requests: such a message gets no answer per request.
 */
function requestIds(data: Buffer, max: number): (number | string)[] | undefined {
  let first = 0;
  while (first < data.length && WHITESPACE.has(data[first]!)) first++;
  const batch = data[first] === OPEN_ARRAY;
  if (!batch && data[first] !== OPEN_OBJECT) return undefined;
  const requestDepth = batch ? 2 : 1;
  const ids: (number | string)[] = [];
  let depth = 0;
  let inString = false;
  let keyStart = -1;
  let expectKey = false;
  let key: string | undefined;
  let valueStart = -1;
  let id: number | string | undefined;
  for (let at = first; at < data.length; at++) {
    const byte = data[at]!;
    // Anything after the message's one value is not JSON: tRPC answers it with a parse error, under no id.
    if (depth === 0 && at > first && !WHITESPACE.has(byte)) return undefined;
    if (inString) {
      if (byte === BACKSLASH) at++;
      else if (byte === QUOTE) {
        inString = false;
        if (keyStart >= 0) {
          key = data.toString('latin1', keyStart, at);
          keyStart = -1;
        }
      }
      continue;
    }
    if (byte === QUOTE) {
      inString = true;
      if (depth === requestDepth && expectKey) {
        keyStart = at + 1;
        expectKey = false;
      }
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      depth++;
      if (depth === requestDepth) {
        if (byte !== OPEN_OBJECT || ids.length >= max) return undefined;
        expectKey = true;
        id = undefined;
      }
    } else if (depth === requestDepth && byte === COLON) {
      if (key === 'id') valueStart = at + 1;
      key = undefined;
    } else if (depth === requestDepth && (byte === COMMA || byte === CLOSE_OBJECT)) {
      if (valueStart >= 0) {
        if (at - valueStart > MAX_ID_CHARS) return undefined;
        id = parsedId(data.toString('utf8', valueStart, at));
        if (id === undefined) return undefined;
        valueStart = -1;
      }
      if (byte === COMMA) expectKey = true;
      else {
        if (id === undefined) return undefined;
        ids.push(id);
        depth--;
      }
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) depth--;
  }
  return ids.length > 0 && depth === 0 ? ids : undefined;
}

/** A request id written as JSON: a number or a string, else undefined. */
function parsedId(text: string): number | string | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'number' || typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
