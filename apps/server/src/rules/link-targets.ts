import path from 'node:path';
import { longOptionNamed } from './command-wrappers';
import { mayBeFolder, mayLeadUnderGit, mayNameOutside, seenOutside, type PathFacts } from './outside-workspace';
import type { ShellWord } from './shell-word';

/** How a program that makes links reads its options (GNU coreutils: options anywhere before `--`). */
interface LinkMaker {
  /** Whether it makes links without being told to: `ln`, `link`; `cp` only with `-s` or `-l`. */
  always: boolean;
  /** Short options that make symbolic links (`ln -s`, `cp -s`), hard links (`cp -l`), and those that take a value. */
  symbolic: string;
  hard: string;
  valued: string;
  /** `ln -r`: the link's text is worked out from the target as named from the working folder. */
  relative: string;
  /** `-t DIR`, and `-T` (the last operand is the link itself, never a folder to make it in). */
  targetDirectory: string;
  noTargetDirectory: string;
  /** Every long option, which GNU getopt also takes by any unambiguous start (`--sym`, `--target=…`). */
  long: ReadonlyMap<string, 'symbolic' | 'hard' | 'relative' | 'target-directory' | 'no-target-directory' | 'valued' | 'flag'>;
  /** `link` takes exactly a file and the link's name, never a folder to make it in. */
  twoOperands?: boolean;
}

const LN_LONG = new Map([
  ['--symbolic', 'symbolic'], ['--relative', 'relative'], ['--target-directory', 'target-directory'],
  ['--no-target-directory', 'no-target-directory'], ['--suffix', 'valued'], ['--backup', 'flag'], ['--directory', 'flag'],
  ['--force', 'flag'], ['--interactive', 'flag'], ['--logical', 'flag'], ['--no-dereference', 'flag'], ['--physical', 'flag'],
  ['--verbose', 'flag'], ['--help', 'flag'], ['--version', 'flag'],
] as const);

const CP_LONG = new Map([
  ['--symbolic-link', 'symbolic'], ['--link', 'hard'], ['--target-directory', 'target-directory'],
  ['--no-target-directory', 'no-target-directory'], ['--suffix', 'valued'], ['--sparse', 'valued'], ['--no-preserve', 'valued'],
  ['--archive', 'flag'], ['--attributes-only', 'flag'], ['--backup', 'flag'], ['--copy-contents', 'flag'], ['--debug', 'flag'],
  ['--dereference', 'flag'], ['--force', 'flag'], ['--interactive', 'flag'], ['--no-clobber', 'flag'], ['--no-dereference', 'flag'],
  ['--preserve', 'flag'], ['--parents', 'flag'], ['--recursive', 'flag'], ['--reflink', 'flag'], ['--remove-destination', 'flag'],
  ['--strip-trailing-slashes', 'flag'], ['--update', 'flag'], ['--verbose', 'flag'], ['--one-file-system', 'flag'],
  ['--context', 'flag'], ['--keep-directory-symlink', 'flag'], ['--help', 'flag'], ['--version', 'flag'],
] as const);

/** The programs of our tables that make links, by name. */
const LINK_MAKERS = new Map<string, LinkMaker>([
  ['ln', { always: true, symbolic: 's', hard: '', valued: 'St', relative: 'r', targetDirectory: 't', noTargetDirectory: 'T', long: LN_LONG }],
  ['link', { always: true, symbolic: '', hard: '', valued: '', relative: '', targetDirectory: '', noTargetDirectory: '', long: new Map(), twoOperands: true }],
  ['cp', { always: false, symbolic: 's', hard: 'l', valued: 'St', relative: '', targetDirectory: 't', noTargetDirectory: 'T', long: CP_LONG }],
]);

interface LinkCall {
  makesLinks: boolean;
  symbolic: boolean;
  relative: boolean;
  noTargetDirectory: boolean;
  targetDirectory: string | undefined;
  operands: string[];
}

/**
 * Whether a command that makes links (`ln`, `link`, `cp -s`, `cp -l`) may make one that leads out of the workspace or
 * into a `.git` folder of it: a link is a path a later command follows (`ln -s ../other t2`, then `pytest -q` collects
 * `t2` and runs the other folder's `conftest.py`; `ln -s ../other/.git .git`, then `git status` runs that
 * repository's `core.fsmonitor`), so its target is judged as a path, where the kernel will look it up: a symbolic
 * link's relative target from the folder the link is in, a hard link's (and `ln -r`'s) from the working folder, an
 * absolute one as it is. It must lead inside and not into `.git`, by its text and, given the lookups, by the links on
 * its way; so must the link's own name. A word the shell expands is not judged: the call is asked about (`anything`:
 * one that may become any text, which for `cp` may be `-s`).
 */
