import { describe, expect, it } from 'vitest';
import { checkJsonText, describeJsonTextProblem, MAX_DUPLICATE_KEYS_REPORTED } from './check-json-text';

describe('checkJsonText', () => {
  it('accepts exactly what JSON.parse accepts', () => {
    const texts = [
      '{}', '[]', '""', '0', '-0', '-0.5e+10', '1E3', 'true', 'false', 'null', ' \t\r\n{ "a" : [ 1 , 2 , { } , [ ] ] } \n',
      '"\\u00e9\\"\\\\\\/\\b\\f\\n\\r\\t"', '"é\u2028"', '{"a":{"b":{"c":[[[null]]]}}}', '"\ud800"',
      '', ' ', '{', '}', '[1,]', '{"a":1,}', '{,}', '[,1]', '01', '-', '1.', '.5', '1e', '+1', '1 2', 'tru', 'nul', 'True', 'NaN',
      "{'a':1}", '{a:1}', '{"a" 1}', '{"a":}', '"\t"', '"\\x41"', '"\\u12G4"', '"abc', '[1]]', '{}}', '\ufeff{}', '// c\n{}', '[1 2]',
    ];
    for (const text of texts) {
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      expect({ text, ok: checkJsonText(text).length === 0 }).toStrictEqual({ text, ok: parses });
    }
  });

  it('names where the text goes wrong without quoting it', () => {
    expect(checkJsonText('root:x:0:0:root:/root:/bin/bash\n')).toStrictEqual([{ kind: 'syntax', detail: 'expected a value', line: 1, column: 1 }]);
    const [problem] = checkJsonText('{\n  "a": 1\n  "b": 2\n}');
    expect(problem).toStrictEqual({ kind: 'syntax', detail: 'expected "," or "}"', line: 3, column: 3 });
    expect(describeJsonTextProblem(problem!)).toBe('expected "," or "}" at line 3, column 3');
    expect(checkJsonText('{"a": ')).toStrictEqual([{ kind: 'syntax', detail: 'the text ends where a value should be', line: 1, column: 7 }]);
  });

  it('finds every key given twice in one object, by its path, escapes decoded', () => {
    const text = '{"version":1,\n"rules":[{"effect":"deny","tool":"t",\n"effect":"allow"}],\n"rules":[],\n"o":{"\\u0061":1,"a":2}}';
    const problems = checkJsonText(text);
    expect(problems).toStrictEqual([
      { kind: 'duplicate-key', path: ['rules', 0, 'effect'], firstLine: 2, line: 3, column: 1 },
      { kind: 'duplicate-key', path: ['rules'], firstLine: 2, line: 4, column: 1 },
      { kind: 'duplicate-key', path: ['o', 'a'], firstLine: 5, line: 5, column: 17 },
    ]);
    expect(describeJsonTextProblem(problems[0]!)).toBe('duplicate key (first on line 2, again on line 3)');
    // The same key in different objects is no duplicate.
    expect(checkJsonText('[{"a":1},{"a":1},{"b":{"a":1},"a":1}]')).toStrictEqual([]);
  });

  it('reports a syntax error after the duplicates found before it, and at most a bounded number of duplicates', () => {
    expect(checkJsonText('{"a":1,"a":2,').map((problem) => problem.kind)).toStrictEqual(['duplicate-key', 'syntax']);
    const many = `{${Array.from({ length: 1000 }, () => '"a":1').join(',')}}`;
    expect(checkJsonText(many)).toHaveLength(MAX_DUPLICATE_KEYS_REPORTED);
  });

  it('walks a deeply nested text without recursion', () => {
    const depth = 50_000;
    expect(checkJsonText(`${'[{"k":'.repeat(depth)}1${'}]'.repeat(depth)}`)).toStrictEqual([]);
    expect(checkJsonText(`${'['.repeat(depth)}${']'.repeat(depth - 1)}`)).toStrictEqual([
      { kind: 'syntax', detail: 'the text ends where "," or "]" should be', line: 1, column: 2 * depth },
    ]);
  });
});
