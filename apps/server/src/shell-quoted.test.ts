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

describe('shellQuoted', () => {
  test('plain paths are left as they are', () => {
    expect(['/home/me/.bash_history', 'a-b_c.d@e%f+g=h:i,j'].map(shellQuoted)).toStrictEqual(['/home/me/.bash_history', 'a-b_c.d@e%f+g=h:i,j']);
  });

  test('a name a call chose is one word to the shell, and runs nothing', async () => {
    await using folder = await tempFolder();
    const words = ['/w/x$(touch pwned)', '/w/x`touch pwned`', "/w/it's; touch pwned; '", '/w/a b "c"', '/w/*', '/w/~x', '/w/x\\y', '/w/é😀'];
    for (const word of words) expect(pasted('sh', word, folder.path)).toStrictEqual({ word, status: 0, ranSomething: false });
  });

  test('characters that would not show as themselves are escaped, on one line, and read back as they were', async () => {
    await using folder = await tempFolder();
    const words = ['/w/a\nb; touch pwned', '/w/a\tb', '/w/a\rb', '/w/txt.\u202Eexe', '/w/a\u200Bb', '/w/a\u2028b', "/w/a\x1b[2Kb'$(touch pwned)", '/w/\x7f\u0085'];
    for (const word of words) {
      const quoted = shellQuoted(word);
      expect({ word, shown: /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(quoted) }).toStrictEqual({ word, shown: false });
      expect(pasted('bash', word, folder.path)).toStrictEqual({ word, status: 0, ranSomething: false });
    }
  });
});
