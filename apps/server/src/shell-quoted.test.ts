import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { shellQuoted } from './shell-quoted';
import { tempFolder } from './tools/test-support';

/** What the shell makes of `word` pasted as the argument of printf, and whether pasting it ran anything. */
function pasted(shell: 'sh' | 'bash', word: string, cwd: string) {
  const run = spawnSync(shell, ['-c', `printf '%s' ${shellQuoted(word)}`], { cwd, encoding: 'utf8' });
  return { word: run.stdout, status: run.status, ranSomething: existsSync(path.join(cwd, 'pwned')) };
}

/** Names a call may choose, each meant to run `touch pwned` when pasted. */
const WORDS = [
  '/w/x$(touch pwned)',
  '/w/x`touch pwned`',
  "/w/it's; touch pwned; '",
  "/w/a\\';touch pwned;#",
  '/w/a b "c" $HOME',
  '/w/*',
  '/w/x\\y',
  '/w/é😀',
  '/w/a\nb; touch pwned',
  '/w/a\tb',
  '/w/a\rb',
  '/w/txt.\u202Eexe',
  '/w/a\u2028b',
  "/w/x\u200B'; touch pwned; #",
  "/w/a\x1b[2Kb'$(touch pwned)",
  '/w/\x7f\u0085',
];

describe('shellQuoted', () => {
  test('plain paths are left as they are', () => {
    expect(['/home/me/.bash_history', 'a-b_c.d@e%f+g=h:i,j'].map(shellQuoted)).toStrictEqual(['/home/me/.bash_history', 'a-b_c.d@e%f+g=h:i,j']);
  });

  test('a name a call chose is one word to bash, read back as it was, on one line, every character seen', async () => {
    await using folder = await tempFolder();
    for (const word of WORDS) {
      expect({ word, unseen: /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(shellQuoted(word)) }).toStrictEqual({ word, unseen: false });
      expect(pasted('bash', word, folder.path)).toStrictEqual({ word, status: 0, ranSomething: false });
    }
  });

  test('pasted into POSIX sh, which knows no $\'…\', each is still one word and runs nothing', async () => {
    await using folder = await tempFolder();
    for (const word of WORDS) {
      const run = pasted('sh', word, folder.path);
      expect({ word, status: run.status, ranSomething: run.ranSomething }).toStrictEqual({ word, status: 0, ranSomething: false });
    }
  });

  test('a word without a backslash or an unseen character reads back in POSIX sh too', async () => {
    await using folder = await tempFolder();
    for (const word of ['/w/x$(touch pwned)', '/w/x`touch pwned`', "/w/it's; touch pwned; '", '/w/a b "c" $HOME', '/w/*', '/w/é😀']) {
      expect(pasted('sh', word, folder.path)).toStrictEqual({ word, status: 0, ranSomething: false });
    }
  });
});
