import { describe, expect, test } from 'vitest';
import { JsonDepth, MAX_MCP_MESSAGE_DEPTH, responseIdOf } from './json-depth';

const bytes = (text: string) => Buffer.from(text);
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

describe('JsonDepth', () => {
  test('allows arrays and objects nested to the limit and refuses one level more', () => {
    expect(new JsonDepth(MAX_MCP_MESSAGE_DEPTH).read(bytes(nested(MAX_MCP_MESSAGE_DEPTH)))).toBe(true);
    expect(new JsonDepth(MAX_MCP_MESSAGE_DEPTH).read(bytes(nested(MAX_MCP_MESSAGE_DEPTH + 1)))).toBe(false);
    expect(new JsonDepth(3).read(bytes('{"a":[{"b":1},{"c":2}],"d":{}}'))).toBe(true);
    expect(new JsonDepth(3).read(bytes('{"a":[{"b":1},{"c":[{}]}]}'))).toBe(false);
  });

  test('counts nothing inside strings, whatever their escapes, split over pieces anywhere', () => {
    const text = `{"a":"[[[[{{{{\\"[[[[\\\\","b":[["\\u005b[[[", "]]]]"]]}`;
    const whole = new JsonDepth(3);
    expect(whole.read(bytes(text))).toBe(true);
    expect(whole.depth).toBe(0);
    expect(new JsonDepth(2).read(bytes(text))).toBe(false);
    for (let cut = 1; cut < text.length; cut++) {
      const depth = new JsonDepth(3);
      expect([depth.read(bytes(text.slice(0, cut))), depth.read(bytes(text.slice(cut))), depth.depth]).toStrictEqual([true, true, 0]);
    }
  });

  test('reads the given range of a piece only, stays refused once past the limit, and starts again when reset', () => {
    const depth = new JsonDepth(2);
    expect(depth.read(bytes('xx[[[yy'), 2, 4)).toBe(true);
    expect(depth.depth).toBe(2);
    expect(depth.read(bytes('['))).toBe(false);
    expect(depth.read(bytes(']]]'))).toBe(false);
    depth.reset();
    expect(depth.read(bytes('[[]]'))).toBe(true);
  });
});

describe('responseIdOf', () => {
  test('reads the id of a response at the top level, before or after what it holds, however deep', () => {
    expect(responseIdOf(bytes(`{"jsonrpc":"2.0","id":7,"result":{"a":${nested(5000)}}}`))).toBe(7);
    expect(responseIdOf(bytes(`{"jsonrpc":"2.0","result":{"a":${nested(5000)}} , "id" : "x-1" }\r`))).toBe('x-1');
    expect(responseIdOf(bytes(`{"error":{"code":1,"message":"m","data":${nested(5000)}},"id":-3.5e2,"jsonrpc":"2.0"}`))).toBe(-350);
    // JSON.parse keeps the last of a key given twice.
    expect(responseIdOf(bytes('{"id":1,"id":2,"result":{}}'))).toBe(2);
  });

  test('reads none from a request, a notification, a batch, an id deeper down or spelled otherwise, or an id that is no number or string', () => {
    expect(responseIdOf(bytes(`{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":${nested(5000)}}}`))).toBeUndefined();
    expect(responseIdOf(bytes(`{"jsonrpc":"2.0","method":"notifications/message","params":${nested(5000)}}`))).toBeUndefined();
    expect(responseIdOf(bytes(`[{"jsonrpc":"2.0","id":7,"result":${nested(5000)}}]`))).toBeUndefined();
    expect(responseIdOf(bytes(`{"result":{"id":7,"a":${nested(5000)}},"x":"\\"id\\":8"}`))).toBeUndefined();
    expect(responseIdOf(bytes('{"\\u0069d":7,"result":{}}'))).toBeUndefined();
    expect(responseIdOf(bytes('{"id":null,"result":{}}'))).toBeUndefined();
    expect(responseIdOf(bytes('{"id":[7],"result":{}}'))).toBeUndefined();
    expect(responseIdOf(bytes('{"id":{"a":7},"result":{}}'))).toBeUndefined();
    expect(responseIdOf(bytes('{"id":7 "result":{}'))).toBeUndefined();
    expect(responseIdOf(bytes('not json'))).toBeUndefined();
  });
});
