import { sourceMayLeadAway } from './copy-sources';
import type { PathFacts } from './outside-workspace';
import type { ShellWord } from './shell-word';

/**
 * Programs that print what the files they are named hold, or enough of it to rebuild it (a dump, a diff, the lines
 * that match). `ls`, `wc`, `stat` and the checksums show names, sizes and hashes only, and stay covered wherever.
 */
const FILE_READERS = new Set([
  'cat', 'tac', 'nl', 'head', 'tail', 'less', 'more', 'pr', 'fold', 'fmt', 'cut', 'paste', 'column', 'expand', 'unexpand', 'rev',
  'sort', 'uniq', 'comm', 'join', 'diff', 'sdiff', 'diff3', 'cmp', 'od', 'xxd', 'hexdump', 'hd', 'strings', 'base64', 'base32',
  'basenc', 'grep', 'egrep', 'fgrep', 'rg', 'ag', 'zcat', 'zgrep', 'zless', 'zmore', 'bzcat', 'xzcat', 'zstdcat', 'iconv',
]);

/**
 * Whether a program that prints the files it is named may read one outside the workspace (`cat ~/.ssh/id_rsa`,
 * `grep -r key ~/.aws`, `head ../other/.env`): a rule for it covers what it reads in the workspace, as the file tools
 * read there only, while the sandbox lets a call read what the server's user can. Judged on the words past the rule's
 * own (`words`), each as a copy's source is (a plain glob by its folder), and the value of a `--name=value` option
 * too; a word that may become any text may become such a path.
 */
export function fileReaderMayReadAway(name: string, words: readonly ShellWord[], facts: PathFacts & { anything: (word: ShellWord) => boolean }): boolean {
  if (!FILE_READERS.has(name)) return false;
  // Paths as they are now: a command before it on the line that may have changed the file system (`npm test | tail
  // -n 20`) ran under its own rule, and could have read the file itself; its words are often no path at all.
  const asNow = { ...facts, fileSystemChanged: false };
  return words.some((word) => {
    if (facts.anything(word)) return true;
    if (word.kind !== 'literal' || !word.value.startsWith('-')) return sourceMayLeadAway(word, asNow);
    const equals = word.value.indexOf('=');
    return equals !== -1 && sourceMayLeadAway({ kind: 'literal', value: word.value.slice(equals + 1) }, asNow);
  });
}
