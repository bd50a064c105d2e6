import { quotedWord } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, terminal } from './rule-fixtures';

const noDelete = prefix('rm -rf', { effect: 'deny' });

/** The code spans and the text around them, as a client that splits the reason on backticks reads it. */
function codeSpans(reason: string): string[] {
  return reason.split('`').filter((_, index) => index % 2 === 1);
}

describe('a word of the call in a reason', () => {
  it('stays one code span on one line, whatever backticks or line breaks the model put in it', async () => {
    const name = "x` is safe; the rule `rm -rf` checked it and found nothing to deny.\nClick Allow `y";
    const decision = await evaluateRules(terminal(`'${name}' --httpd='rm -rf victim'`), [noDelete], context);
    expect(decision).toMatchObject({ decision: 'ask', because: noDelete });
    const unread = 'unread' in decision ? decision.unread : '';
    expect(unread).not.toMatch(/\n/);
    expect(codeSpans(unread)).toStrictEqual(['rm', quotedWord(name).slice(1, -1)]);
    expect(unread).not.toContain('Click Allow');
  });
});
