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

  // jq 1.6 reads `--argfile name file` as `--slurpfile` (it took no value here: `--argfile --indent FILE` had FILE read
  // as `--indent`'s value); `--run-tests` runs the programs of a file, or of its input, and prints each line that fails
  // (any version: `jq --run-tests ~/.git-credentials` printed the file's lines), programs the rule cannot see, as
  // `-f`'s. jq takes a long option by its whole name only: one it does not know here may do either (found in review).
  it.each([
    "jq -n --argfile --indent /home/me/.docker/config.json '$ARGS'",
    "jq -n --argfile a ~/.docker/config.json '$a'",
    "jq -n --argfile a ../x.json '$a'",
    'jq --run-tests /home/me/.git-credentials',
    'jq --run-tests tests/jq.test',
    'jq --run-tests',
    'jq . a.json --run-tests /home/me/.git-credentials',
    'jq -n --run-tests --skip 1 /home/me/.git-credentials',
    'jq --some-later-option /home/me/x . a.json',
    'jq --ru /home/me/.git-credentials',
    'jq --indent=2 . a.json',
  ])('a rule for jq asks about %j (found in review)', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  it.each([
    "jq -n --argfile a data/x.json '$a'",
    'jq --seq --stream --stream-errors --unbuffered . a.json',
    'jq --ascii-output --color-output --monochrome-output --sort-keys --tab . a.json',
    'jq --compact-output --raw-output --raw-output0 --join-output --exit-status .x a.json',
    'jq --slurp --raw-input --null-input --binary . a.json',
    'jq --indent 4 --debug-dump-disasm --debug-trace --debug-trace=all . a.json',
    'jq --help',
    'jq --version',
    'jq --build-configuration',
    'jq -n --jsonargs \'$ARGS\' 1 2',
    // After `--` a word is a file or an argument, whatever it starts with.
    'jq . -- --run-tests',
  ])('a rule for jq still allows its own options: %j', async (command) => {
    expect(await decide(command)).toBe('allow');
  });

  it('jaq runs tests as jq does, and the yq that wraps jq hands it `--run-tests` and `--argfile`', async () => {
    expect(await decide('jaq --run-tests tests/a.test', 'jaq')).toBe('ask');
    expect(await decide('yq --run-tests /home/me/.git-credentials', 'yq')).toBe('ask');
    expect(await decide("yq -n --argfile --indent /home/me/.docker/config.json '$ARGS'", 'yq')).toBe('ask');
    // Their own long options are theirs to read: only jq's are known here.
    expect(await decide('yq --yaml-output . a.yaml', 'yq')).toBe('allow');
  });

  it('a rule that names `--run-tests` covers the test files it is given in the workspace', async () => {
    expect(await decide('jq --run-tests tests/a.test', 'jq --run-tests')).toBe('allow');
    expect(await decide('jq --run-tests /home/me/.git-credentials', 'jq --run-tests')).toBe('ask');
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
