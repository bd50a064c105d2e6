import { longOptionNamed } from './command-wrappers';
import type { FoldersWalked } from './links-below';
import { mayNameOutside, treeMayHoldLinkOut, type PathFacts } from './outside-workspace';
import type { ShellWord } from './shell-word';

/**
 * What an option of a copying program does with the words it takes: `target` names the folder to copy into (`-t
 * DIR`), `no-target` makes the last operand the copy's own name (`-T`), `directories` makes every operand a folder to
 * make (`install -d`), `read` reads the file or folder its value names (`rsync --files-from=…`, `--link-dest=…`),
 * `filter` is a rule that may read a file (`rsync -f 'merge FILE'`), `valued` takes a value that names no file read,
 * `optional` takes one only attached (`--backup=numbered`), `dereference` follows the links below a source (`cp -L`,
 * `rsync -L`), `flag` takes none.
 */
type OptionKind = 'target' | 'no-target' | 'directories' | 'read' | 'filter' | 'valued' | 'optional' | 'dereference' | 'flag';

/** How a program that copies or moves files reads its words (GNU getopt or popt: options anywhere before `--`). */
interface Copier {
  /** Short options by letter; a letter not listed takes no value. */
  short: ReadonlyMap<string, OptionKind>;
  /** Every long option (GNU getopt and popt also take any unambiguous start: `--target=…`); one not listed is a flag. */
  long: ReadonlyMap<string, OptionKind>;
}

const COMMON_LONG: [string, OptionKind][] = [
  ['--target-directory', 'target'], ['--no-target-directory', 'no-target'], ['--suffix', 'valued'], ['--backup', 'optional'],
  ['--context', 'optional'], ['--update', 'optional'],
];

const COPIERS = new Map<string, Copier>([
  ['cp', {
    short: new Map([['S', 'valued'], ['t', 'target'], ['T', 'no-target'], ['L', 'dereference']]),
    long: new Map([...COMMON_LONG, ['--sparse', 'valued'], ['--no-preserve', 'valued'], ['--preserve', 'optional'], ['--reflink', 'optional'], ['--dereference', 'dereference']]),
  }],
  ['mv', {
    short: new Map([['S', 'valued'], ['t', 'target'], ['T', 'no-target']]),
    long: new Map(COMMON_LONG),
  }],
  ['install', {
    short: new Map([['g', 'valued'], ['m', 'valued'], ['o', 'valued'], ['S', 'valued'], ['t', 'target'], ['T', 'no-target'], ['d', 'directories']]),
    long: new Map([...COMMON_LONG, ['--group', 'valued'], ['--mode', 'valued'], ['--owner', 'valued'], ['--strip-program', 'valued'], ['--directory', 'directories']]),
  }],
  // rsync reads its options with popt; those that take a value as the next word, and those whose value names a file
  // or folder it reads (a list of files, filter rules, a folder it compares with or links to, a batch).
  ['rsync', {
    short: new Map([['e', 'valued'], ['B', 'valued'], ['f', 'filter'], ['T', 'valued'], ['M', 'valued'], ['@', 'valued'], ['L', 'dereference'], ['k', 'dereference']]),
    long: new Map<string, OptionKind>([
      ['--files-from', 'read'], ['--exclude-from', 'read'], ['--include-from', 'read'], ['--compare-dest', 'read'], ['--copy-dest', 'read'],
      ['--link-dest', 'read'], ['--read-batch', 'read'], ['--password-file', 'read'], ['--filter', 'filter'],
      ['--copy-links', 'dereference'], ['--copy-unsafe-links', 'dereference'], ['--copy-dirlinks', 'dereference'],
      ...[
        '--rsh', '--rsync-path', '--block-size', '--temp-dir', '--remote-option', '--modify-window', '--exclude', '--include',
        '--max-size', '--min-size', '--max-delete', '--max-alloc', '--partial-dir', '--backup-dir', '--suffix', '--chmod', '--chown',
        '--usermap', '--groupmap', '--timeout', '--contimeout', '--port', '--address', '--sockopts', '--log-file', '--log-file-format',
        '--out-format', '--bwlimit', '--stop-after', '--stop-at', '--write-batch', '--only-write-batch', '--protocol', '--iconv',
        '--checksum-choice', '--cc', '--compress-choice', '--zc', '--compress-level', '--zl', '--skip-compress', '--info', '--debug',
        '--outbuf', '--checksum-seed', '--copy-as', '--config', '--dparam', '--early-input',
      ].map((option): [string, OptionKind] => [option, 'valued']),
    ]),
  }],
]);

