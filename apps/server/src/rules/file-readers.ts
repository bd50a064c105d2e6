import { sourceMayLeadAway } from './copy-sources';
import { readsNameList, sevenZipSwitchPath } from './file-name-lists';
import { pathsAsFound, type PathFacts } from './outside-workspace';
import { printingOptionMayReadAway } from './printing-options';
import { shortOptionPaths, shortOptionValuesOf } from './short-option-files';
import type { ShellWord } from './shell-word';

/**
 * Programs that print what the files they are named hold, or enough of it to rebuild it (a dump, a diff, the lines
 * that match, the file packed, compressed or encoded), or copy it into pieces or an archive the file tools then read.
 * `ls`, `wc`, `du`, `date`, `stat` and the checksums show names, sizes, times and hashes only, and stay covered wherever
 * but for their options that print a file they read (`date -f`, `wc --files0-from`: `printing-options.ts`). sed, awk and their
 * kin are not here: they run what their script says (`e`, `system()`), so an allow rule for one names the whole call.
 * uniq, xxd and ptx also write an output operand (`output-operands.ts`).
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
  'yq', 'highlight', 'pygmentize', 'source-highlight', 'enscript', 'a2ps', 'glow', 'jless', 'csvlook', 'xsv', 'dasel',
  'dos2unix', 'unix2dos',
  // ugrep+ is ugrep with filters for documents and images (`ug` and `ug+`, which load a `.ugrep` config, are exact-only).
  'ugrep+',
  // pax and cpio read the names to pack from their input, and write those an archive holds as they are (`NAME_LISTS`).
  'pax', 'cpio',
  // The binary tools dump or copy any file (`objdump -s -b binary ~/.ssh/id_rsa`, `objcopy -I binary -O binary …`),
  // or the symbols and sections of a program elsewhere. `size` shows sizes only and stays covered wherever.
  'objdump', 'readelf', 'nm', 'objcopy', 'strip', 'addr2line', 'elfedit', 'llvm-objdump', 'llvm-readelf', 'llvm-readobj',
  'llvm-nm', 'llvm-strings', 'llvm-objcopy', 'llvm-strip', 'llvm-addr2line', 'eu-readelf', 'eu-nm', 'eu-objdump',
  'eu-strip', 'eu-addr2line',
]);

/**
 * objdump's `-S`/`--source`/`--source-comment` print the lines of the source files the object names, wherever they
 * lie (an object of the workspace may name `~/.ssh/id_rsa` as its source; checked with the real program): asked
 * about, in a group too (`-dS`; after a letter that takes a value the rest is that value), or any start of the long
 * ones. The value-taking letters are GNU objdump's, which llvm-objdump shares.
 */
