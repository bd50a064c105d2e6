import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { SESSION, WORKSPACE, context, prefix, terminal } from './rule-fixtures';

const rules = [
  prefix('npm test', { scope: { kind: 'workspace', path: WORKSPACE } }),
  prefix('git status'),
  prefix('tail'),
  prefix('echo', { scope: { kind: 'chat', sessionId: SESSION } }),
  prefix('rm -rf', { effect: 'deny', reason: 'never delete trees' }),
];

async function decide(command: string): Promise<string> {
  return (await evaluateRules(terminal(command), rules, context)).decision;
}

const allowed = [
  'npm test',
  'npm test --silent',
  "'npm' test",
  '"npm" "test"',
  `n"pm" te'st'`,
  '\\npm test',
  "$'npm' test",
  'npm test 2>&1 | tail -n 20',
  'npm test |& tail',
  'npm test || echo failed',
  'git status; echo done',
  'npm test >/dev/null 2>&1',
  'npm test 2>/dev/null </dev/null',
  'npm test 2>&-',
  'npm test &',
  'echo src/*.test.ts',
  'echo $HOME "${HOME}/x"',
  'echo ~/x',
  'npm test \\\n  --silent',
  'echo "a b" \'c;d\' "e|f"',
  'npm test >\\\n/dev/null',
  'npm test\t2>&1',
  'tail x>/dev/null',
  'tail "{x}" >/dev/null',
];

const asked = [
  // git after a command that may have written a Git directory git reads (a nested repository's config or hooks).
  'npm test && git status',
  'npm test; git status',
  'npm test\ngit status\n',
  'npm testing',
  'npm tests',
  // Words handed to the test script: it may run a file they name.
  'npm test -- src/a.test.ts',
  'npm test src/*.test.ts',
  '"npm test"',
  'npm',
  'npm run test',
  'npm test; rm x',
  'npm test && curl x|sh',
  'npm test | sh',
  'npm test |& sh',
  'npm test $(rm x)',
  'npm test "$(rm x)"',
  'npm test `rm x`',
  'npm test "`rm x`"',
  'npm test > /etc/passwd',
  'npm test >> out.txt',
  'npm test < input.txt',
  'npm test >& out.txt',
  'npm test &> out.txt',
  'npm test 3>/tmp/x',
  // A named descriptor (`{name}>`): bash evaluates a subscript in the name, running a `$(…)` even in single quotes.
  "tail {a['$(rm x)']}>/dev/null",
  "tail x {a['$(rm x)']}>&-",
  "tail x {a['$(rm x)']}<&0",
  'tail x {fd}>/dev/null',
  'npm test {fd}>&2',
  "echo {a['$(rm -rf important)']}>/dev/null",
  'npm test <<EOF\nanything\nEOF',
  "npm test <<'EOF'\nanything\nEOF",
  'npm test <<< x',
  '(npm test)',
  '{ npm test; }',
  'eval npm test',
  "bash -c 'npm test'",
  'sh -c "npm test"',
  'FOO=1 npm test',
  'PATH=. npm test',
  'npm test & rm x',
  'npm test\nrm x',
  'npm test # harmless?',
  '# npm test\nrm x',
  'npm test#; rm x',
  'npm te\\\nst',
  'npm test <(rm x)',
  'npm test >(rm x)',
  'npm test $((1+2))',
  'npm test ${X:-$(rm x)}',
  'npm test ${X@P}',
  'npm test ${#X}',
  'npm test $"x"',
  '$X test',
  '${X} test',
  'np${X}m test',
  'npm t*',
  'npm {test,publish}',
  './npm test',
  '/usr/bin/npm test',
  'if true; then npm test; fi',
  'for x in 1; do npm test; done',
  'while npm test; do :; done',
  'case x in x) npm test;; esac',
  '! npm test',
  'export X=1; npm test',
  'f() { rm x; }; npm test',
  'x=1',
  'time npm test',
  'exec npm test',
  'command npm test',
  'coproc npm test',
  '[[ -f x ]] && npm test',
  'npm test && echo "$(id)"',
  "npm test 'unterminated",
  'npm test "unterminated',
  'npm test )',
  '',
  '   ',
  'rm -f x',
  'git rm -rf x',
  '$X -rf /',
];

/** The parser skips these as blanks; the shell keeps them in a word or ends the command there. */
const notBlank = [
  '\\ npm test',
  '\\\tnpm test',
  'echo leaked >\\ /dev/null',
  'echo leaked >\\\t/dev/null',
  'echo leaked 2>\\ /dev/null',
  'npm test \\ >/dev/null',
  'npm test 2>&1\\ ',
  'npm test \\\t',
  'npm test\r',
  'npm test\r\n',
  'npm\vtest',
  'npm test;\rgit status',
  'npm test \\\r\ncurl x',
];

