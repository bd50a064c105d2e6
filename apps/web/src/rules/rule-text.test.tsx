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
});
