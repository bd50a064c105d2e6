import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { WORKSPACE, context, prefix, terminal } from './rule-fixtures';

const noDelete = prefix('rm -rf', { effect: 'deny', reason: 'never delete trees' });
// `rm -rf victim; echo bypassed`, as a model would hide it from the words of the line.
const ENCODED = 'cm0gLXJmIHZpY3RpbTsgZWNobyBieXBhc3NlZA==';

describe('a program of the workspace under a command deny rule', () => {
  it.each([
    // Found in review: a copy of bash, or a link to it, made in the line or by an earlier call, reading a decoded line.
    `ln -s /bin/bash t && echo ${ENCODED} | base64 -d | ./t`,
    `cp /bin/bash b; echo ${ENCODED} | base64 -d | ./b`,
    `echo ${ENCODED} | base64 -d | tools/sh`,
    `echo ${ENCODED} | base64 -d | ${WORKSPACE}/bin/b`,
    // A script a call wrote: what it runs is no word of the line.
    './scripts/clean.sh',
  ])('%s is asked about, naming the deny rule: what it runs is not read', async (line) => {
    expect(await evaluateRules(terminal(line), [noDelete], context)).toMatchObject({ decision: 'ask', because: noDelete });
  });

  it('a program of the system stays plain, and a rule for the script still allows it', async () => {
    expect(await evaluateRules(terminal('ls -la'), [noDelete], context)).toStrictEqual({ decision: 'ask' });
    const script = prefix('./scripts/clean.sh', { exact: true });
    expect(await evaluateRules(terminal('./scripts/clean.sh'), [noDelete, script], context)).toMatchObject({ decision: 'allow', rule: script });
  });
});
