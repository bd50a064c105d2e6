import path from 'node:path';
import { commandBaseName, FOLLOWED_WRAPPERS, isExactOnlyCommand, isExactOnlyProgram } from '@airlock/api';
import { INPUT_COMMAND_READERS, PROJECT_RUNNERS } from '@airlock/api/rules/commands';
import { innerCommands, type ReachableWords } from './command-wrappers';
import { realProgramName } from './program-real-name';
import { isPrefixedMake } from './prefixed-make';
import type { SimpleCommand } from './parse-command-line';
import { isWithin } from '../tools/path-within';

/** The wrappers that hand their input on to the command they run, which is judged in their place. */
const HAND_INPUT_ON: ReadonlySet<string> = new Set<string>(FOLLOWED_WRAPPERS.filter((wrapper) => !INPUT_COMMAND_READERS.has(wrapper)));

/** At most this many commands are looked at behind wrappers; past it, the command counts as reading its input. */
const MAX_EXAMINED = 64;

/**
 * Whether `command`, given an input other than the terminal's (a pipe: `SimpleCommand.inputPiped`), may run what that
 * input says: it is, or runs behind wrappers (`nice sftp host`, `uv run sftp host`), a shell, an interpreter, an editor
 * or another program that runs whatever it is given (`isExactOnlyCommand`, also by the name it leads to on PATH), one
 * of `INPUT_COMMAND_READERS`, a program of the `workspace` (a relative path, or an absolute one inside it, which reads
 * its input as it likes: `./manage.py shell` runs the Python it is fed) or one a `PROJECT_RUNNERS` program runs for the
 * project, a command whose name the shell computes, or a
 * command line handed to a shell. A rule names the words of a call, not what a pipe feeds it: `sftp host` read
 * nothing from the terminal's closed input.
 */
export function readsCommandsFromInput(command: SimpleCommand, workspace?: string): boolean {
  const pending: ReachableWords[] = [command.words.map((word) => (word.kind === 'literal' ? word.value : undefined))];
  for (let examined = 0, words = pending.pop(); words !== undefined; examined += 1, words = pending.pop()) {
    const [first] = words;
    if (first === undefined || examined >= MAX_EXAMINED) return true;
    if (isWorkspaceProgram(first, workspace)) return true;
    const name = commandBaseName(first);
    const real = realProgramName(first);
    if (readsInput(name, first) || (real !== undefined && readsInput(real, real))) return true;
    const inner = innerCommands(words);
    if (inner.commandLines.length > 0) return true;
    pending.push(...inner.words);
  }
  return false;
}

function readsInput(name: string, word: string): boolean {
  if (INPUT_COMMAND_READERS.has(name) || PROJECT_RUNNERS.has(name) || isPrefixedMake(name)) return true;
  return (isExactOnlyCommand(name) || isExactOnlyProgram(word)) && !HAND_INPUT_ON.has(name);
}

/** Whether `word` names a program of the workspace: a path relative to where it runs, or an absolute one inside `workspace`. */
function isWorkspaceProgram(word: string, workspace: string | undefined): boolean {
  if (!word.includes('/')) return false;
  if (!path.isAbsolute(word)) return true;
  return workspace !== undefined && isWithin(workspace, word);
}
