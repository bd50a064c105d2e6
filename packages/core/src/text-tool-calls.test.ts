import { fc, test as property } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { parseModelJson, parseToolArguments, repairJson } from './json-repair';
import { parseTextToolCall, TextToolCallExtractor, TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from './text-tool-calls';

function extract(deltas: string[]) {
  const extractor = new TextToolCallExtractor();
  let text = deltas.map((d) => extractor.push(d)).join('');
  const tail = extractor.finish();
  text += tail.text;
  return { text, calls: tail.calls };
}

describe('TextToolCallExtractor', () => {
  it('passes plain text through unchanged', () => {
    expect(extract(['Hello ', 'world <b>bold</b> a < b'])).toStrictEqual({ text: 'Hello world <b>bold</b> a < b', calls: [] });
  });

  it('finds a call whose tags are split across deltas and hides it from the text', () => {
    const result = extract(['Sure.<to', 'ol_call>{"name": "terminal", "argu', 'ments": {"command": "ls"}}</tool', '_call> Done']);
    expect(result).toStrictEqual({ text: 'Sure. Done', calls: [{ ok: true, name: 'terminal', arguments: { command: 'ls' } }] });
  });

  it('holds back a possible tag start only until it is clearly text', () => {
    const extractor = new TextToolCallExtractor();
    expect(extractor.push('a <to')).toBe('a ');
    expect(extractor.push('ast>')).toBe('<toast>');
  });

  it('parses several calls, an unclosed last one included', () => {
    const result = extract(['<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "arguments": {"x": 1}}']);
    expect(result.calls).toStrictEqual([
      { ok: true, name: 'a', arguments: {} },
      { ok: true, name: 'b', arguments: { x: 1 } },
    ]);
    expect(result.text).toBe('\n');
  });

  it('closes a call that the model never closed before opening the next', () => {
    const result = extract(['<tool_call>{"name": "a", "arguments": {}}<tool_call>{"name": "b", "arguments": {}}</tool_call>']);
    expect(result.calls.map((c) => c.name)).toStrictEqual(['a', 'b']);
  });
});

/** Cuts the text at the given points (any order, any repeats) into deltas. */
function splitAt(text: string, points: number[]): string[] {
  const cuts = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const deltas: string[] = [];
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    deltas.push(text.slice(from, cut));
    from = cut;
  }
  return deltas;
}

/** Characters that `indexOf` looked at (from its start position to the end of the match, or of the text) while `run` ran. */
function charactersSearched(run: () => void): number {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- only ever called through .call, and put back below
  const indexOf = String.prototype.indexOf;
  let searched = 0;
  String.prototype.indexOf = function (this: string, search: string, position?: number) {
    const from = Math.max(0, Math.min(position ?? 0, this.length));
    const found = indexOf.call(this, search, position);
    searched += (found === -1 ? this.length : found + search.length) - from;
    return found;
  };
  try {
    run();
  } finally {
    String.prototype.indexOf = indexOf;
  }
  return searched;
}

const streamPiece = fc.oneof(
  fc.constantFrom(TOOL_CALL_OPEN, TOOL_CALL_CLOSE, '<', '</', '<tool_cal', '</tool_ca', '<tool_call', '>', ' ', '\n', 'text'),
  fc.constantFrom('{"name": "a", "arguments": {}}', "{'name': 'b', 'arguments': {'x': 1,},}", '{"name": "c"', 'not json'),
  fc.string({ maxLength: 8 }),
);
const stream = fc.array(streamPiece, { maxLength: 30 }).map((pieces) => pieces.join(''));

describe('TextToolCallExtractor, property-based', () => {
  property.prop([stream, fc.array(fc.nat(), { maxLength: 40 })])('gives the same text and calls however the stream is split', (text, points) => {
    expect(extract(splitAt(text, points))).toStrictEqual(extract([text]));
  });

  property.prop([stream, fc.array(fc.nat(), { maxLength: 40 })])('never shows an opening tag, and finds a call for each one', (text, points) => {
    const result = extract(splitAt(text, points));
    expect(result.text).not.toContain(TOOL_CALL_OPEN);
    const opened = text.split(TOOL_CALL_OPEN).length - 1;
    const afterLast = text.slice(text.lastIndexOf(TOOL_CALL_OPEN) + TOOL_CALL_OPEN.length);
    // A last call left open with nothing in it is no call.
    const emptyLast = opened > 0 && !afterLast.includes(TOOL_CALL_CLOSE) && afterLast.trim() === '';
    expect(result.calls).toHaveLength(emptyLast ? opened - 1 : opened);
  });

  property.prop([fc.array(fc.nat(), { maxLength: 40 })])('reads text with no tags unchanged, whatever the split', (points) => {
    const text = 'a < b <tool <tool_cal </tool_call> c <';
    expect(extract(splitAt(text, points))).toStrictEqual({ text, calls: [] });
  });
});

