import { describe, expect, test } from 'vitest';
import { consoleLine } from './console-line';

describe('consoleLine', () => {
  test('shows escape sequences, bells, line breaks, carriage returns and bidi controls as codes', () => {
    const line = 'stderr: \u001b[2J\u001b[HAirlock is running at http://127.0.0.1:7815/#token=FAKE\r\nnext \u001b]52;c;ZWNobyBwd25lZA==\u0007 \u202Eevil \u009b31m';
    expect(consoleLine(line)).toBe(
      'stderr: \\u{1B}[2J\\u{1B}[HAirlock is running at http://127.0.0.1:7815/#token=FAKE\\u{D}\\u{A}next \\u{1B}]52;c;ZWNobyBwd25lZA==\\u{7} \\u{202E}evil \\u{9B}31m',
    );
  });

  test('leaves Airlock’s own lines, letters of any script and text escaped before as they are', () => {
    const lines = [
      'Airlock is running at http://127.0.0.1:7815/#token=aB3_-x',
      'Workspace: /home/jürgen/привет/東京',
      'Model: vLLM gpt\\u{1B}[2J at http://127.0.0.1:8000/v1',
      'a path with a backslash: C:\\temp\\u{',
    ];
    expect(lines.map(consoleLine)).toStrictEqual(lines);
  });
});
