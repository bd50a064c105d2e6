import { describe, expect, test } from 'vitest';
import { CappedOutput } from './capped-output';

describe('CappedOutput', () => {
  test('keeps everything under the cap', () => {
    const output = new CappedOutput(10);
    output.push(Buffer.from('abc'));
    output.push(Buffer.from('defg'));
    expect(output.result()).toStrictEqual({ text: 'abcdefg', omittedBytes: 0 });
  });

  test('keeps head and tail and counts what was dropped between them', () => {
    const output = new CappedOutput(6);
    for (const piece of ['012', '345', '678', '9AB', 'CDE']) output.push(Buffer.from(piece));
    expect(output.result()).toStrictEqual({ text: '012\n[… 9 bytes omitted …]\nCDE', omittedBytes: 9 });
    expect(output.totalBytes).toBe(15);
  });

  test('does not split a multi-byte character at either cut', () => {
    const output = new CappedOutput(8);
    output.push(Buffer.from('€€€€'));
    expect(output.result()).toStrictEqual({ text: '€\n[… 6 bytes omitted …]\n€', omittedBytes: 6 });
  });
});
