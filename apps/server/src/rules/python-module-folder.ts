import { readdirSync } from 'node:fs';
import { commandBaseName } from '@airlock/api';
import type { LineFacts } from './match-command';
import type { SimpleCommand } from './parse-command-line';

/** Python and PyPy by any versioned name: `python3`, `python3.11`, `pypy3`. */
const PYTHON = /^(?:python|pypy)[0-9.]*$/;
/** Python's options that take the next word as their value (`-W error`, `-X dev`, `-Q new`). */
const VALUE_LETTERS = new Set(['W', 'X', 'Q']);

/**
 * Whether a `python -m X` call may run a module `X` of the folder it runs in instead of the one installed: for `-m`
 * (and `-c`) Python puts the working folder first on `sys.path`, so a `pip/` package or a `pip.py` there (written by a
 * call, or brought by a checkout) is what `python3 -m pip --version` runs, whatever rule named that call. True while
 * that folder holds a file or folder named `X` or `X.…` (the first part of a dotted name), when where it runs is not
 * known as it will be (a `cd` to a computed or outside folder, a command before that may have changed the file
 * system), and false with `-I` or `-P` (neither puts the folder on `sys.path`), for any other call, and when the
 * facts name no folder. Read synchronously: one listing of that folder.
 */
export function pythonModuleMayBeLocal(command: SimpleCommand, line: LineFacts): boolean {
  const [first, ...args] = command.words;
  if (first?.kind !== 'literal' || !PYTHON.test(commandBaseName(first.value))) return false;
  let module: string | undefined;
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index]!;
    if (word.kind !== 'literal') return true;
    const value = word.value;
    if (!value.startsWith('-') || value === '-' || value === '--') return false;
    const letters = value.slice(1);
    if (letters.startsWith('-')) continue;
    const at = [...letters].findIndex((letter) => letter === 'm' || letter === 'c' || VALUE_LETTERS.has(letter));
    const switches = at === -1 ? letters : letters.slice(0, at);
    if (switches.includes('I') || switches.includes('P')) return false;
    if (at === -1) continue;
    const letter = letters[at]!;
    const attached = letters.slice(at + 1);
    const next = args[index + 1];
    const given = attached !== '' ? attached : next?.kind === 'literal' ? next.value : undefined;
    if (VALUE_LETTERS.has(letter)) {
      if (attached === '') index += 1;
      continue;
    }
    // `-c`: the code may import any module; only `-m` names one.
    if (letter === 'c') return false;
    if (given === undefined) return true;
    module = given;
    break;
  }
  if (module === undefined) return false;
  const folder = line.folder ?? line.workspace;
  if (folder === undefined) return false;
  if (line.leftWorkspace === true || line.fileSystemChanged === true) return true;
  const top = module.split('.')[0]!;
  try {
    return readdirSync(folder).some((entry) => entry === top || entry.startsWith(`${top}.`));
  } catch (error) {
    // A folder that is not there holds no module: the call fails there.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
