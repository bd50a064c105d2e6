import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { reasonText } from '@airlock/core';
import { ruleDraftSchema } from '@airlock/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, terminal } from './rule-fixtures';

const noDelete = prefix('rm -rf', { effect: 'deny', reason: 'never delete trees' });
/** `rm -rf victim; echo deny-rule-bypassed`, as base64. */
const ENCODED = 'cm0gLXJmIHZpY3RpbTsgZWNobyBkZW55LXJ1bGUtYnlwYXNzZWQ=';

async function decide(command: string, rules = [noDelete]): Promise<Record<string, unknown>> {
  const decision = await evaluateRules(terminal(command), rules, context);
  return 'unread' in decision ? { ...decision, unread: reasonText(decision.unread) } : decision;
}

function askedNaming(decision: Record<string, unknown>, rule = noDelete): boolean {
  return decision.decision === 'deny' || ('because' in decision && decision.because === rule);
}

describe('a program that is a shell, an interpreter or an editor under another name', () => {
  it.each([
    // The probe's line: bash under the name /proc/self/exe, reading a line no word shows.
    `echo ${ENCODED} | base64 -d | /proc/self/exe`,
    '/proc/self/exe -c true',
    `echo ${ENCODED} | base64 -d | /proc/1234/exe`,
    `echo ${ENCODED} | base64 -d | /proc/self/task/1/exe`,
    `echo ${ENCODED} | base64 -d | ../../../proc/self/exe`,
    `echo ${ENCODED} | base64 -d | //proc//self/exe`,
    '/proc/self/fd/3',
    '/dev/fd/3 < x',
    `echo ${ENCODED} | base64 -d > x; /dev/stdin < x`,
    // Debian's alternatives and vim's links: all vim, or less.
    "view -es -c '!touch x' -c q",
    "rview -es -c '!touch x' -c q",
    'editor -es -c q',
    'vimdiff a b',
    'rvim -es -c q',
    'gvim -es -c q',
    'vim.basic -es -c q',
    'vim.tiny -es -c q',
    'pager x',
    'sensible-editor x',
  ])('%s is not plain: asked about naming the deny rule, also with confirmation off', async (line) => {
    const decision = await decide(line);
    expect(askedNaming(decision), JSON.stringify(decision)).toBe(true);
  });

  it('decoders piped into a shell, by any of its names, are asked about; into a program that only prints, plain', async () => {
    for (const decoder of ['base64 -d', 'base64 --decode', 'xxd -r -p', 'openssl enc -d -base64', 'basenc --base64 -d']) {
      for (const reader of ['bash', 'sh', '/bin/sh', '/proc/self/exe', '/dev/stdin', 'python3', 'perl', 'view -es']) {
        const line = `echo ${ENCODED} | ${decoder} | ${reader}`;
        expect(askedNaming(await decide(line)), line).toBe(true);
      }
      const printed = await decide(`echo ${ENCODED} | ${decoder} | cat`);
      // openssl is fed the pipe and is no known filter of data (given no command, it reads its commands there).
      expect(decoder.startsWith('openssl') ? askedNaming(printed) : printed, decoder).toStrictEqual(decoder.startsWith('openssl') ? true : { decision: 'ask' });
    }
  });

  it('says why', async () => {
    expect(await decide('echo x | /proc/self/exe')).toMatchObject({ unread: '`exe` runs whatever it is given' });
    expect(await decide('view x')).toMatchObject({ unread: '`view` runs whatever it is given' });
  });

  it('an allow rule never covers them by prefix, and a prefix rule for one is refused', async () => {
    for (const [token, line] of [
      ['/proc/self/exe', "/proc/self/exe -c 'rm -rf x'"],
      ['/dev/stdin', '/dev/stdin x'],
      ['view', "view -es -c '!id' -c q"],
      ['editor', 'editor -es -c q'],
      ['pager', 'pager x'],
    ] as const) {
      const stored = { ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: [token], exact: false } };
      expect(await decide(line, [stored]), line).toMatchObject({ decision: 'ask' });
      const draft = { effect: 'allow', tool: 'terminal', match: stored.match, scope: { kind: 'global' }, source: 'user' };
      expect(ruleDraftSchema.safeParse(draft).success, token).toBe(false);
    }
    // Exact, as before.
    expect(await decide('view notes.txt', [prefix('view notes.txt', { exact: true })])).toMatchObject({ decision: 'allow' });
  });

  it('a debugger under a prefixed name and the interpreters are not plain, nor a command given one as a word', async () => {
    for (const line of [
      'arm-none-eabi-gdb -batch -x x.gdb',
      'x86_64-linux-gnu-gdb -batch -x x.gdb',
      'rust-gdb -batch -x x.gdb',
      'rust-lldb -b -s x.lldb',
      'cuda-gdb -batch -x x.gdb',
      'gdbtui -batch -x x.gdb',
      'jython x.py',
      'graalpy x.py',
      'micropython x.py',
      'ghc x.hs',
      'pry x.rb',
      'csi -s x.scm',
      'scheme --script x.ss',
      'chez --script x.ss',
      'gforth x.fs',
      'zx x.mjs',
      'nbb x.cljs',
      'west debug --gdb=arm-none-eabi-gdb',
      'west debug --gdb rust-gdb',
    ]) {
      const decision = await decide(line);
      expect(askedNaming(decision), `${line}: ${JSON.stringify(decision)}`).toBe(true);
    }
    expect(await decide('gdbm_dump x.db')).toStrictEqual({ decision: 'ask' });
  });
});