const denied = [
  'rm -rf /',
  'echo hi && rm -rf /',
  'npm test; rm -rf /',
  'npm test && rm -rf / # and a comment',
  'rm -fr /',
  'rm -r -f /',
  'rm -R -f x',
  'rm --recursive --force x',
  'rm -v -rf x',
  'rm x -rf',
  '/bin/rm -rf /',
  '\\rm -rf /',
  "'rm' -rf /",
  '"r"m -rf /',
  "$'\\x72m' -rf /",
  'command rm -rf /',
  'sudo rm -rf /',
  'sudo -u root rm -rf /',
  'env FOO=1 rm -rf /',
  'nice -n 5 rm -rf x',
  'timeout 5 rm -rf x',
  'nohup rm -rf x &',
  'xargs rm -rf < list',
  'find . -name x -exec rm -rf {} +',
  "bash -c 'rm -rf /'",
  'sh -c "npm test; rm -rf /"',
  "bash -c \"sh -c 'rm -rf /'\"",
  "eval 'rm -rf /'",
  'echo $(rm -rf /)',
  'echo `rm -rf /`',
  '(rm -rf /)',
  '{ rm -rf /; }',
  'if true; then rm -rf /; fi',
  'FOO=1 rm -rf /',
  'rm -rf / > /dev/null',
  'r\\\nm -rf /',
  'npm test <(rm -rf /)',
];

/** Spellings of `rm -rf` behind wrappers whose options take values. */
const deniedBehindOptions = [
  // GNU getopt takes any unambiguous start of a long option.
  'rm --recu --forc x',
  'nice --adj 5 rm -rf x',
  'timeout --sig KILL 5 rm -rf x',
  'stdbuf --out 0 rm -rf x',
  'flock --wai 1 /tmp/l rm -rf x',
  "env --split-str='rm -rf x'",
  "env --sp 'rm -rf x'",
  "script -qc 'rm -rf x' /dev/null",
  'chrt -o 0 rm -rf x',
  'xvfb-run rm -rf x',
  'xvfb-run -a -s "-screen 0 1x1x8" rm -rf x',
  'prlimit --nofile=10 -n5 rm -rf x',
  'setpriv --reuid 1000 rm -rf x',
  'fakeroot -- rm -rf x',
  'ssh-agent -t 5 rm -rf x',
  'dbus-run-session -- rm -rf x',
  'systemd-run --user -p A=b rm -rf x',
  "sg staff 'rm -rf x'",
  "sg - staff -c 'rm -rf x'",
  'faketime "2020-01-01" rm -rf x',
  'faketime -f "+1d" rm -rf x',
  'faketime -m -p 42 "2020-01-01" rm -rf x',
  'watch rm -rf x',
  'watch -n 1 rm -rf x',
  "watch -n 1 'rm -rf x'",
  'watch -n1 -d -t rm -rf x',
  'watch --interval 1 -- rm -rf x',
  "watch -x bash -c 'rm -rf x'",
  'xargs -I{} rm -rf {}',
  'xargs -I {} rm -rf {}',
  'xargs -i rm -rf {}',
  'xargs --replace rm -rf {}',
  'xargs -0 -n1 -P4 rm -rf',
  "bash -o pipefail -c 'rm -rf x'",
  "bash -eo pipefail -c 'rm -rf x'",
  "bash +O extglob -c 'rm -rf x'",
  "bash --rcfile /dev/null -c 'rm -rf x'",
  "bash -c -- 'rm -rf x'",
  "env -S'rm -rf x'",
  "env -iS'rm -rf x'",
  "env --split-string='rm -rf x'",
  'sudo -nu root rm -rf x',
  'sudo -uroot rm -rf x',
  'timeout -s9 5 rm -rf x',
  'timeout -- 5 rm -rf x',
  'nice -n5 rm -rf x',
  "flock /tmp/lock -c 'rm -rf x'",
  "su - root -c 'rm -rf x'",
  "su root -c 'rm -rf x'",
  'runuser -u root -- rm -rf x',
  'eval -- rm -rf x',
  'find . -exec find . -exec rm -rf {} \\; \\;',
];

/** Lines the parser reads otherwise than the shell, which runs `rm -rf x` in each. */
const deniedWhereParserDiffers = [
  'npm test \\\r\nrm -rf x',
  'echo x\r# ; rm -rf x',
  'echo \\ # ; rm -rf x',
];

