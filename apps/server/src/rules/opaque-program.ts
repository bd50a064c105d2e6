import { codeWord, reason, type Reason } from '@airlock/core';
import { commandBaseName, PREFIX_PROPOSED_COMMANDS } from '@airlock/api';
import { patternNaming } from './hidden-program-name';
import type { SimpleCommand } from './parse-command-line';

/**
 * Programs that take what a pipe feeds them as data and never run it, each read for this: no command, expression or
 * script of theirs runs a program (their options that run one, `sort --compress-program` and `rg --pre`, are judged as
 * for any call). Some write files they are named (`tee`, `uniq in out`, `xxd -r - out`), as `cp` does. Not `awk` or
 * `sed` (`system()`, `e`: exact-only), not `git` (`git push --stdin` reads refspecs), not `less` (its `!`), not
 * `openssl` (`-engine` loads a library).
 */
const DATA_FILTERS: ReadonlySet<string> = new Set([
  'cat', 'head', 'tail', 'grep', 'egrep', 'fgrep', 'rg', 'wc', 'sort', 'uniq', 'cut', 'tr', 'tee', 'base64', 'base32',
  'basenc', 'xxd', 'jq',
  'nl', 'tac', 'rev', 'fold', 'fmt', 'paste', 'column', 'comm', 'join', 'od', 'hexdump', 'strings', 'diff', 'cmp',
  'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'cksum',
]);

/**
 * Shells, interpreters, debuggers and editors: each runs the code or the command line it is given. Matched with a
 * version after the name too (`python3.12`, `bash-5.2`, `lua5.4`).
 */
const CODE_RUNNERS: ReadonlySet<string> = new Set([
  'sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'fish', 'csh', 'tcsh', 'ash', 'rbash', 'rzsh', 'rksh', 'pwsh',
  'powershell', 'busybox', 'toybox', 'python', 'python2', 'python3', 'pypy', 'pypy3', 'ipython', 'bpython', 'node', 'nodejs', 'deno', 'bun', 'perl',
  'ruby', 'irb', 'php', 'lua', 'luajit', 'tclsh', 'wish', 'Rscript', 'julia', 'java', 'jshell', 'osascript', 'awk',
  'gawk', 'mawk', 'nawk', 'sed', 'gsed', 'expect', 'erl', 'escript', 'guile', 'tsx', 'ts-node', 'gdb', 'lldb',
  'sqlite3', 'duckdb', 'vi', 'vim', 'nvim', 'emacs', 'ed', 'ex',
]);

/** Words through which a program takes code to run by the usual conventions (`-e`, `-c`, `--eval`, `-eval`). */
const CODE_OPTIONS: ReadonlySet<string> = new Set(['-e', '-c', '-eval', '--eval', '-exec', '--exec', '--execute', '-command', '--command', '-cmd', '--cmd']);
const CODE_OPTION_WITH_VALUE = /^--(?:eval|exec|execute|command|cmd)=/;

/** What splits a word into the words of a command line it may hold (`--shell=/bin/bash`, `'sh -c …'`). */
const INNER_WORD_SEPARATORS = /[\s=;&|()<>`{},:]+/;
const INNER_WORD_SEPARATORS_BUT_BRACES = /[\s=;&|()<>`:]+/;

/**
 * Why a deny rule cannot read what the command `program` (its first word, literal) runs, or undefined: no table of
 * the programs that run what they are given is complete, so a program not known to only read and print (or filter
 * data: `DATA_FILTERS`) is not plain when it is fed a pipe (`… | base64 -d | erl` ran the line decoded), or is given
 * a shell or an interpreter as a word or a word of a line inside one (`fakeroot-sysv -- sh -c '…'`, `--shell=bash`,
 * `/bin/s? -c …`), or an option by which programs usually take code (`erl -eval '…'`, `guile -c '…'`).
 */
export function opaqueProgramReason(command: SimpleCommand, program: string): Reason | undefined {
  const name = commandBaseName(program);
  const known = program === name || program === `/bin/${name}` || program === `/usr/bin/${name}`;
  if (command.inputPiped === true && !(known && DATA_FILTERS.has(name))) {
    return reason(codeWord(name), ' reads what the line pipes into it, and is not known to take it as data only');
  }
  if (known && (DATA_FILTERS.has(name) || PREFIX_PROPOSED_COMMANDS.has(name))) return undefined;
  for (const word of command.words.slice(1)) {
    const text = (word.kind === 'literal' ? word.value : word.text).replace(/["'\\]/g, '');
    if (CODE_OPTIONS.has(text) || CODE_OPTION_WITH_VALUE.test(text)) return reason(codeWord(name), ' is given ', codeWord(text.split('=')[0]!), ', by which programs take code to run');
    const runner =
      text.split(INNER_WORD_SEPARATORS).find((token) => isCodeRunner(commandBaseName(token))) ?? patternNaming(text, CODE_RUNNERS, INNER_WORD_SEPARATORS_BUT_BRACES);
    if (runner !== undefined) return reason(codeWord(commandBaseName(runner)), ', which runs what it is given, stands in a word given to ', codeWord(name));
  }
  return undefined;
}

function isCodeRunner(name: string): boolean {
  return CODE_RUNNERS.has(name) || CODE_RUNNERS.has(name.replace(/-?[0-9][0-9.]*$/, ''));
}