/** What a call of a copying program reads, as its words say. */
interface CopyCall {
  /** The operands, in order: the sources and, unless `target` or `directories`, the destination last. */
  operands: ShellWord[];
  /** Values of options that name a file or folder read (`--files-from=…`, a filter's merge file). */
  read: ShellWord[];
  target: boolean;
  directories: boolean;
  /** It follows the links below its sources (`cp -rL`, `rsync -L`), copying what they lead to. */
  dereference: boolean;
}

/**
 * Whether a copy (`cp`, `mv`, `install`, `rsync`) may read a source outside the workspace: a copy's source is a path
 * the call reads, and what it brings in runs later (`cp ../other/conftest.py .`, then `pytest -q` runs it), so each
 * source, and each file an option names to read (`rsync --files-from=…`, `--link-dest=…`), must stay inside by its
 * text and its links, as any path a command is given (`mayNameOutside`). The destination is where it writes, which a
 * rule for the program covers. A word that may become any text (`anything`) may become an option that reads
 * elsewhere: the call is asked about. A copy that follows the links below its sources (`cp -rL`, `rsync -aL`) reads
 * through them, `node_modules`' and `.git`'s too: given `facts.holdsLinkOut`, no source may hold one that leads out
 * (`treeMayHoldLinkOut`, walking every folder).
 */
export function copySourceMayLeadAway(name: string, args: readonly ShellWord[], facts: PathFacts & { anything: (word: ShellWord) => boolean }): boolean {
  if (name === 'tar' || name === 'bsdtar') return tarMayReadAway(args, facts);
  const copier = COPIERS.get(name);
  if (copier === undefined) return false;
  if (args.some(facts.anything)) return true;
  const call = readCopyCall(args, copier);
  const sources = call.directories ? [] : call.target || call.operands.length < 2 ? call.operands : sourcesBeforeLast(call.operands);
  if (sources.some((word) => sourceMayLeadAway(word, facts)) || call.read.some((word) => mayNameOutside(word, facts))) return true;
  return call.dereference && sources.some((word) => treeMayHoldLinkOut(word, facts, 'every'));
}

/**
 * Whether a source may lead out of the workspace (`mayNameOutside`). A glob with links looked up counts as leading
 * anywhere there, since its matches are not listed; here, a plain one (no variable, `~`, braces, `..` or glob part
 * that may match a dot name: `src/*.ts`, `tests/**` with `globstar`) is judged by the folder before its first glob
 * character instead: every match lies below that folder, so none leads out while the folder leads inside and holds
 * no link that leads out (`treeMayHoldLinkOut`, walking `folders`). Once the line may have moved the shell or changed
 * the file system, as `mayNameOutside` judges it.
 */