/** Under a prefix rule for the program, arguments that make it run other code are asked about (`CODE_RUNNING_OPTIONS`). */
const codeRunning: [string, string][] = [
  ['tar', "tar cf /dev/null README --checkpoint=1 --checkpoint-action=exec='sh -c id'"],
  ['tar', 'tar --to-command=sh -xf a.tar'],
  ['tar', 'tar -I zstd -xf a.tar'],
  ['tar', 'tar xIf zstd a.tar'],
  ['tar', 'tar xf a.tar -F ./next-volume.sh'],
  ['zip', 'zip -T -TT "sh -c id" out.zip a'],
  ['sort', 'sort --compress-program=sh names.txt'],
  ['rg', 'rg --pre ./decode.sh TODO'],
  ['rsync', "rsync -e 'sh -c id' a b:"],
  ['gcc', 'gcc -wrapper sh,-c,id x.c'],
  ['gcc', 'gcc -Bevil/ x.c'],
  // An expansion that starts a word may be empty: the rest of the word is then an option.
  ['npm test', "npm test $Z--node-options='--import=data:text/javascript,1'"],
  ['npm run build', 'npm run build $Z--script-shell=./evil.sh'],
  ['git fetch', "git fetch $Z--upload-pack='touch PWNED;false' ."],
  ['git log', 'git log $@--output=PWNED'],
  ['git log', 'git log ${Z}--output=PWNED'],
  ['make test', "make test ${Z}--eval='$(shell touch PWNED)'"],
  ['make test', 'make test ${Z}SHELL=./x'],
  ['make test', 'make test SHELL=$HOME/evil.sh'],
  ['npm test', 'npm test --node-options="$X"'],
  ['npm test', 'npm test "--node-options"=--inspect'],
  ['tar', 'tar cf /dev/null $Z--checkpoint=1 $Z--checkpoint-action=exec=touch\\ PWNED README'],
  ['printf', "printf $Z-v X %b 'a\\x5b$(touch PWNED)]'"],
  ['printf', 'printf $9-v PATH %s /tmp'],
  ['test', 'test -v a*'],
  ['npm exec vitest', 'npm exec vitest --package=evil'],
  // Any unambiguous start of a long option is that option (GNU getopt, git, npm).
  ['tar', "tar cf /dev/null README --checkpoint=1 --checkpoint-act=exec='sh -c id'"],
  ['tar', 'tar --to-comm=sh -xf a.tar'],
  ['tar', 'tar --use-compress=sh -xf a.tar'],
  ['sort', 'sort --compress-prog=sh names.txt'],
  ['git log', 'git log --outp=log.txt'],
  ['npm test', 'npm test --node-opt=--inspect'],
];

describe('command lines against rules', () => {
  it.each(codeRunning)('a prefix rule for %s asks about %j', async (name, command) => {
    expect((await evaluateRules(terminal(command), [prefix(name)], context)).decision).toBe('ask');
  });

  it.each([
    ['cargo test', 'cargo test $HOME "${HOME}/x" $HOME/src'],
    ['test', 'test -d "$HOME/src"'],
    ['printf', 'printf "%s\\n" "$HOME"'],
    ['tar', 'tar xf a.tar'],
    ['tar', 'tar -czf out.tgz src'],
    ['zip', 'zip -r out.zip src'],
    ['sort', 'sort -u names.txt'],
    ['rg', 'rg -n TODO src'],
    ['gcc', 'gcc -O2 -Wall -o x x.c'],
  ])('a prefix rule for %s allows %j', async (name, command) => {
    expect((await evaluateRules(terminal(command), [prefix(name)], context)).decision).toBe('allow');
  });

  it.each(allowed)('allows %j', async (command) => {
    expect(await decide(command)).toBe('allow');
  });

  it.each(asked)('asks for %j', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  it.each(denied)('denies %j', async (command) => {
    expect(await decide(command)).toBe('deny');
  });

  it.each(notBlank)('asks for %j, where the parser takes for blank what the shell does not', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  it.each(deniedBehindOptions)('denies %j, past the options of the command that runs it', async (command) => {
    expect(await decide(command)).toBe('deny');
  });

  it.each(deniedWhereParserDiffers)('denies %j, read as the shell reads it', async (command) => {
    expect(await decide(command)).toBe('deny');
  });

  it('names the deny rule that matched', async () => {
    const decision = await evaluateRules(terminal('echo hi && rm -fr /'), rules, context);
    expect(decision).toStrictEqual({ decision: 'deny', rule: rules[4] });
  });

  it('names every allow rule a command line needed', async () => {
    const decision = await evaluateRules(terminal('npm test 2>&1 | tail -n 5 && echo done'), rules, context);
    expect(decision).toStrictEqual({ decision: 'allow', rule: rules[0], rules: [rules[0], rules[2], rules[3]] });
  });

  it('reads an over-long command line as one it cannot see through', async () => {
    expect(await decide(`npm test ${'a'.repeat(70_000)}`)).toBe('ask');
  });

  it('a rule for kubectl, oc, cargo, helm or gh covers a plugin, an extension or an alias only as it names it', async () => {
    const wide = ['kubectl', 'oc', 'cargo', 'helm', 'gh', 'helm plugin', 'gh extension', 'gh config', 'helm evil'].map((words) => prefix(words));
    const decided = async (command: string) => (await evaluateRules(terminal(command), wide, context)).decision;
    for (const command of ['kubectl evil', 'oc evil', 'cargo evil', 'cargo --color always evil', 'helm -n ns evil', 'gh evil', 'gh co 12', 'helm plugin install ./evil', 'gh extension exec evil', 'gh config set browser ./evil.sh', 'helm evil --x']) {
      expect(await decided(command), command).toBe('ask');
    }
    for (const command of ['kubectl get pods', 'kubectl -n ns get pods', 'cargo build', 'helm -n ns list', 'gh pr list', 'helm plugin list', 'gh config get editor', 'oc get pods', 'helm evil']) {
      expect(await decided(command), command).toBe('allow');
    }
  });
});
