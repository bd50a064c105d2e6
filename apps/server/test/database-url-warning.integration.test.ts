import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempFolder } from '../src/tools/test-support';

const LAUNCHER = fileURLToPath(new URL('../bin/airlock.mjs', import.meta.url));

/** Runs the launcher with `env` until it exits (the database at port 1 cannot be reached), and gives all it wrote. */
async function launchOnce(env: Record<string, string>, cwd: string): Promise<string> {
  const launcher = spawn(process.execPath, [LAUNCHER, '--port', '0', '--tool-sandbox', 'none'], {
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