export function sourceMayLeadAway(word: ShellWord, facts: PathFacts, folders: FoldersWalked = 'collected'): boolean {
  const text = word.kind === 'dynamic' ? word.text.replace(/["']/g, '') : '';
  const plainGlob =
    word.kind === 'dynamic' && word.variables.length === 0 && facts.holdsLinkOut !== undefined && facts.fileSystemChanged !== true &&
    facts.leftWorkspace !== true && !/[~{]/.test(text) && !text.includes('..') && !text.split('/').some((part) => part.startsWith('.') && /[*?[]/.test(part));
  if (!plainGlob) return mayNameOutside(word, facts);
  const glob = text.search(/[*?[]/);
  const folder = glob === -1 ? text : text.slice(0, text.lastIndexOf('/', glob) + 1);
  const named: ShellWord = { kind: 'literal', value: folder === '' ? '.' : folder.replace(/(.)\/+$/, '$1') };
  return mayNameOutside(named, facts) || treeMayHoldLinkOut(named, facts, folders);
}

/** tar's short options that take a value, attached or as the next word (GNU tar). */
const TAR_VALUED = new Set(['b', 'C', 'f', 'F', 'g', 'H', 'I', 'K', 'L', 'N', 'T', 'V', 'X']);

/**
 * Whether a tar call may read outside the workspace: what it archives (`tar -cf x.tar -C ../other conftest.py`,
 * then `tar -xf x.tar` and `pytest -q` ran the other folder's code), the folder it changes to, a list of names it
 * reads (`-T`), the archive it extracts. Its words are many-shaped (old-style bundles, `-C` between members, values
 * attached or not), so every word is judged as a path, and so is the value attached to an option that takes one
 * (`-C../other`, `--directory=../other`): any that may lead out, by its text and its links, has the call asked
 * about. That asks for an archive written outside too (`tar -cf ../x.tar src`), which a rule for `tar` covered.
 * With `-h`/`--dereference` it archives what the links below its members lead to, `node_modules`' and `.git`'s
 * too (`tar -chf o.tar src` packed `src/vendor/s.txt` through `src/vendor -> ../../outside`; found in
 * review): then each word, and each value attached to an option (`-Csrc`), must hold no link that leads out
 * (`treeMayHoldLinkOut`, walking every folder). A member after `-C` lies below the folder `-C` names, whose walk
 * covers it.
 */
function tarMayReadAway(args: readonly ShellWord[], facts: PathFacts & { anything: (word: ShellWord) => boolean }): boolean {
  if (args.some(facts.anything) || tarReadsNameList(args)) return true;
  const dereference = tarDereferences(args);
  const judge = (word: ShellWord) => mayNameOutside(word, facts) || (dereference && treeMayHoldLinkOut(word, facts, 'every'));
  return args.some((word) => {
    // A word that starts with a dash is judged as a path too: it may be the value of the option before it, which tar
    // takes whatever it starts with (`tar -cf -x/../../x.tar src` wrote above the workspace; found in review).
    if (word.kind === 'literal' && word.value.startsWith('-') && word.value !== '-' ? mayNameOutside(word, facts) : judge(word)) return true;
    if (word.kind !== 'literal' || !word.value.startsWith('-') || word.value === '-') return false;
    const text = word.value;
    if (text.startsWith('--')) {
      const equals = text.indexOf('=');
      return equals !== -1 && judge({ kind: 'literal', value: text.slice(equals + 1) });
    }
    for (let at = 1; at < text.length; at += 1) {
      if (!TAR_VALUED.has(text[at]!)) continue;
      const attached = text.slice(at + 1);
      return attached !== '' && judge({ kind: 'literal', value: attached });
    }
    return false;
  });
}

/**
 * Whether a tar call follows the links below its members: `-h` in a group before a letter that takes a value (in an
 * old-style first bundle, anywhere), or `--dereference` by any start of it. A word the shell computes may be either.
 */
function tarDereferences(args: readonly ShellWord[]): boolean {
  return args.some((word, index) => {
    if (word.kind !== 'literal') return /^["']?[-*?[$]/.test(word.text);
    const text = word.value;
    if (text.startsWith('--')) return text.length > 2 && !text.includes('=') && '--dereference'.startsWith(text);
    if (index > 0 && !text.startsWith('-')) return false;
    for (const letter of text.replace(/^-/, '')) {
      if (letter === 'h') return true;
      if (TAR_VALUED.has(letter) && text.startsWith('-')) return false;
    }
    return false;
  });
}

/**
 * Whether a tar call reads the names to archive from a list (`-T names.txt`, `--files-from=-`, old-style `cfT x.tar
 * -`), in a file or its input: `echo ../other/conftest.py | tar -cf x.tar -T -` archives what no word of the call
 * names, and so does a list in the workspace that names a file outside (found in review: `tar -cf - -T names.txt`).
 */
function tarReadsNameList(args: readonly ShellWord[]): boolean {
  const text = (word: ShellWord | undefined) => (word?.kind === 'literal' ? word.value : undefined);
  const filesFrom = (name: string) => name.length > '--file'.length && '--files-from'.startsWith(name);
  for (let index = 0; index < args.length; index += 1) {
    const word = text(args[index]);
    if (word === undefined || word === '-' || word === '--') continue;
    if (word.startsWith('--')) {
      if (filesFrom(word.split('=', 1)[0]!)) return true;
      continue;
    }
    // A first word without a dash is an old-style bundle, whose letters take their values from the words after it.
    const oldStyle = index === 0 && !word.startsWith('-');
    if (!oldStyle && !word.startsWith('-')) continue;
    // In a group with a dash, the first letter that takes a value takes the rest (`-fT` names the archive `T`).
    for (let at = oldStyle ? 0 : 1; at < word.length; at += 1) {
      const letter = word[at]!;
      if (letter === 'T') return true;
      if (TAR_VALUED.has(letter) && !oldStyle) break;
    }
  }
  return false;
}

/** Every operand but the last, and the last too when the shell may expand it into several words (a glob, braces). */
function sourcesBeforeLast(operands: readonly ShellWord[]): ShellWord[] {
  const last = operands.at(-1)!;
  return last.kind === 'dynamic' && /[*?[{]/.test(last.text) ? [...operands] : operands.slice(0, -1);
}

function readCopyCall(words: readonly ShellWord[], copier: Copier): CopyCall {
  const call: CopyCall = { operands: [], read: [], target: false, directories: false, dereference: false };
  const take = (kind: OptionKind, value: ShellWord | undefined) => {
    if (kind === 'target') call.target = true;
    else if (kind === 'directories') call.directories = true;
    else if (kind === 'dereference') call.dereference = true;
    else if (kind === 'read' && value !== undefined) call.read.push(value);
    else if (kind === 'filter' && value !== undefined) {
      const file = filterFile(value);
      if (file !== undefined) call.read.push(file);
    }
  };
  const takesValue = (kind: OptionKind) => kind === 'target' || kind === 'read' || kind === 'filter' || kind === 'valued';
  let ended = false;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index]!;
    const text = word.kind === 'literal' ? word.value : undefined;
    if (ended || text === undefined || !text.startsWith('-') || text === '-') {
      call.operands.push(word);
    } else if (text === '--') {
      ended = true;
    } else if (text.startsWith('--')) {
      const [written = '', ...value] = text.split('=');
      const option = longOptionNamed(written, copier.long.keys());
      const kind = option === undefined ? 'flag' : copier.long.get(option)!;
      const given: ShellWord | undefined =
        value.length > 0 ? { kind: 'literal', value: value.join('=') } : takesValue(kind) ? words[(index += 1)] : undefined;
      take(kind, given);
    } else {
      for (let at = 1; at < text.length; at += 1) {
        const kind = copier.short.get(text[at]!) ?? 'flag';
        if (takesValue(kind)) {
          const attached = text.slice(at + 1);
          take(kind, attached === '' ? words[(index += 1)] : { kind: 'literal', value: attached });
          break;
        }
        take(kind, undefined);
      }
    }
  }
  return call;
}

/**
 * The file an rsync filter rule reads, if any: `merge FILE`, `. FILE`, `dir-merge FILE`, `: FILE` (also with
 * modifiers, `merge,- FILE`, and `_` for the blank). A word the shell expands counts as one that may.
 */
function filterFile(rule: ShellWord): ShellWord | undefined {
  if (rule.kind !== 'literal') return rule;
  const match = /^(?:\.|:|merge|dir-merge)[^ _]*[ _](.*)$/i.exec(rule.value);
  return match === null ? undefined : { kind: 'literal', value: match[1]!.trim() };
}
