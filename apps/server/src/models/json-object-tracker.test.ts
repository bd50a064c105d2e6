import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonObjectTracker } from './json-object-tracker';

/** Whether the tracker, given `pieces` one after another, says they make one whole object. */
function closedAfter(...pieces: string[]): boolean {
  const tracker = new JsonObjectTracker();
  for (const piece of pieces) tracker.push(piece);
  return tracker.closed;
}

describe('JsonObjectTracker', () => {
  it('is closed at the brace that closes the object, and stays so through blank space only', () => {
    expect(closedAfter('{"path":', '"a.txt"}')).toBe(true);
    expect(closedAfter(' \n{"a":{"b":[1,{}]}}', ' \t')).toBe(true);
    expect(closedAfter('{"a":{"b":1}')).toBe(false);
    expect(closedAfter('{"a":1}', 'x')).toBe(false);
    expect(closedAfter('{"a":1}', '}')).toBe(false);
    expect(closedAfter('{"a":1}{"b":2}')).toBe(false);
    expect(closedAfter('[{"a":1}]')).toBe(false);
    expect(closedAfter('')).toBe(false);
  });

  it('has begun once the text holds more than blank space', () => {
    const tracker = new JsonObjectTracker();
    tracker.push(' \n');
    expect(tracker.begun).toBe(false);
    tracker.push(' {');
    expect(tracker.begun).toBe(true);
  });

  it('skips braces and quotes inside strings of either quote, escapes too', () => {
    expect(closedAfter('{"text":"}"')).toBe(false);
    expect(closedAfter('{"text":"it\'s \\"}\\" {"')).toBe(false);
    expect(closedAfter('{"text":"it\'s \\"}\\" {"}')).toBe(true);
    expect(closedAfter("{'text': '}", "'}")).toBe(true);
    expect(closedAfter('{"a":"\\\\"}')).toBe(true);
  });

  it('says of any JSON object, however it is cut into pieces, that it is whole only at its end', () => {
    const objects = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }).map((value) => JSON.stringify(value));
    fc.assert(
      fc.property(objects, fc.array(fc.nat({ max: 6 }), { minLength: 1 }), (text, sizes) => {
        const tracker = new JsonObjectTracker();
        for (let at = 0, step = 0; at < text.length; step++) {
          const size = Math.max(1, sizes[step % sizes.length]!);
          tracker.push(text.slice(at, at + size));
          at += size;
          expect(tracker.closed).toBe(at >= text.length);
        }
      }),
    );
  });
});
