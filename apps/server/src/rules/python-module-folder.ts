import { readdirSync } from 'node:fs';
import path from 'node:path';
import { commandBaseName } from '@airlock/api';
import type { LineFacts } from './match-command';
import type { SimpleCommand } from './parse-command-line';
import { PYTHON_STANDARD_MODULES } from './python-standard-modules';

/** Python and PyPy by any versioned name: `python3`, `python3.11`, `pypy3`. */
const PYTHON = /^(?:python|pypy)[0-9.]*$/;
/** A file Python imports as the module before its first dot: `json.py`, `json.pyc`, `json.cpython-311-x86_64-linux-gnu.so`. */
const MODULE_FILE = /^([A-Za-z_][A-Za-z0-9_]*)(?:\.[^.]+)?\.(?:py|pyc|pyw|so|pyd)$/;
/** Python's options that take the next word as their value (`-W error`, `-X dev`, `-Q new`). */
const VALUE_LETTERS = new Set(['W', 'X', 'Q']);

/**
 * Whether a `python -m X` or `python -c CODE` call may run a module of the folder it runs in instead of the one
 * installed: for `-m` and `-c` Python puts the working folder first on `sys.path`, so a `pip/` package or a `pip.py`
 * there (written by a call, or brought by a checkout) is what `python3 -m pip --version` runs, and a `json.py` what
 * `python3 -c 'import json'` imports, whatever rule named that call. True while that folder holds, for `-m`, a file or
 * folder named `X` or `X.…` (the first part of a dotted name); for either, a module Python would import from there
 * (`name.py`, `.pyc`, `.so`, `.pyd`, or a package folder with an `__init__`) whose name is a module of the standard
 * library, which the modules it runs import in turn (`subprocess` imports `selectors`), or, for `-c`, a word of the
 * code; when the code or the module is a word the shell computes; and when where it runs is not known as it will be (a `cd` to a computed or
 * outside folder, a command before that may have changed the file system). False with `-I` or `-P` (neither puts the
 * folder on `sys.path`), for any other call, and when the facts name no folder. Read synchronously: one listing of that
 * folder.
 */
export function pythonModuleMayBeLocal(command: SimpleCommand, line: LineFacts): boolean {
  const [first, ...args] = command.words;
  if (first?.kind !== 'literal' || !PYTHON.test(commandBaseName(first.value))) return false;
  let module: string | undefined;
  let code: string | undefined;
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
    if (given === undefined) return true;
    if (letter === 'c') code = given;
    else module = given;
    break;
  }
  if (module === undefined && code === undefined) return false;
  const folder = line.folder ?? line.workspace;
  if (folder === undefined) return false;
  if (line.leftWorkspace === true || line.fileSystemChanged === true) return true;
  try {
    const entries = readdirSync(folder, { withFileTypes: true });
    const top = module?.split('.')[0];
    if (top !== undefined && entries.some((entry) => entry.name === top || entry.name.startsWith(`${top}.`))) return true;
    const words = new Set(code?.match(/[A-Za-z_][A-Za-z0-9_]*/g));
    const imported = (name: string) => PYTHON_STANDARD_MODULES.has(name) || words.has(name);
    return entries.some((entry) => {
      if (!entry.isFile() && !entry.isSymbolicLink() && !entry.isDirectory()) return false;
      const file = MODULE_FILE.exec(entry.name);
      if (file !== null && !entry.isDirectory()) return imported(file[1]!);
      return !entry.isFile() && imported(entry.name) && isPackage(path.join(folder, entry.name));
    });
  } catch (error) {
    // A folder that is not there holds no module: the call fails there.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** Whether `folder` is a regular package (an `__init__.py`, `.pyc`, `.so` …), which Python imports before any other module of its name. */
function isPackage(folder: string): boolean {
  try {
    return readdirSync(folder).some((name) => name.startsWith('__init__.'));
  } catch {
    return true;
  }
}
