import { opendirSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { commandBaseName } from '@airlock/api';
import type { LineFacts } from './match-command';
import type { SimpleCommand } from './parse-command-line';

/** Python and PyPy by any versioned name: `python3`, `python3.11`, `pypy3`. */
const PYTHON = /^(?:python|pypy)[0-9.]*$/;
/**
 * A file Python may import from a folder on `sys.path`, by the part of its name before the first dot: `json.py`,
 * `json.pyc`, `json.cpython-311-x86_64-linux-gnu.so`, `json.pyd`.
 */
const MODULE_FILE = /^([^.]+)(?:\.[^.]+)?\.(?:py|pyc|pyw|so|pyd)$/;
/** Python's options that take the next word as their value (`-W error`, `-X dev`, `-Q new`). */
const VALUE_LETTERS = new Set(['W', 'X', 'Q']);
/** Python's long options that print and end Python before it imports anything of the folder. */
const EXITING_OPTIONS = new Set(['--version', '--help', '--help-env', '--help-xoptions', '--help-all']);
/** Python's long options that take the next word as their value. */
const VALUE_OPTIONS = new Set(['--check-hash-based-pycs']);
/**
 * How many entries one judging reads in all, of the folder and of the folders in it: the listing holds the event
 * loop (a call made a folder of 250,000 files, and each `python3 -m pytest` judged then held every other client for
 * 0.8–3 s). Past it, a module of the folder is taken as there. About 10–30 ms of listing here at most.
 */
export const PYTHON_FOLDER_ENTRIES = 10_000;

/**
 * Whether a `python -m X`, `python -c CODE` or `python` reading its code from standard input (`python3 -`,
 * `python3 < script.py`, `… | python3`) may import a module of the folder it runs in instead of one installed: for
 * these Python puts the working folder first on `sys.path`, so any module there shadows one of the same name, of the
 * standard library or installed, that the code or the module run imports, or that those import in turn (pytest
 * imports `pluggy`, `requests` imports `idna`). Which modules that is cannot be told from the call, so any counts: true
 * while that folder holds a file Python may import (`name.py`, `.pyc`, `.pyw`, `.so`, `.pyd`, by a name that may be
 * an identifier), or a folder of such a name that is a package (an `__init__.…`) or may be part of a namespace
 * package (it holds such a file or folder); when a word of the options, the code or the module is one the shell
 * computes; and when where it runs is not known as it will be (a `cd` to a computed or outside folder, a command
 * before that may have changed the file system). A `.pth` file there is not read (Python reads those only in
 * site-packages), nor `__pycache__` (read only for a source beside it). False with `-I` or `-P` (neither puts the folder
 * on `sys.path`), with `-V` or `-h` (Python prints and ends), for a script named (its own folder is put there instead, and the script is judged as the program it
 * is), for any other call, and when the facts name no folder. Read synchronously: a listing of that folder and of each
 * folder in it of such a name, at most PYTHON_FOLDER_ENTRIES entries in all (true past them).
 */
export function pythonModuleMayBeLocal(command: SimpleCommand, line: LineFacts): boolean {
  const [first, ...args] = command.words;
  if (first?.kind !== 'literal' || !PYTHON.test(commandBaseName(first.value))) return false;
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index]!;
    if (word.kind !== 'literal') return true;
    const value = word.value;
    if (value === '-') break;
    if (value === '--') {
      const next = args[index + 1];
      if (next !== undefined && !(next.kind === 'literal' && next.value === '-')) return next.kind !== 'literal';
      break;
    }
    if (!value.startsWith('-')) return false;
    const letters = value.slice(1);
    if (letters.startsWith('-')) {
      if (EXITING_OPTIONS.has(value)) return false;
      if (VALUE_OPTIONS.has(value)) index += 1;
      continue;
    }
    const at = [...letters].findIndex((letter) => letter === 'm' || letter === 'c' || VALUE_LETTERS.has(letter));
    const switches = at === -1 ? letters : letters.slice(0, at);
    if (/[IPVh]/.test(switches)) return false;
    if (at === -1) continue;
    const letter = letters[at]!;
    if (VALUE_LETTERS.has(letter)) {
      if (letters.slice(at + 1) === '') index += 1;
      continue;
    }
    // `-c CODE` or `-m MODULE`: what follows is the code's own arguments.
    break;
  }
  const folder = line.folder ?? line.workspace;
  if (folder === undefined) return false;
  if (line.leftWorkspace === true || line.fileSystemChanged === true) return true;
  const budget = { left: PYTHON_FOLDER_ENTRIES };
  try {
    return someEntry(folder, budget, (entry) => {
      if (entry.isFile()) return isModuleFile(entry.name);
      if (!entry.isDirectory() && !entry.isSymbolicLink()) return false;
      if (entry.isSymbolicLink() && isModuleFile(entry.name)) return true;
      return mayBeIdentifier(entry.name) && isPackage(path.join(folder, entry.name), budget);
    });
  } catch (error) {
    // A folder that is not there holds no module: the call fails there.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/**
 * Whether an entry of `folder` passes `test`, read a batch at a time and stopping at the first that does; true too once
 * `budget` runs out before the listing ends (a folder too large to read now may hold one). Throws as `opendir` does.
 */
function someEntry(folder: string, budget: { left: number }, test: (entry: Dirent) => boolean): boolean {
  const dir = opendirSync(folder, { bufferSize: 256 });
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      if (budget.left <= 0) return true;
      budget.left -= 1;
      if (test(entry)) return true;
    }
    return false;
  } finally {
    dir.closeSync();
  }
}

/** Whether Python may import the file `name` as a module: a module's suffix after a name that may be an identifier. */
function isModuleFile(name: string): boolean {
  const file = MODULE_FILE.exec(name);
  return file !== null && mayBeIdentifier(file[1]!);
}

/**
 * Whether `name` may be a Python identifier: not one that starts with a digit or holds a character of ASCII other than
 * letters, digits and `_` (`my-tool`, `1st`, `.venv`). Others outside ASCII are taken as letters.
 */
function mayBeIdentifier(name: string): boolean {
  return name !== '' && !/^[0-9]/.test(name) && ![...name].some((char) => char < '\x80' && !/[A-Za-z0-9_]/.test(char));
}

/**
 * Whether `folder` (or a link's target) may be imported as a package: it holds an `__init__.…` (a regular package),
 * or a module file or a folder of a name that may be an identifier (a namespace package's portion, whose modules
 * Python imports from the first folder on `sys.path` that holds them). False for a link to no folder.
 */
function isPackage(folder: string, budget: { left: number }): boolean {
  try {
    return someEntry(folder, budget, (entry) => {
      if (entry.name.startsWith('__init__.') || isModuleFile(entry.name)) return true;
      return mayBeIdentifier(entry.name) && (entry.isDirectory() || entry.isSymbolicLink());
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== 'ENOTDIR' && code !== 'ENOENT' && code !== 'ELOOP';
  }
}
