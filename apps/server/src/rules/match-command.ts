import type { ReachableWords } from './command-wrappers';
import { commandBaseName } from '@airlock/api';
import type { SimpleCommand } from './parse-command-line';
import type { CommandPrefix } from '@airlock/api';

/** Option spellings deny rules take as one, per command: `rm -R`, `rm --recursive` and `rm -r` are the same. */
const OPTION_ALIASES = new Map<string, ReadonlyMap<string, string>>([
  ['rm', new Map([['-R', '-r'], ['--recursive', '-r'], ['--force', '-f'], ['--dir', '-d']])],
  ['cp', new Map([['-R', '-r'], ['--recursive', '-r'], ['--force', '-f']])],
  ['chmod', new Map([['--recursive', '-R']])],
  ['chown', new Map([['--recursive', '-R']])],
  ['chgrp', new Map([['--recursive', '-R']])],
  ['git', new Map([['--force', '-f']])],
]);

/**
 * An allow rule covers a command whose first words are exactly the rule's tokens (after quote removal, compared
 * as whole words: `npm testing` is not `npm test`), followed by nothing when the rule is exact, or by any
 * arguments, including globs and `$NAME`, which only ever become more arguments.
 */
export function allowsCommand(rule: CommandPrefix, command: SimpleCommand): boolean {
  if (command.words.length < rule.tokens.length) return false;
  if (rule.exact && command.words.length !== rule.tokens.length) return false;
  return rule.tokens.every((token, index) => {
    const word = command.words[index];
    return word?.kind === 'literal' && word.value === token;
  });
}

/**
 * A deny rule catches a command whose name has the rule's first token as its last path part (`/bin/rm` and
 * `\rm` are `rm`), that carries every option of the rule in any order and short-option grouping (`rm -rf`
 * catches `rm -fr`, `rm -r -f`, `rm -R --force`), and the rule's other words in the same order among its
 * arguments. It can catch more than meant (`git log push` for `git push`), never less for these spellings.
 */
export function deniesCommand(rule: CommandPrefix, words: ReachableWords): boolean {
  const [first, ...args] = words;
  const [ruleName = '', ...ruleArgs] = rule.tokens;
  if (first === undefined) return false;
  const name = commandBaseName(first);
  if (name !== commandBaseName(ruleName)) return false;
  const aliases = OPTION_ALIASES.get(name) ?? new Map<string, string>();
  const { options, operands } = splitArguments(args, aliases, 'whole-and-letters');
  const { options: ruleOptions, operands: ruleOperands } = splitArguments(ruleArgs, aliases, 'letters');
  if (rule.exact && args.length !== ruleArgs.length) return false;
  for (const option of ruleOptions) if (!options.has(option)) return false;
  let next = 0;
  for (const operand of operands) {
    if (next < ruleOperands.length && operand === ruleOperands[next]) next += 1;
  }
  return next === ruleOperands.length;
}

function splitArguments(
  args: readonly (string | undefined)[],
  aliases: ReadonlyMap<string, string>,
  groups: 'whole-and-letters' | 'letters',
): { options: Set<string>; operands: (string | undefined)[] } {
  const options = new Set<string>();
  const operands: (string | undefined)[] = [];
  let afterDashes = false;
  for (const arg of args) {
    if (arg === '--' && !afterDashes) {
      afterDashes = true;
      continue;
    }
    if (afterDashes || arg === undefined || !arg.startsWith('-') || arg === '-') {
      operands.push(arg);
      continue;
    }
    const grouped = !arg.startsWith('--') && arg.length > 2;
    if (!grouped || groups === 'whole-and-letters') options.add(aliases.get(arg) ?? arg);
    if (grouped) for (const letter of arg.slice(1)) options.add(aliases.get(`-${letter}`) ?? `-${letter}`);
  }
  return { options, operands };
}