export function linkMayLeadAway(name: string, args: readonly ShellWord[], facts: PathFacts & { anything: (word: ShellWord) => boolean }): boolean {
  const maker = LINK_MAKERS.get(name);
  if (maker === undefined) return false;
  // A word that may become any text may become `-s` for cp too.
  if (args.some(facts.anything)) return true;
  const literal = args.flatMap((word) => (word.kind === 'literal' ? [word.value] : []));
  const call = readLinkCall(literal, maker);
  if (!call.makesLinks) return false;
  if (literal.length !== args.length) return true;
  return linksOf(call, maker, facts).some(({ target, folder, link }) => {
    const from = call.symbolic && !call.relative && !target.startsWith('/') ? joined(folder, target) : target;
    if (leadsAway(from, facts) || leadsAway(link, facts)) return true;
    return call.symbolic && seenOutside({ kind: 'literal', value: target }, facts, climbs(storedText(call, target, folder)));
  });
}

/**
 * The text a symbolic link keeps: its target as written, or, with `ln -r`, the way from the link's folder to it.
 * A link is moved or copied with that text (`mv`, `cp -P`/`-a`), and read again from where it lands: `ln -s ../other
 * t/o` leads inside, and once `mv t/o o` has moved it, `o` leads to the other folder. So a relative text that climbs
 * (`..`) is asked about, wherever it leads from where it is made; an absolute one leads where it says from anywhere.
 */
function storedText(call: LinkCall, target: string, folder: string): string {
  return call.relative && !target.startsWith('/') ? path.posix.relative(path.posix.normalize(folder), path.posix.normalize(target)) : target;
}

function climbs(text: string): boolean {
  return !text.startsWith('/') && text.split('/').includes('..');
}

function leadsAway(value: string, facts: PathFacts): boolean {
  const word: ShellWord = { kind: 'literal', value };
  if (mayNameOutside(word, facts)) return true;
  return path.posix.normalize(value).split('/').some((part) => part.toLowerCase() === '.git') || mayLeadUnderGit(word, facts);
}

function joined(folder: string, name: string): string {
  return folder === '.' ? name : `${folder}/${name}`;
}

/**
 * Each link the call may make: its target as written, the folder it is made in and its name (relative to the working
 * folder or absolute). A last operand that may be a folder (`mayBeFolder`) is judged both as the link's name and as
 * the folder the link is made in.
 */
function linksOf(call: LinkCall, maker: LinkMaker, facts: PathFacts): { target: string; folder: string; link: string }[] {
  const { operands, targetDirectory } = call;
  const inFolder = (folder: string) => (target: string) => ({ target, folder, link: joined(folder, path.posix.basename(target)) });
  if (targetDirectory !== undefined) return operands.map(inFolder(targetDirectory));
  const [first, second] = operands;
  if (first === undefined) return [];
  if (second === undefined) return [inFolder('.')(first)];
  const last = operands.at(-1)!;
  const targets = operands.slice(0, -1);
  const asFolder = targets.map(inFolder(last));
  if (operands.length > 2) return asFolder;
  const asName = { target: first, folder: path.posix.dirname(last), link: last };
  if (maker.twoOperands === true || call.noTargetDirectory || !mayBeFolder(last, facts)) return [asName];
  return [asName, ...asFolder];
}

function readLinkCall(words: readonly string[], maker: LinkMaker): LinkCall {
  const call: LinkCall = { makesLinks: maker.always, symbolic: false, relative: false, noTargetDirectory: false, targetDirectory: undefined, operands: [] };
  const set = (kind: string, value: string | undefined) => {
    if (kind === 'symbolic') call.symbolic = call.makesLinks = true;
    else if (kind === 'hard') call.makesLinks = true;
    else if (kind === 'relative') call.relative = true;
    else if (kind === 'no-target-directory') call.noTargetDirectory = true;
    else if (kind === 'target-directory') call.targetDirectory = value === undefined || value === '' ? '.' : value;
  };
  let ended = false;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index]!;
    if (ended || !word.startsWith('-') || word === '-') {
      call.operands.push(word);
    } else if (word === '--') {
      ended = true;
    } else if (word.startsWith('--')) {
      const [written = '', ...value] = word.split('=');
      const option = longOptionNamed(written, maker.long.keys());
      const kind = option === undefined ? 'flag' : maker.long.get(option)!;
      const takesValue = kind === 'valued' || kind === 'target-directory';
      const given = value.length > 0 ? value.join('=') : takesValue ? words[(index += 1)] : undefined;
      set(kind, given);
    } else {
      for (let at = 1; at < word.length; at += 1) {
        const letter = word[at]!;
        const kind = letterKind(letter, maker);
        if (maker.valued.includes(letter)) {
          const attached = word.slice(at + 1);
          set(kind, attached === '' ? words[(index += 1)] : attached);
          break;
        }
        set(kind, undefined);
      }
    }
  }
  return call;
}

function letterKind(letter: string, maker: LinkMaker): string {
  const kinds: [string, string][] = [
    [maker.symbolic, 'symbolic'], [maker.hard, 'hard'], [maker.relative, 'relative'],
    [maker.targetDirectory, 'target-directory'], [maker.noTargetDirectory, 'no-target-directory'],
  ];
  return kinds.find(([letters]) => letters !== '' && letters.includes(letter))?.[1] ?? 'flag';
}
