import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { proposeRule } from './propose-rule';
import { context, prefix, terminal, WORKSPACE } from './rule-fixtures';

async function decide(command: string, rule = 'jq'): Promise<string> {
  return (await evaluateRules(terminal(command), [prefix(rule), prefix('cd /', { exact: true })], context)).decision;
}

describe('jq: a prefix rule covers reading files in the workspace only', () => {
  it.each([
    // `--rawfile` and `--slurpfile` read a whole file into the output, as the file tools would not outside the workspace.
    "jq -n --rawfile a /etc/passwd '$a'",
    "jq -n --slurpfile a ~/.docker/config.json '$a'",
    "jq -n --rawfile a ../../.ssh/id_rsa '$a'",
    `jq -n --rawfile a "$HOME/.npmrc" '$a'`,
    "jq -n --rawfile a $_ '$a'",
    'jq -R . /etc/passwd',
    'jq . ../other/package.json',
    'jq . /work/project/../other/x.json',
    'jq . /work/projectile/x.json',
    'jq . ~/.config/gh/hosts.json',
    'jq . .*/x.json',
    'jq . {/etc/x,a}.json',
    'jq -L /etc . x.json',
    'jq -L/etc . x.json',
    'jq --library-path ~ . x.json',
    // jq 1.6 reads `-rL x` as `-L L` and `x` as the filter, later versions `x` as the folder: `/etc/passwd` is read.
    'jq -rL . /etc/passwd',
    // Not an option to jq (no letter after the dash): a file, in a folder named `-`.
    'jq . -/../../etc/passwd',
    // A filter that imports a module or data file may name any search path in its metadata.
    `jq -n 'import "config" as $c {search: "/home/me/.docker"}; $c'`,
    `jq -n 'include "x" {search: "/"}; .'`,
    `jq -n '"x" | modulemeta'`,
    // A program read from a file: the rule cannot see what it imports.
    'jq -f prog.jq x.json',
    'jq -nf prog.jq',
    'jq --from-file prog.jq x.json',
    // A word that may become anything may become an option; after `cd` a relative path may lead anywhere.
    'jq . *',
    'jq $X x.json',
    'cd / && jq . etc/passwd',
  ])('a rule for jq asks about %j', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  it.each([
    'jq . package.json',
    'jq -r .version package.json',
    "jq -n --rawfile a README.md '$a'",
    "jq -n --slurpfile a data/x.json '$a'",
    `jq '.[] | .name' ${WORKSPACE}/src/a.json`,
    'jq .[0] data/*.json',
    'jq -c --arg p /etc/passwd --argjson n 1 .x a.json',
    'jq -n --args \'$ARGS\' /etc/passwd ../x',
    "jq -n '$ENV.PATH'",
    "jq -n 'env | keys'",
    "jq -n 'input_filename, $__loc__' a.json",
    'jq -L lib . a.json',
    'jq -Llib -r . a.json',
    'cat a.json | jq .x',
  ])('a rule for jq still allows %j', async (command) => {
    const decision = await evaluateRules(terminal(command), [prefix('jq'), prefix('cat')], context);
    expect(decision.decision).toBe('allow');
  });

  it('a rule that names the file is the person’s word for it', async () => {
    expect(await decide("jq -n --rawfile a /etc/os-release '$a'", 'jq -n --rawfile a /etc/os-release')).toBe('allow');
  });

  it('"Always allow" on jq reading a file outside the workspace proposes that call exactly', async () => {
    const draft = await proposeRule(terminal('jq . /etc/x.json'), { kind: 'global' }, { workspace: WORKSPACE });
    expect(draft.match).toStrictEqual({ kind: 'command-prefix', tokens: ['jq', '.', '/etc/x.json'], exact: true });
    const inside = await proposeRule(terminal(`jq . ${WORKSPACE}/x.json`), { kind: 'global' }, { workspace: WORKSPACE });
    expect(inside.match).toStrictEqual({ kind: 'command-prefix', tokens: ['jq'], exact: false });
  });
});
