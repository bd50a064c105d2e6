type ListWord = (word: string) => boolean;

/** A group of short options (`-cw`, `-it`): not a long option, not `-` alone. */
const shortGroup = (word: string) => /^-[^-]/.test(word);

/** xz's `--files` and `--files0`: the list in the file after `=` or, with none, from the input. */
const XZ_LIST: ListWord = (word) => /^--files0?(?:=|$)/.test(word);
/** zstd's `--filelist FILE` (its own parser takes any word that starts so, the file after `=` or in the next word). */
const ZSTD_LIST: ListWord = (word) => word.startsWith('--filelist');
/**
 * sort's `--files0-from=FILE` (any start of it past `--fi`, which is also `--field-separator`'s): the names of the files
 * it prints, from FILE or, given `-`, its input.
 */
const SORT_LIST: ListWord = (word) => {
  const long = word.split('=', 1)[0]!;
  return long.length > 4 && '--files0-from'.startsWith(long);
};
/** binutils' response files: `@FILE` holds more arguments, the files to read among them. */
const RESPONSE_FILE: ListWord = (word) => word.startsWith('@');
/** 7-Zip's `@listfile` operand, and its switches that take a list file (`-i@list`, `-ir@…`, `-ai@…`), in any case. */
const SEVEN_ZIP_LIST: ListWord = (word) => word.startsWith('@') || /^-a?[ix](?:r[-0]?)?@/i.test(word);
/** ack's `--files-from=FILE` (Getopt::Long takes any unambiguous start of it), and `-x`, the list from its input. */
const ACK_LIST: ListWord = (word) => {
  const long = word.split('=', 1)[0]!;
  return (word.startsWith('--') && long.length > 2 && '--files-from'.startsWith(long)) || (shortGroup(word) && word.includes('x'));
};
/**
 * pax writing or copying (`-w`, `-rw`) reads the names from its input when it is given none, and reading (`-r`)
 * writes the archive's names as they are, absolute ones too: only listing does neither.
 */
const PAX_LIST: ListWord = (word) => shortGroup(word) && /[rw]/.test(word);
/**
 * cpio's `-o` and `-p` read the names from its input, and `-i` writes the archive's names as they are, absolute ones
 * too: only listing (`-t`, `-it`) does neither. Its long options are asked about, as any start of one may be either.
 */
const CPIO_LIST: ListWord = (word) => (shortGroup(word) && (/[op]/.test(word) || (word.includes('i') && !word.includes('t')))) || (word.startsWith('--') && word !== '--');

/** The binary tools that read an `@FILE` of more arguments (binutils, elfutils' kin, LLVM's). */
const BINARY_TOOLS = [
  'strings', 'ar', 'ranlib', 'nm', 'objdump', 'readelf', 'objcopy', 'strip', 'size', 'addr2line', 'c++filt', 'elfedit',
  'llvm-objdump', 'llvm-readelf', 'llvm-readobj', 'llvm-nm', 'llvm-strings', 'llvm-objcopy', 'llvm-strip', 'llvm-size',
  'llvm-addr2line', 'llvm-ar', 'llvm-ranlib', 'llvm-cxxfilt',
];

/**
 * Programs that read the names of the files to read from a file or their input, names no word of the call shows
 * (`xz -c --files=names.txt | xz -dc` printed the key names.txt named; `echo ~/.ssh/id_rsa | xz -c --files`): a word
 * that asks for such a list has the call asked about, wherever the list lies. tar's `-T` is judged with its other
 * words (`copy-sources.ts`).
 */
const NAME_LISTS: ReadonlyMap<string, ListWord> = new Map([
  ...['xz', 'unxz', 'xzcat', 'lzma', 'unlzma', 'lzcat'].map((xz): [string, ListWord] => [xz, XZ_LIST]),
  ...['zstd', 'unzstd', 'zstdcat'].map((zstd): [string, ListWord] => [zstd, ZSTD_LIST]),
  // binutils and their LLVM kin read an `@FILE` of arguments, and name each word of it in an error when it names no
  // file: `nm @~/.ssh/id_rsa`, `size @…` printed the key a word at a time, `c++filt @…` printed it whole.
  ...BINARY_TOOLS.map((binutil): [string, ListWord] => [binutil, RESPONSE_FILE]),
  ...['7z', '7za', '7zr'].map((sevenZip): [string, ListWord] => [sevenZip, SEVEN_ZIP_LIST]),
  ...['ack', 'ack-grep'].map((ack): [string, ListWord] => [ack, ACK_LIST]),
  ['sort', SORT_LIST],
  ['pax', PAX_LIST],
  ['cpio', CPIO_LIST],
]);

/**
 * Whether `word` (its quotes dropped) of a call of the program `name` has it read a list of names (`NAME_LISTS`), or
 * more arguments from a file.
 */
export function readsNameList(name: string, word: string): boolean {
  return NAME_LISTS.get(name)?.(word) === true;
}

/**
 * The path a 7-Zip include or exclude switch names after `!` (`-i!~/.ssh/id_rsa`, `-ir!…`, `-xr0!…`, `-ai!x.7z`), or
 * the folder `-o` extracts into, attached (`-o~/.ssh` writes there, over the person's files too), read in any case,
 * to be judged as an operand is; undefined for any other word or program.
 */
export function sevenZipSwitchPath(name: string, word: string): string | undefined {
  return NAME_LISTS.get(name) === SEVEN_ZIP_LIST ? /^-(?:a?[ix](?:r[-0]?)?!|o)(.*)$/is.exec(word)?.[1] : undefined;
}
