import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';
import { startOrExit } from './support/server-process';
import { tempDir } from './support/temp-dir';

function problem(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('the data folder and the workspace', () => {
  it('refuses a data folder that is the workspace, however it is named', async () => {
    await using dir = await tempDir('airlock-data-folder-');
    const ws = join(dir.path, 'ws');
    await mkdir(ws);
    await symlink(ws, join(dir.path, 'alias'));
    const because =
      `is the workspace: the file tools would list and replace the database, and with it every rule. ` +
      'Give each a folder of its own (--data-dir, --workspace)';
    for (const [argv, env, source] of [
      [['--workspace', ws, '--data-dir', ws], {}, '--data-dir'],
      [['--workspace', 'ws', '--data-dir', 'alias'], {}, '--data-dir'],
      [['--workspace', ws], { AIRLOCK_DATA_DIR: `${ws}/` }, 'AIRLOCK_DATA_DIR'],
    ] as const) {
      const dataDir = resolve(dir.path, argv[3] ?? env.AIRLOCK_DATA_DIR ?? '');
      expect(problem(() => loadConfig(argv, env, dir.path))).toBe(`${source}: "${dataDir}" ${because}`);
    }
  });

  it('refuses a workspace that is the default data folder, naming the workspace', async () => {
    await using home = await tempDir('airlock-data-folder-');
    const dataDir = join(home.path, '.local', 'share', 'airlock');
    await mkdir(dataDir, { recursive: true });
    expect(problem(() => loadConfig(['--workspace', dataDir], { HOME: home.path }, home.path))).toBe(
      `--workspace: "${dataDir}" is the data folder: the file tools would list and replace the database, and with it every rule. ` +
        'Give each a folder of its own (--data-dir, --workspace)',
    );
  });

  it('refuses a data folder that is a file, or inside one, saying so rather than to check the folder exists', async () => {
    await using dir = await tempDir('airlock-data-folder-');
    const ws = join(dir.path, 'ws');
    await mkdir(ws);
    const file = join(dir.path, 'airlock.db');
    await writeFile(file, '');
    expect(problem(() => loadConfig(['--workspace', ws, '--data-dir', file], {}, dir.path))).toBe(`--data-dir: "${file}" is a file, not a folder: give the folder to keep the database in (it is made when missing)`);
    expect(problem(() => loadConfig(['--workspace', ws], { AIRLOCK_DATA_DIR: join(file, 'data') }, dir.path))).toBe(
      `AIRLOCK_DATA_DIR: "${join(file, 'data')}" is inside "${file}", a file, not a folder: give the folder to keep the database in (it is made when missing)`,
    );
  });

  it('takes a data folder inside the workspace (hidden from the tools), or around it', async () => {
    await using dir = await tempDir('airlock-data-folder-');
    const ws = join(dir.path, 'ws');
    await mkdir(ws);
    expect(loadConfig(['--workspace', ws, '--data-dir', join(ws, '.airlock-data')], {}, dir.path)).toMatchObject({ workspace: ws, dataDir: join(ws, '.airlock-data') });
    expect(loadConfig(['--workspace', ws, '--data-dir', dir.path], {}, dir.path)).toMatchObject({ workspace: ws, dataDir: dir.path });
  });
});

describe('the default data folder and fallback workspace when HOME is set but empty, or relative', () => {
  // Found in review: `HOME=` (a service file's blank, `env HOME=`) made the data folder `.local/share/airlock` under
  // the folder Airlock was started from, and a start from elsewhere found none of its chats.
  it('are in the account’s home folder, not under the start folder', async () => {
    await using dir = await tempDir('airlock-data-folder-');
    const account = join(dir.path, 'account');
    const ws = join(dir.path, 'ws');
    await mkdir(ws);
    for (const home of ['', '.', 'relative/home']) {
      expect(loadConfig(['--workspace', ws], { HOME: home }, dir.path, undefined, account).dataDir).toBe(join(account, '.local', 'share', 'airlock'));
    }
    // Started from Airlock's own folder, the workspace falls back to ~/airlock-workspace, made there too.
    const checkout = fileURLToPath(new URL('../../..', import.meta.url));
    expect(loadConfig(['--data-dir', join(dir.path, 'data')], { HOME: '' }, checkout, undefined, account).workspace).toBe(join(account, 'airlock-workspace'));
  });

  it('are refused naming HOME when the account has no home folder either', async () => {
    await using dir = await tempDir('airlock-data-folder-');
    const ws = join(dir.path, 'ws');
    await mkdir(ws);
    expect(problem(() => loadConfig(['--workspace', ws], { HOME: '' }, dir.path, undefined, null))).toBe(
      'HOME: is empty, and this account has no home folder: set HOME to a full path, or give the data folder with --data-dir (AIRLOCK_DATA_DIR)',
    );
    expect(loadConfig(['--workspace', ws, '--data-dir', join(dir.path, 'data')], { HOME: '' }, dir.path, undefined, null).dataDir).toBe(join(dir.path, 'data'));
  });
});

describe('a data folder in a folder of the kernel', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('stops the real server at once, naming it (creating it spun forever: mkdir in /proc answers that /proc is missing)', async () => {
    await using dir = await tempDir('airlock-data-folder-');
    await mkdir(join(dir.path, 'ws'));
    for (const dataDir of ['/proc/airlock-data', '/sys/airlock-data/chats']) {
      const { exitCode, output } = await startOrExit(['--workspace', join(dir.path, 'ws'), '--data-dir', dataDir], {}, cleanups);

      expect(exitCode).toBe(1);
      expect(output).toContain(`airlock: --data-dir: "${dataDir}" is inside ${dataDir.split('/')[1] === 'proc' ? '/proc' : '/sys'}, a folder of the kernel, where no database can be kept\n`);
    }
  }, 150_000);
});

describe('a path starting with "~", which only a shell expands (a file of variables does not)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('stops the real server naming it, rather than keep the chats in a folder named ~ where it was started', async () => {
    await using dir = await tempDir('airlock-data-folder-');
    await mkdir(join(dir.path, 'ws'));
    await mkdir(join(dir.path, 'started-here'));
    for (const [args, env, source] of [
      [[], { AIRLOCK_DATA_DIR: '~/.airlock' }, 'AIRLOCK_DATA_DIR: "~/.airlock"'],
      [['--mcp-config', '~/mcp.json'], {}, '--mcp-config: "~/mcp.json"'],
    ] as const) {
      const { exitCode, output } = await startOrExit(['--workspace', join(dir.path, 'ws'), ...args], env, cleanups, { cwd: join(dir.path, 'started-here') });

      expect(exitCode).toBe(1);
      expect(output).toContain(`airlock: ${source} starts with "~", which only a shell turns into the home folder: give the full path\n`);
      expect(await readdir(join(dir.path, 'started-here'))).toStrictEqual([]);
    }
  }, 150_000);
});
