import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * Levels of arrays and objects an MCP server's message may nest, the message itself the first. The SDK and Airlock
 * write parts of a message back out with JSON.stringify, which recurses: one 10 KB line nested 5,000 deep threw
 * RangeError out of the stdio transport's data handler, and Airlock's process exited. The same bound as a value
 * checked under a recursive schema (`MAX_RECURSIVE_VALUE_DEPTH`): no real server's message comes near it.
 */
export const MAX_MCP_MESSAGE_DEPTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * How deep the arrays and objects of a JSON text nest, read in pieces, each byte once and nothing parsed or kept:
 * linear at any depth, where JSON.parse took 2.6 s for one line of 10 MiB of `[`. Strings are skipped; a text that is
 * not JSON is counted all the same, and left to its parser to refuse.
 */
export class JsonDepth {
  readonly #limit: number;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #tooDeep = false;

  /** `limit`: the levels allowed. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** The levels open at the end of what was read. */
  get depth(): number {
    return this.#depth;
  }

  /** Reads bytes `start` to `end` of `bytes`; false once what was read opened an array or object past the limit. */
  read(bytes: Uint8Array, start = 0, end = bytes.length): boolean {
    if (this.#tooDeep) return false;
    for (let at = start; at < end; at++) {
      const byte = bytes[at];
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (byte === BACKSLASH) this.#escaped = true;
        else if (byte === QUOTE) this.#inString = false;
      } else if (byte === QUOTE) {
        this.#inString = true;
      } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
        this.#depth += 1;
        if (this.#depth > this.#limit) {
          this.#tooDeep = true;
          return false;
        }
      } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
        this.#depth -= 1;
      }
    }
    return true;
  }

  /** Forgets what was read: the next text starts at the top level. */
  reset(): void {
    this.#depth = 0;
    this.#inString = false;
    this.#escaped = false;
    this.#tooDeep = false;
  }
}

const ID_KEY = Buffer.from('"id"');
const METHOD_KEY = Buffer.from('"method"');

/**
 * The id of the JSON-RPC response `text` holds, read without parsing the text: only the id's own bytes are parsed,
 * however deep the rest nests. Undefined for anything else: a request or notification (a `method` at the top level),
 * a batch, an id that is no number or string, or a key spelled with escapes.
 */
export function responseIdOf(text: Uint8Array): RequestId | undefined {
  let at = 0;
  while (isSpace(text[at])) at++;
  if (text[at] !== OPEN_BRACE) return undefined;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let memberStart = at + 1;
  let id: Uint8Array | undefined;
  let method = false;
  // Each member of the top-level object is looked at once it ends: a comma at depth one, or the object's end.
  const member = (end: number) => {
    const idValue = valueAfterKey(text, memberStart, end, ID_KEY);
    if (idValue !== undefined) id = text.subarray(idValue, end);
    else if (valueAfterKey(text, memberStart, end, METHOD_KEY) !== undefined) method = true;
    memberStart = end + 1;
  };
  for (; at < text.length; at++) {
    const byte = text[at];
    if (inString) {
      if (escaped) escaped = false;
      else if (byte === BACKSLASH) escaped = true;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      depth += 1;
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth -= 1;
      if (depth === 0) {
        member(at);
        break;
      }
    } else if (byte === COMMA && depth === 1) {
      member(at);
    }
  }
  if (depth !== 0 || method || id === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(id).toString('utf8'));
  } catch {
    return undefined;
  }
  return typeof value === 'string' || typeof value === 'number' ? value : undefined;
}

/** Where the value of a member `start`..`end` begins when its key is `key` (quotes included), or undefined. */
function valueAfterKey(text: Uint8Array, start: number, end: number, key: Uint8Array): number | undefined {
  let at = start;
  while (at < end && isSpace(text[at])) at++;
  if (end - at < key.length) return undefined;
  for (let index = 0; index < key.length; index++) if (text[at + index] !== key[index]) return undefined;
  at += key.length;
  while (at < end && isSpace(text[at])) at++;
  return text[at] === COLON ? at + 1 : undefined;
}

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}