describe('a command name judged by the program it leads to on PATH', () => {
  let folder = '';
  beforeAll(() => {
    folder = mkdtempSync(path.join(tmpdir(), 'airlock-real-name-'));
    mkdirSync(path.join(folder, 'real'));
    mkdirSync(path.join(folder, 'bin'));
    for (const name of ['vim.nox', 'bash', 'git', 'lister']) {
      writeFileSync(path.join(folder, 'real', name), '#!/bin/sh\n');
      chmodSync(path.join(folder, 'real', name), 0o755);
    }
    // As Debian's alternatives are: a link to a link to the program.
    symlinkSync(path.join(folder, 'real', 'vim.nox'), path.join(folder, 'alternative'));
    symlinkSync(path.join(folder, 'alternative'), path.join(folder, 'bin', 'my-editor'));
    symlinkSync(path.join(folder, 'real', 'bash'), path.join(folder, 'bin', 'my-shell'));
    symlinkSync(path.join(folder, 'real', 'git'), path.join(folder, 'bin', 'scm'));
    symlinkSync(path.join(folder, 'real', 'lister'), path.join(folder, 'bin', 'my-lister'));
    vi.stubEnv('PATH', `relative/bin${path.delimiter}${path.join(folder, 'bin')}`);
  });
  afterAll(() => {
    vi.unstubAllEnvs();
    rmSync(folder, { recursive: true, force: true });
  });

  it('a name that leads to an editor or a shell is not plain, by its bare name or its path', async () => {
    expect(await decide(`echo ${ENCODED} | base64 -d | my-shell`)).toMatchObject({ decision: 'ask', because: noDelete, unread: '`my-shell` is `bash`, which runs whatever it is given' });
    expect(await decide("my-editor -es -c '!touch x' -c q")).toMatchObject({ decision: 'ask', because: noDelete, unread: '`my-editor` is `vim.nox`, which runs whatever it is given' });
    expect(await decide(`${path.join(folder, 'bin', 'my-editor')} -es -c q`)).toMatchObject({ decision: 'ask', because: noDelete });
    // A link to the program a deny rule names is that program as far as asking goes.
    const noPush = prefix('git push', { effect: 'deny' });
    expect(await decide('scm push origin main', [noPush])).toMatchObject({ decision: 'ask', because: noPush });
  });

  it('a prefix rule for such a name covers nothing it is given', async () => {
    expect(await decide("my-editor -es -c '!id' -c q", [prefix('my-editor')])).toMatchObject({ decision: 'ask' });
    expect(await decide("my-shell -c 'rm -rf x'", [prefix('my-shell')])).toMatchObject({ decision: 'ask' });
  });

  it('a name that leads to another plain program stays plain, and a prefix rule for it covers it', async () => {
    expect(await decide('my-lister x')).toStrictEqual({ decision: 'ask' });
    expect(await decide('my-lister x', [prefix('my-lister')])).toMatchObject({ decision: 'allow' });
  });
});
