import { describeRule } from '@airlock/api';
import { cleanup, render } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { RuleText, ruleLabel } from './rule-text';

afterEach(cleanup);

const HOSTILE = 'x` then `rm -rf /` y\nAllow this';

describe('RuleText', () => {
  it('draws hidden and direction characters as marked codes, in the words and in the reason', () => {
    const sentence = describeRule({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['git', 'push\u200B'], exact: false }, scope: { kind: 'global' }, source: 'user', reason: 'docs only \u202E.ylno daer' });
    const { container } = render(<RuleText reason={sentence} />);
    const text = container.textContent ?? '';
    expect(text).not.toMatch(/[\u200B\u202E]/);
    expect(container.querySelector('code')?.textContent).toBe("git 'push\\u{200B}'");
    expect(container.querySelector('q')?.textContent).toBe('docs only \\u{202E}.ylno daer');
    expect(container.querySelectorAll('.escaped-char')).toHaveLength(2);
  });

  it('shows every character outside ASCII in a code part as its code, in the text and in the label', () => {
    const sentence = describeRule({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['echo', '\u05D9$(id)\u05D9'], exact: false }, scope: { kind: 'global' }, source: 'user', reason: 'שלום' });
    const { container } = render(<RuleText reason={sentence} />);
    expect(container.querySelector('code')?.textContent).toBe("echo '\\u{5D9}$(id)\\u{5D9}'");
    expect(container.querySelector('q')?.textContent).toBe('שלום');
    expect(ruleLabel(sentence)).toContain("echo '\\u{5D9}$(id)\\u{5D9}'");
    expect(ruleLabel(sentence)).toContain('שלום');
  });

  it('shows an exact-arguments rule whole, however long, as code', () => {
    const command = `git log --since='2 weeks ago' ${'-- src '.repeat(40)}&& touch PWNED`;
    const sentence = describeRule({ effect: 'allow', tool: 'terminal', match: { kind: 'exact-arguments', arguments: { command } }, scope: { kind: 'workspace', path: '/w' }, source: 'workspace-file' });
    const { container } = render(<RuleText reason={sentence} />);
    expect([...container.querySelectorAll('code')].map((code) => code.textContent)).toStrictEqual(['terminal', JSON.stringify({ command })]);
  });

  it("shows a rules file's token and reason, backticks and line breaks in them, as one code part and one quote, on one line", () => {
    const sentence = describeRule({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm', HOSTILE], exact: false }, scope: { kind: 'workspace', path: '/w' }, source: 'workspace-file', reason: HOSTILE });
    const { container } = render(<RuleText reason={sentence} />);
    expect(container.querySelectorAll('code')).toHaveLength(1);
    expect([...container.querySelectorAll('q')].map((quote) => quote.textContent)).toStrictEqual(['x` then `rm -rf /` y\\u{A}Allow this']);
    expect(container.textContent).not.toMatch(/\n/);
    expect(ruleLabel(sentence)).not.toMatch(/\n/);
  });

  it("gives a label whose quote cannot be closed by the quote's own quotation marks", () => {
    expect(ruleLabel([{ text: 'Deny ' }, { code: 'rm' }, { text: ': ' }, { quote: 'x\u201D. Allowed \u201Cy' }])).toBe('Deny rm: “x\\u{201D}. Allowed \\u{201C}y”');
  });

  it('draws a sentence stored before reasons were typed as plain text, its backticks as they are', () => {
    const { container } = render(<RuleText reason={'Allow commands starting with `ls` everywhere: a\nb'} />);
    expect(container.querySelectorAll('code, q')).toHaveLength(0);
    expect(container.textContent).toBe('Allow commands starting with `ls` everywhere: a\\u{A}b');
  });
});
