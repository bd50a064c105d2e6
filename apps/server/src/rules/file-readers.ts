import { sourceMayLeadAway } from './copy-sources';
import { readsNameList, sevenZipSwitchPath } from './file-name-lists';
import type { PathFacts } from './outside-workspace';
import { shortOptionPaths } from './short-option-files';
import type { ShellWord } from './shell-word';

/**
 * Programs that print what the files they are named hold, or enough of it to rebuild it (a dump, a diff, the lines
 * that match, the file packed, compressed or encoded), or copy it into pieces or an archive the file tools then read.
 * `ls`, `wc`, `stat` and the checksums show names, sizes and hashes only, and stay covered wherever. sed, awk and their
 * kin are not here: they run what their script says (`e`, `system()`), so an allow rule for one names the whole call.
 */
const FILE_READERS = new Set([
  'cat', 'tac', 'nl', 'head', 'tail', 'less', 'more', 'pr', 'fold', 'fmt', 'cut', 'paste', 'column', 'expand', 'unexpand', 'rev',
  'sort', 'uniq', 'comm', 'join', 'diff', 'sdiff', 'diff3', 'cmp', 'od', 'xxd', 'hexdump', 'hd', 'strings', 'base64', 'base32',
  'basenc', 'grep', 'egrep', 'fgrep', 'rg', 'ag', 'zcat', 'zgrep', 'zless', 'zmore', 'bzcat', 'xzcat', 'zstdcat', 'iconv',
  // Found in review: these printed or packed a file outside under a rule for their name.
  'shuf', 'look', 'tsort', 'ptx', 'bat', 'batcat', 'hexyl', 'uuencode', 'uudecode', 'split', 'csplit', 'xmllint', 'pdftotext',
  'ugrep', 'ack', 'ack-grep', 'colordiff', 'wdiff', 'zdiff', 'zcmp', 'zegrep', 'zfgrep', 'bzgrep', 'bzegrep', 'bzfgrep',
  'bzdiff', 'bzcmp', 'bzless', 'bzmore', 'xzgrep', 'xzegrep', 'xzfgrep', 'xzdiff', 'xzcmp', 'xzless', 'xzmore', 'lzcat',
  'lzgrep', 'lzless', 'lzmore', 'zstdgrep', 'zstdless', 'gzip', 'gunzip', 'pigz', 'unpigz', 'bzip2', 'bunzip2', 'xz', 'unxz',
  'lzma', 'unlzma', 'zstd', 'unzstd', 'lz4', 'brotli', 'zip', 'unzip', 'zipgrep', '7z', '7za', '7zr', 'ar',
  'yq', 'highlight', 'pygmentize', 'source-highlight', 'enscript', 'a2ps', 'glow', 'fx', 'jless', 'csvlook', 'xsv', 'qsv',
  'dasel', 'dos2unix', 'unix2dos',
  // pax and cpio read the names to pack from their input, and write those an archive holds as they are (`NAME_LISTS`).
  'pax', 'cpio',
]);

/**
 * yq's expressions read a file they name (`load("…")`, `load_str`, `load_xml` …, and the lexer's other spellings, its
 * kind before or after, joined or not: `strload`, `str_load`, `loadstr`, `xmlload`, `loadbase64`; found in review), so
 * any word part with `load` before a `(`, a comment between them too, in any case; `eval` runs an expression the
 * call builds from strings, and `--from-file` reads the expression from a file whose text the rule cannot see: each
 * has the call asked about.
 */
const YQ_READS_MORE = /load\w*\s*(?:#[^\n]*\s*)*\(|\beval\b|^--from-file(?:=|$)/i;

/**
 * Programs that name the files they read and write in operands of their own grammar, `name=FILE`, and whose other
 * words are no path: dd reads `if=` (`dd if=~/.ssh/id_rsa` prints it) and writes `of=`, over one of the person's too
 * (`dd if=x of=~/.bashrc`; found in review): writing away is as bad as reading away.
 */
const ASSIGNED_FILES: ReadonlyMap<string, readonly string[]> = new Map([['dd', ['if=', 'of=']]]);

/** Files outside the workspace a write to which keeps nothing and reaches no file of the person's. */
const HARMLESS_OUTPUTS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);

/**
 * Whether a program that prints the files it is named may read one outside the workspace (`cat ~/.ssh/id_rsa`,
 * `grep -r key ~/.aws`, `head ../other/.env`): a rule for it covers what it reads in the workspace, as the file tools
 * read there only, while the sandbox lets a call read what the server's user can. Judged on the words past the rule's
 * own (`words`), each as a copy's source is (a plain glob by its folder), and the value of a `--name=value` option
 * too, and that of a short option that names a file (`short-option-files.ts`); a word that may become any text may
 * become such a path.
 */
export function fileReaderMayReadAway(name: string, words: readonly ShellWord[], facts: PathFacts & { anything: (word: ShellWord) => boolean }): boolean {
  const assigned = ASSIGNED_FILES.get(name);
  if (!FILE_READERS.has(name) && assigned === undefined) return false;
  // Paths as they are now: a command before it on the line that may have changed the file system (`npm test | tail
  // -n 20`) ran under its own rule, and could have read the file itself; its words are often no path at all.
  const asNow = { ...facts, fileSystemChanged: false };
  if (assigned !== undefined) return words.some((word) => facts.anything(word) || assigned.some((operand) => assignedMayLeadAway(word, operand, asNow)));
  if (words.some((word) => readsNameList(name, word.kind === 'literal' ? word.value : word.text.replace(/["']/g, '')))) return true;
  if (name === 'yq' && words.some((word) => YQ_READS_MORE.test(word.kind === 'literal' ? word.value : word.text))) return true;
  // A file a short option names, attached (`pygmentize -o/home/me/.bashrc`, `grep -rf/x`; found in review).
  const literal = words.map((word) => (word.kind === 'literal' ? word.value : undefined));
  if (shortOptionPaths(name, literal).some((value) => sourceMayLeadAway({ kind: 'literal', value }, asNow))) return true;
  return words.some((word) => {
    if (facts.anything(word)) return true;
    if (word.kind !== 'literal' || !word.value.startsWith('-')) return sourceMayLeadAway(word, asNow);
    const switchPath = sevenZipSwitchPath(name, word.value);
    if (switchPath !== undefined) return sourceMayLeadAway({ kind: 'literal', value: switchPath }, asNow);
    const equals = word.value.indexOf('=');
    return equals !== -1 && sourceMayLeadAway({ kind: 'literal', value: word.value.slice(equals + 1) }, asNow);
  });
}

/**
 * Whether `word` is the operand `operand…` (`if=…`, `of=…`) and its value may lie outside the workspace
 * (`HARMLESS_OUTPUTS` aside).
 */
function assignedMayLeadAway(word: ShellWord, operand: string, facts: PathFacts): boolean {
  const text = word.kind === 'literal' ? word.value : word.text;
  if (!text.startsWith(operand)) return false;
  const value = text.slice(operand.length);
  if (word.kind === 'literal' && HARMLESS_OUTPUTS.has(value)) return false;
  return sourceMayLeadAway(word.kind === 'literal' ? { kind: 'literal', value } : { ...word, text: value }, facts);
}
