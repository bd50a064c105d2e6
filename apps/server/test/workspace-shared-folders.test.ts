import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'airlock-shared-folders-')));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

function problem(attempt: () => unknown): string {
  try {
    attempt();
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const consequence =
  "a call would see it read-write, with other programs' files and Unix sockets (tmux, ssh-agent, X11, D-Bus: through one a call runs commands outside the sandbox). Choose a project folder of its own with --workspace";

describe('a workspace that is, holds or lies in a folder the machine shares', () => {
  it('is refused at start-up, naming the folder and why: /tmp, /, /var/tmp, /dev/shm and the other system folders', async () => {
    await using dir = await tempDir();
    const shared = ['/tmp', '/var/tmp', '/dev/shm', '/run', '/proc', '/sys', '/dev', '/etc', '/usr', '/var'].filter((folder) => existsSync(folder));
    expect(shared).toContain('/tmp');
    for (const folder of shared) {
      expect(problem(() => loadConfig(['--workspace', folder, '--data-dir', join(dir.path, 'data')], {}, dir.path))).toBe(
        `--workspace: "${folder}" is ${folder}, a folder the whole machine shares: ${consequence}`,
      );
    }
    // `/` holds Airlock's own files as well, which is said first.
    expect(problem(() => loadConfig(['--workspace', '/', '--data-dir', join(dir.path, 'data')], {}, dir.path))).toMatch(/^--workspace: "\/" /);
  });

  it('refuses `npm start` typed in /tmp, where the default workspace is the folder it was typed in', async () => {
    await using dir = await tempDir();
    expect(problem(() => loadConfig(['--data-dir', join(dir.path, 'data')], { HOME: dir.path, INIT_CWD: '/tmp' }, dir.path))).toBe(
      `the workspace: "/tmp" is /tmp, a folder the whole machine shares: ${consequence}`,
    );
  });

  it('refuses a workspace inside a folder of the system or of Unix sockets (/run/…, /dev/…)', async () => {
    await using dir = await tempDir();
    const inside = ['/dev/shm', '/run/lock', '/proc/self', '/sys/kernel'].filter((folder) => existsSync(folder));
    expect(inside.length).toBeGreaterThan(0);
    for (const folder of inside) {
      const real = await realpath(folder);
      expect(problem(() => loadConfig(['--workspace', folder, '--data-dir', join(dir.path, 'data')], {}, dir.path))).toMatch(
        new RegExp(`^--workspace: "${real.replaceAll('/', '\\/')}" (is|is inside) `),
      );
    }
  });

  it("refuses a workspace that is or holds the server's temporary folder (TMPDIR), where ssh-agent puts its socket", async () => {
    await using dir = await tempDir();
    const temp = join(dir.path, 'project', '.tmp');
    await mkdir(temp, { recursive: true });
    for (const workspace of [temp, join(dir.path, 'project')]) {
      const how = workspace === temp ? `is ${temp}` : `holds ${temp}`;
      expect(problem(() => loadConfig(['--workspace', workspace, '--data-dir', join(dir.path, 'data')], { TMPDIR: temp }, dir.path))).toBe(
        `--workspace: "${workspace}" ${how}, the server's temporary folder (TMPDIR), where programs keep files and sockets: ${consequence}`,
      );
    }
  });

  it('takes a project folder inside /tmp or beside the temporary folder', async () => {
    await using dir = await tempDir();
    const project = join(dir.path, 'project');
    await mkdir(project);
    expect(loadConfig(['--workspace', project, '--data-dir', join(dir.path, 'data')], { TMPDIR: join(dir.path, 'tmp') }, dir.path).workspace).toBe(project);
  });
});
