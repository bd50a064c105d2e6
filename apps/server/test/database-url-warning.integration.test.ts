import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempFolder } from '../src/tools/test-support';

const LAUNCHER = fileURLToPath(new URL('../bin/airlock.mjs', import.meta.url));

/** Runs the launcher with `env` and `args` until it exits (the database at port 1 cannot be reached), and gives all it wrote. */
async function launchOnce(env: Record<string, string>, cwd: string, args: readonly string[] = []): Promise<string> {
  const launcher = spawn(process.execPath, [LAUNCHER, '--port', '0', '--tool-sandbox', 'none', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  launcher.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  launcher.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  await new Promise((resolve) => launcher.once('close', resolve));
  return text;
}

describe('a database URL handed to the launcher in the environment', () => {
  it('with a password, is warned of as readable from the launcher’s environment, pointing to ~/.pgpass; without one, is not', async () => {
    await using folder = await tempFolder();

    const withPassword = await launchOnce({ AIRLOCK_DATABASE_URL: 'postgres://airlock:s3cret-pw@127.0.0.1:1/airlock' }, folder.path);
    const without = await launchOnce({ AIRLOCK_DATABASE_URL: 'postgres://airlock@127.0.0.1:1/airlock' }, folder.path);

    expect(withPassword).toContain('Warning: AIRLOCK_DATABASE_URL came from the environment. A process outside the tool sandbox');
    expect(withPassword).toContain('put it in ~/.pgpass (or the file PGPASSFILE names)');
    expect(without).not.toContain('Warning: AIRLOCK_DATABASE_URL came from the environment');
    expect(without).toContain('airlock: ');
  }, 120_000);
});

describe('a database URL given on the command line', () => {
  // Found in review: every local user reads a command line (/proc/<pid>/cmdline), the launcher's and the server's.
  it('with a password, is warned of as readable by every user, pointing to ~/.pgpass, without the password; without one, is not', async () => {
    await using folder = await tempFolder();
    await using workspace = await tempFolder();
    const args = (url: string) => ['--workspace', workspace.path, '--database-url', url];

    const withPassword = await launchOnce({}, folder.path, args('postgres://airlock:s3cret-pw@127.0.0.1:1/airlock'));
    const without = await launchOnce({}, folder.path, args('postgres://airlock@127.0.0.1:1/airlock'));

    expect(withPassword).toContain('Warning: the URL given with --database-url holds a password, and every user of this machine can read command lines');
    expect(withPassword).toContain('put it in ~/.pgpass (or the file PGPASSFILE names)');
    expect(withPassword).not.toContain('s3cret-pw');
    expect(without).not.toContain('--database-url holds a password');
    expect(without).toContain('airlock: ');
  }, 120_000);
});
