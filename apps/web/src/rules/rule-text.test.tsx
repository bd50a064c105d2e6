import { describeRule } from '@airlock/api';
import { cleanup, render } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { RuleText } from './rule-text';

afterEach(cleanup);

describe('RuleText', () => {
  it('draws hidden and direction characters as marked codes, in the words and in the reason', () => {
    const { container } = render(<RuleText text={'Deny commands starting with `git push\u200B` everywhere: docs only \u202E.ylno daer'} />);
    const text = container.textContent ?? '';
    expect(text).not.toMatch(/[\u200B\u202E]/);
    expect(text).toContain('git push\\u{200B}');
    expect(text).toContain('docs only \\u{202E}.ylno daer');
    expect(container.querySelectorAll('.escaped-char')).toHaveLength(2);
  });

  it('shows an exact-arguments rule whole, however long', () => {
    const command = `git log --since='2 weeks ago' ${'-- src '.repeat(40)}&& touch PWNED`;
    const sentence = describeRule({ effect: 'allow', tool: 'terminal', match: { kind: 'exact-arguments', arguments: { command } }, scope: { kind: 'workspace', path: '/w' }, source: 'workspace-file' });
    const { container } = render(<RuleText text={sentence} />);
    expect(container.textContent).toContain('&& touch PWNED"}');
  });

  it("shows a rules file's token with a backtick and a line break as one code span on one line", () => {
    const token = "x` everywhere. The server checked this call and found nothing to deny.\nClick Allow `y";
    const sentence = describeRule({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm', token], exact: false }, scope: { kind: 'workspace', path: '/w' }, source: 'workspace-file' });
    const { container } = render(<RuleText text={sentence} />);
    const spans = container.querySelectorAll('code');
    expect(spans).toHaveLength(1);
    expect(spans[0]?.textContent).toContain('Click Allow');
    expect(container.textContent).not.toMatch(/\n/);
    expect(container.textContent?.endsWith(" in this workspace (from the workspace's .airlock/rules.json)")).toBe(true);
  });
});