describe('TextToolCallExtractor on hostile streams', () => {
  it('scans 1 MB of a call streamed in 4-character deltas once, not once per delta', () => {
    const text = `<tool_call>{"name": "t", "arguments": {"x": "${'a'.repeat(1_000_000)}"}}`;
    let result: ReturnType<typeof extract> | undefined;
    const searched = charactersSearched(() => {
      const deltas: string[] = [];
      for (let i = 0; i < text.length; i += 4) deltas.push(text.slice(i, i + 4));
      result = extract(deltas);
    });
    expect(result?.calls).toStrictEqual([{ ok: true, name: 't', arguments: { x: 'a'.repeat(1_000_000) } }]);
    // Each delta is searched for the two tags with at most a tag's length carried over from the one before.
    expect(searched).toBeLessThan(text.length * 2 * (1 + TOOL_CALL_CLOSE.length / 4));
  });

  it('finds thousands of unclosed calls in one delta in one pass', () => {
    const text = `${TOOL_CALL_OPEN}{"name": "t"}`.repeat(20_000);
    let calls = 0;
    const searched = charactersSearched(() => {
      calls = extract([text]).calls.length;
    });
    expect(calls).toBe(20_000);
    expect(searched).toBeLessThan(text.length * 4);
  });
});

describe('parseTextToolCall repairs', () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ['trailing commas', '{"name": "t", "arguments": {"a": 1, "b": [1, 2,],},}', { a: 1, b: [1, 2] }],
    ['single quotes', "{'name': 't', 'arguments': {'path': 'it\\'s.txt'}}", { path: "it's.txt" }],
    ['arguments as a JSON string', '{"name": "t", "arguments": "{\\"command\\": \\"ls -la\\"}"}', { command: 'ls -la' }],
    ['bare keys and Python literals', '{name: "t", arguments: {recursive: True, depth: None, hidden: False}}', { recursive: true, depth: null, hidden: false }],
    ['missing closing braces', '{"name": "t", "arguments": {"command": "echo hi"', { command: 'echo hi' }],
    ['a code fence around it', '```json\n{"name": "t", "arguments": {"a": 1}}\n```', { a: 1 }],
    ['"parameters" instead of "arguments"', '{"name": "t", "parameters": {"a": 1}}', { a: 1 }],
    ['a {"function": …} wrapper', '{"function": {"name": "t", "arguments": {"a": 1}}}', { a: 1 }],
    ['no arguments at all', '{"name": "t"}', {}],
  ];
  it.each(cases)('repairs %s', (_label, raw, expected) => {
    expect(parseTextToolCall(raw)).toStrictEqual({ ok: true, name: 't', arguments: expected });
  });

  it('answers with a clear error when it cannot', () => {
    const broken = parseTextToolCall('this is not json at all {{{');
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.error).toContain('<tool_call>{"name"');
    const noName = parseTextToolCall('{"arguments": {}}');
    expect(!noName.ok && noName.error).toContain('no "name"');
    const badArgs = parseTextToolCall('{"name": "t", "arguments": [1, 2]}');
    expect(badArgs).toMatchObject({ ok: false, name: 't' });
    expect(!badArgs.ok && badArgs.error).toContain('must be a JSON object');
  });
});

describe('JSON from models', () => {
  it('repairs a huge malformed argument string in one pass (a model cannot stall the server with one)', () => {
    // Many closing brackets and a trailing comma: each closer used to rescan everything written so far.
    const parsed = parseToolArguments(`{'items': [${'[1],'.repeat(100_000)}]`);
    expect(parsed.ok && (parsed.value.items as unknown[]).length).toBe(100_000);
  });

  it('leaves valid JSON unchanged', () => {
    const valid = '{"a": [1, 2.5, -3e2, "x\\n\\"y\\""], "b": {"c": null, "d": true}}';
    expect(JSON.parse(repairJson(valid))).toStrictEqual(JSON.parse(valid));
    expect(parseModelJson(valid)).toStrictEqual({ ok: true, value: JSON.parse(valid), repaired: false });
  });

  it('refuses prototype-polluting keys, naming the first, and pollutes nothing', () => {
    const parsed = parseToolArguments('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}, "ok": 1}');
    expect(parsed).toStrictEqual({ ok: false, error: 'the arguments are not accepted (it holds a key named "__proto__", which is not accepted)' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads double-encoded arguments and treats empty ones as {}', () => {
    expect(parseToolArguments(JSON.stringify(JSON.stringify({ a: 1 })))).toStrictEqual({ ok: true, value: { a: 1 } });
    expect(parseToolArguments('')).toStrictEqual({ ok: true, value: {} });
    const plain = parseToolArguments('"just a string"');
    expect(plain.ok).toBe(false);
    expect(!plain.ok && plain.error).toContain('not valid JSON');
    expect(parseToolArguments(42)).toStrictEqual({ ok: false, error: 'the arguments must be a JSON object' });
  });
});
