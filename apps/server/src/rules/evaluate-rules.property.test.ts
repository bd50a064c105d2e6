import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { parseCommandLine } from './parse-command-line';
import type { Rule } from '@airlock/api';
import { context, prefix, terminal } from './rule-fixtures';

const allowRules = [prefix('npm test'), prefix('git status'), prefix('echo')];
const denyRm = prefix('rm -rf', { effect: 'deny' });

const word = fc.constantFrom(
  'npm', 'test', 'git', 'status', 'echo', 'rm', '-rf', '-x', 'hi', '"a b"', "'c;d'", '$X', '*.ts', '~/x', 'a\\ b',
  '"$(id)"', '`id`', '$((1))', '<(ls)', '>/dev/null', '2>&1', '>out', 'FOO=1', 'eval', 'bash', '-c', 'x#y',
);
const simple = fc.array(word, { minLength: 1, maxLength: 5 }).map((words) => words.join(' '));

/** Command lines that are well formed by construction: lists, pipelines, groups and substitutions of simple commands. */
const { line } = fc.letrec<{ line: string }>((tie) => ({
  line: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    simple,
    fc.tuple(tie('line'), fc.constantFrom(' ; ', ' && ', ' || ', ' | ', '\n', ' & ', ' |& '), tie('line')).map(([a, op, b]) => `${a}${op}${b}`),
    tie('line').map((inner) => `(${inner})`),
    tie('line').map((inner) => `{ ${inner}; }`),
    tie('line').map((inner) => `echo $( ${inner} )`),
    tie('line').map((inner) => `if ${inner}; then ${inner}; fi`),
  ),
}));

const shellish = fc
  .array(fc.constantFrom('npm test', 'rm -rf /', '#', '{', '}', '(', ')', '"', "'", '`', '$(', '\\', '\n', ';', '|', '&', '<<EOF', 'EOF', ' '), { maxLength: 12 })
  .map((parts) => parts.join(''));
const anyText = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }), shellish, line);
const separators = fc.constantFrom(';', ' ; ', '&&', '||', '|', '|&', '&', '\n', '\n\n');

async function decision(command: string, rules: readonly Rule[]): Promise<string> {
  return (await evaluateRules(terminal(command), rules, context)).decision;
}

describe('command line properties', () => {
  it('any text parses without throwing, and is decided', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (text) => {
        await parseCommandLine(text);
        expect(['allow', 'ask', 'deny']).toContain(await decision(text, [...allowRules, denyRm]));
      }),
      { numRuns: 400 },
    );
  }, 120_000);

  it('an allowed command followed by anything is allowed only if that part alone is allowed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('npm test', 'git status -s', 'echo hi'), separators, anyText, async (allowed, separator, rest) => {
        if (rest.trim() !== '' && (await decision(`${allowed} ${separator} ${rest}`, allowRules)) === 'allow') {
          expect(await decision(rest, allowRules)).toBe('allow');
        }
      }),
      { numRuns: 600 },
    );
  }, 120_000);

  it('deny wins: with a deny for every allow rule, nothing is allowed', async () => {
    const denies = allowRules.map((allow) => prefix(allow.match.kind === 'command-prefix' ? allow.match.tokens.join(' ') : '', { effect: 'deny' }));
    await fc.assert(
      fc.asyncProperty(anyText, async (text) => {
        expect(await decision(text, [...allowRules, ...denies])).not.toBe('allow');
      }),
      { numRuns: 400 },
    );
  }, 120_000);

  it('appending a denied command to a well-formed line is always denied', async () => {
    await fc.assert(
      fc.asyncProperty(line, fc.constantFrom(' ; ', ' && ', ' || ', ' | ', '\n', ' & '), fc.constantFrom('rm -rf /', 'rm -fr x', '/bin/rm -r -f y', 'sudo rm -Rf z'), async (text, separator, rm) => {
        expect(await decision(`${text}${separator}${rm}`, [...allowRules, denyRm])).toBe('deny');
      }),
      { numRuns: 400 },
    );
  }, 120_000);

  it('a denied command hidden inside any well-formed construct is denied', async () => {
    await fc.assert(
      fc.asyncProperty(line, async (text) => {
        const hidden = text.replace(/\bhi\b/, '$(rm -rf /)');
        if (hidden === text) return;
        expect(await decision(hidden, [...allowRules, denyRm])).toBe('deny');
      }),
      { numRuns: 300 },
    );
  }, 120_000);
});
