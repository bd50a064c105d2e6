import { commandBaseName } from '@airlock/api';

/** A command's words as deny rules see them: the value where known, undefined where the shell computes it. */
export type ReachableWords = readonly (string | undefined)[];

interface Wrapper {
  /** Options whose value is the next word when not attached (`-u root`, `--user root`). */
  valueOptions?: readonly string[];
  /** Words before the wrapped command that are not options (`timeout 5 rm`). */
  positionals?: number;
  /** Also skips `NAME=value` words (`env A=1 rm`). */
  assignments?: boolean;
  /** An option whose value is a command line (`env -S 'rm -rf /'`). */
  commandLineOptions?: readonly string[];
}

const WRAPPERS = new Map<string, Wrapper>([
  ['sudo', { valueOptions: ['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U', '-T', '--user', '--group', '--host', '--prompt', '--chdir', '--role', '--type', '--other-user', '--command-timeout', '--close-from'] }],
  ['doas', { valueOptions: ['-u', '-C'] }],
  ['env', { valueOptions: ['-u', '-C', '--unset', '--chdir'], assignments: true, commandLineOptions: ['-S', '--split-string'] }],
  ['nice', { valueOptions: ['-n', '--adjustment'] }],
  ['ionice', { valueOptions: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'] }],
  ['nohup', {}],
  ['setsid', {}],
  ['command', {}],
  ['builtin', {}],
  ['exec', { valueOptions: ['-a'] }],
  ['time', { valueOptions: ['-f', '-o', '--format', '--output'] }],
  ['stdbuf', { valueOptions: ['-i', '-o', '-e', '--input', '--output', '--error'] }],
  ['timeout', { valueOptions: ['-s', '-k', '--signal', '--kill-after'], positionals: 1 }],
  ['chroot', { valueOptions: ['--userspec', '--groups'], positionals: 1 }],
  ['taskset', { positionals: 1 }],
  ['flock', { valueOptions: ['-w', '-E', '--timeout', '--conflict-exit-code'], positionals: 1 }],
  ['xargs', { valueOptions: ['-I', '-n', '-L', '-d', '-E', '-P', '-s', '-a', '--delimiter', '--max-args', '--max-lines', '--max-procs', '--max-chars', '--arg-file', '--replace', '--eof'] }],
  ['nsenter', { valueOptions: ['-t', '--target'] }],
  ['unshare', {}],
  ['strace', { valueOptions: ['-o', '-e', '-p', '-s', '-u', '-P'] }],
  ['ltrace', { valueOptions: ['-o', '-e', '-p', '-s', '-u'] }],
  ['unbuffer', {}],
  ['coproc', {}],
  ['busybox', {}],
  ['su', { valueOptions: ['-s', '-g', '-G', '--shell', '--group'], commandLineOptions: ['-c', '--command'], positionals: 1 }],
  ['runuser', { valueOptions: ['-u', '-s', '-g', '-G', '--user', '--shell', '--group'], commandLineOptions: ['-c', '--command'] }],
]);

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish']);
const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const MAX_UNWRAP = 16;

/** What a command runs besides itself: wrapped commands to check as they are, and command lines to parse. */
export interface InnerCommands {
  words: ReachableWords[];
  commandLines: string[];
}

/**
 * The commands that `words` runs through a wrapper (`sudo rm`, `env A=1 rm`, `timeout 5 rm`, `xargs rm`,
 * `find -exec rm {} ;`) and the command lines it hands to a shell (`bash -c '…'`, `eval …`, `watch …`).
 * Option spellings beyond the table above make it find less; this serves deny rules only.
 */
export function innerCommands(words: ReachableWords): InnerCommands {
  const found: InnerCommands = { words: [], commandLines: [] };
  let current: ReachableWords | undefined = words;
  for (let depth = 0; current !== undefined && depth < MAX_UNWRAP; depth += 1) {
    current = unwrapOnce(current, found);
    if (current !== undefined) found.words.push(current);
  }
  return found;
}

function unwrapOnce(words: ReachableWords, found: InnerCommands): ReachableWords | undefined {
  const first = words[0];
  if (first === undefined) return undefined;
  const name = commandBaseName(first);
  const args = words.slice(1);
  if (name === 'eval' || name === 'watch') {
    const known = args.filter((word): word is string => word !== undefined && !(name === 'watch' && word.startsWith('-')));
    if (known.length > 0) found.commandLines.push(known.join(' '));
    return undefined;
  }
  if (SHELLS.has(name)) {
    shellCommandLine(args, found);
    return undefined;
  }
  if (name === 'find') {
    findExec(args, found);
    return undefined;
  }
  const wrapper = WRAPPERS.get(name);
  return wrapper === undefined ? undefined : wrapped(args, wrapper, found);
}

function wrapped(args: ReachableWords, wrapper: Wrapper, found: InnerCommands): ReachableWords | undefined {
  let index = 0;
  let positionals = wrapper.positionals ?? 0;
  while (index < args.length) {
    const word = args[index];
    if (word === '--') {
      index += 1;
      break;
    }
    if (word !== undefined && word.startsWith('-') && word.length > 1) {
      const option = word.startsWith('--') ? word.split('=')[0] ?? word : word;
      const attached = word.startsWith('--') ? word.includes('=') : false;
      if (wrapper.commandLineOptions?.includes(option) === true) {
        const line = attached ? word.slice(option.length + 1) : args[index + 1];
        if (line !== undefined) found.commandLines.push(line);
        index += attached ? 1 : 2;
      } else {
        index += wrapper.valueOptions?.includes(option) === true && !attached ? 2 : 1;
      }
      continue;
    }
    if (wrapper.assignments === true && word !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
      index += 1;
      continue;
    }
    if (positionals > 0) {
      positionals -= 1;
      index += 1;
      continue;
    }
    break;
  }
  const rest = args.slice(index);
  return rest.length === 0 ? undefined : rest;
}

function shellCommandLine(args: ReachableWords, found: InnerCommands): void {
  let takesCommand = false;
  for (const word of args) {
    if (word === undefined) return;
    if (word.startsWith('-') && !word.startsWith('--') && word.length > 1) {
      if (word.slice(1).includes('c')) takesCommand = true;
      continue;
    }
    if (word.startsWith('+') || word.startsWith('--')) continue;
    if (takesCommand) found.commandLines.push(word);
    return;
  }
}

function findExec(args: ReachableWords, found: InnerCommands): void {
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index];
    if (word === undefined || !FIND_EXEC.has(word)) continue;
    const end = args.findIndex((candidate, at) => at > index && (candidate === ';' || candidate === '+'));
    const inner = args.slice(index + 1, end === -1 ? undefined : end);
    if (inner.length > 0) {
      const nested = innerCommands(inner);
      found.words.push(inner, ...nested.words);
      found.commandLines.push(...nested.commandLines);
    }
    if (end === -1) return;
    index = end;
  }
}