const SOURCE_PRINTERS = new Set(['objdump', 'llvm-objdump', 'eu-objdump']);
const printsSources = (word: string) => /^--so/.test(word) || (/^-[^-]/.test(word) && /^-[^bjmMIPWE]*S/.test(word));
/** A word the shell computes that may become an option: a glob or a variable at its start (`*` may match `-S`). */
const mayBecomeOption = (text: string) => /^["']?[-*?[$]/.test(text);

/**
 * objcopy's `name=FILE` values (`--add-section .k=FILE` reads FILE into the output, `--update-section` too,
 * `--dump-section .text=FILE` writes there), the word after the option or attached after its own `=`: each text
 * after an `=` is judged as a path.
 */
const SECTION_FILES = new Set(['objcopy', 'llvm-objcopy']);

/**
 * yq's expressions read a file they name (`load("…")`, `load_str`, `load_xml` …, and the lexer's other spellings, its
 * kind before or after, joined or not: `strload`, `str_load`, `loadstr`, `xmlload`, `loadbase64`; found in review), so
 * any word part with `load` before a `(`, a comment between them too, in any case; `eval` runs an expression the
 * call builds from strings, and `--from-file` reads the expression from a file whose text the rule cannot see; `-s`
 * / `--split-exp` writes each result to a file named by an expression, anywhere (found in review), also after yq's
 * flags in a group (`-Ps`): each has the call asked about.
 */
const YQ_READS_MORE = /load\w*\s*(?:#[^\n]*\s*)*\(|\beval\b|^--from-file(?:=|$)|^--split-exp/i;
const YQ_SPLITS = /^-[CMeiNn0PrvVjh]*s/;

/**
 * xmllint's options that have it load files the document names, anywhere, and print them or their lines in its errors
 * (checked with the real program): its entities (`--noent`, and the canonical forms, which substitute them), XInclude
 * elements (`--xinclude`, `--noxincludenode`), its DTD (`--loaddtd`, `--dtdattr`, `--valid`, `--postvalid`) or one
 * given (`--dtdvalid`, `--dtdvalidfpi` through the catalogs), the catalogs `--catalogs` names, and a schema given, which
 * includes others (`--schema`, `--relaxng`, `--schematron`); `--shell` reads commands from its input (`load`, `write`).
 * xmllint takes each after one dash or two, by its whole name only, and has no `--`.
 */
const XMLLINT_LOADS = new Set([
  'noent', 'c14n', 'c14n11', 'exc-c14n', 'xinclude', 'noxincludenode', 'loaddtd', 'dtdattr', 'valid', 'postvalid', 'dtdvalid',
  'dtdvalidfpi', 'catalogs', 'schema', 'relaxng', 'schematron', 'shell',
]);
const xmllintLoads = (word: string) => XMLLINT_LOADS.has(word.replace(/^--?/, '')) && word.startsWith('-');

/**
 * highlight's language and theme definitions are Lua it runs, found by name in its data folder, out of which a name
 * with a `/` climbs (`-S ../../../../x` ran `x.lang`, `-s …` a `.theme`; checked with highlight 3.41), and highlight 4
 * loads the file a `-S`/`--syntax`/`--src-lang` value names, when there is one and the name has a `.`: such a value is
 * asked about, as is one with a `/` for the options that name a language or theme otherwise (`--syntax-by-name` by
 * its extension, `--start-nested`, `--force=`, `--base16=`). Its parser takes any unambiguous start of a long option,
 * and the values of the first four from the next word too. `-s`/`--style` loads any file its value names in
 * highlight 4: a code-running option (`match-command.ts`).
 */
const HIGHLIGHT_DEFINITIONS: readonly { option: string; nextWord: boolean; loadsFile: boolean }[] = [
  { option: '--syntax', nextWord: true, loadsFile: true },
  { option: '--src-lang', nextWord: true, loadsFile: true },
  { option: '--syntax-by-name', nextWord: true, loadsFile: false },
  { option: '--start-nested', nextWord: true, loadsFile: false },
  { option: '--force', nextWord: false, loadsFile: false },
  { option: '--base16', nextWord: false, loadsFile: false },
];

/** Whether a call of highlight given `words` (undefined: one the shell computes) may load a definition elsewhere. */
function highlightLoadsDefinition(words: readonly (string | undefined)[]): boolean {
  const risky = (value: string | undefined, loadsFile: boolean) => value === undefined || value.includes('/') || (loadsFile && value.includes('.'));
  if (shortOptionValuesOf('highlight', 'S', words).some((value) => risky(value, true))) return true;
  return words.some((word, index) => {
    const long = word === undefined ? null : /^(--[^=]+)(?:=(.*))?$/s.exec(word);
    if (long === null) return false;
    const [, typed = '', attached] = long;
    return HIGHLIGHT_DEFINITIONS.some(({ option, nextWord, loadsFile }) => {
      if (!option.startsWith(typed)) return false;
      if (attached !== undefined) return risky(attached, loadsFile);
      return nextWord && index + 1 < words.length && risky(words[index + 1], loadsFile);
    });
  });
}

/**
 * Programs that name the files they read and write in operands of their own grammar, `name=FILE`, and whose other
 * words are no path: dd reads `if=` (`dd if=~/.ssh/id_rsa` prints it) and writes `of=`, over one of the person's too
 * (`dd if=x of=~/.bashrc`; found in review): writing away is as bad as reading away.
 */
const ASSIGNED_FILES: ReadonlyMap<string, readonly string[]> = new Map([['dd', ['if=', 'of=']]]);

/** Files outside the workspace a write to which keeps nothing and reaches no file of the person's. */
const HARMLESS_OUTPUTS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);

/**
 * Programs that read none of the files they are named but write each (`tee ~/.bashrc`; found in review), and whose
 * options take no value: an operand must lie inside, as dd's `of=` (`HARMLESS_OUTPUTS` aside).
 */
const WRITERS = new Set(['tee']);

/**
 * Whether a program that prints the files it is named may read one outside the workspace (`cat ~/.ssh/id_rsa`,
 * `grep -r key ~/.aws`, `head ../other/.env`): a rule for it covers what it reads in the workspace, as the file tools
 * read there only, while the sandbox lets a call read what the server's user can. Judged on the words past the rule's
 * own (`words`), each as a copy's source is (a plain glob by its folder), one that starts with a dash too (the value
 * of the option before it), and the value of a `--name=value` option too, and that of a short option that names a
 * file (`short-option-files.ts`); a word that may become any text may become such a path. Each is judged as the
 * line will find it: after a command on the line that may have left a link no rule saw (`tar -xf vendor.tar && cat
 * link`), as one that may lead anywhere (`pathsAsFound`). A writer's files (`WRITERS`) are judged alike.
 */
export function fileReaderMayReadAway(name: string, words: readonly ShellWord[], facts: PathFacts & { anything: (word: ShellWord) => boolean }): boolean {
  const assigned = ASSIGNED_FILES.get(name);
  const unquoted = (word: ShellWord) => (word.kind === 'literal' ? word.value : word.text.replace(/["']/g, ''));
  if (!FILE_READERS.has(name) && assigned === undefined && !WRITERS.has(name)) return words.some((word) => readsNameList(name, unquoted(word))) || printingOptionMayReadAway(name, words, facts);
  const asFound = pathsAsFound(facts);
  if (WRITERS.has(name)) return writtenMayLeadAway(words, asFound);
  if (assigned !== undefined) return words.some((word) => facts.anything(word) || assigned.some((operand) => assignedMayLeadAway(word, operand, asFound)));
  if (words.some((word) => readsNameList(name, unquoted(word)))) return true;
  if (SOURCE_PRINTERS.has(name) && words.some((word) => (word.kind === 'literal' ? printsSources(word.value) : mayBecomeOption(word.text)))) return true;
  if (name === 'yq' && words.some((word) => YQ_READS_MORE.test(unquoted(word)) || YQ_SPLITS.test(unquoted(word)))) return true;
  if (name === 'xmllint' && words.some((word) => xmllintLoads(unquoted(word)))) return true;
  // A file a short option names, attached (`pygmentize -o/home/me/.bashrc`, `grep -rf/x`; found in review).
  const literal = words.map((word) => (word.kind === 'literal' ? word.value : undefined));
  if (name === 'highlight' && highlightLoadsDefinition(literal)) return true;
  if (shortOptionPaths(name, literal).some((value) => sourceMayLeadAway({ kind: 'literal', value }, asFound))) return true;
  return words.some((word) => {
    if (facts.anything(word)) return true;
    // Every word is judged as a path, one that starts with a dash too: an operand after `--` (`cat --
    // -x/../../../etc/shadow`), or the value of the option before it, which takes the next word whatever it starts with
    // (`xmllint --output -x/../../out.xml`, `grep --file -/../../x`; found in review).
    if (sourceMayLeadAway(word, asFound)) return true;
    if (word.kind !== 'literal' || !word.value.startsWith('-')) return false;
    const switchPath = sevenZipSwitchPath(name, word.value);
    if (switchPath !== undefined) return sourceMayLeadAway({ kind: 'literal', value: switchPath }, asFound);
    const equals = word.value.indexOf('=');
    return equals !== -1 && sourceMayLeadAway({ kind: 'literal', value: word.value.slice(equals + 1) }, asFound);
  }) || (SECTION_FILES.has(name) && words.some((word) => word.kind === 'literal' && sectionFileMayLeadAway(word.value, asFound)));
}

/** Whether a file a writer (`WRITERS`) is named may lie outside the workspace: each word but its options before `--`. */
function writtenMayLeadAway(words: readonly ShellWord[], facts: PathFacts & { anything: (word: ShellWord) => boolean }): boolean {
  const end = words.findIndex((word) => word.kind === 'literal' && word.value === '--');
  return words.some((word, index) => {
    if (facts.anything(word)) return true;
    if (word.kind === 'literal' && (HARMLESS_OUTPUTS.has(word.value) || (word.value.startsWith('-') && (end === -1 || index <= end)))) return false;
    return sourceMayLeadAway(word, facts);
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

/** Whether a text after an `=` in `word` (`.k=/home/me/x`, `--dump-section=.text=x`) may lie outside the workspace. */
function sectionFileMayLeadAway(word: string, facts: PathFacts): boolean {
  return word.split('=').slice(1).some((value) => sourceMayLeadAway({ kind: 'literal', value }, facts));
}
