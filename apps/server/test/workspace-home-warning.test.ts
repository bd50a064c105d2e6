import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { homeFolderWarning, loadConfig } from '../src/config';
import { createServices } from '../src/create-services';
import { startServer } from '../src/start-server';

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'airlock-home-warning-')));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

/** What the server prints as it starts with `argv` and `env` (a fake HOME), and what the web page is told. */
async function startUp(argv: readonly string[], env: Record<string, string>, cwd: string) {
  const config = loadConfig(argv, env, cwd);
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const created = await createServices(config, { log, env });
  try {
    const server = await startServer({ config, services: created.services, webRoot: join(cwd, 'no-web-root'), log });
    await server.close();
  } finally {
    await created.close();
  }
  return { lines, shown: created.services.modelInfo().workspaceWarning };
}

const consequence =
  "a call allowed there can change your shell's start-up files (.bashrc, .profile) and SSH keys (.ssh/authorized_keys), " +
  'which run or let others in at your next login, outside any sandbox. Choose a project folder with --workspace';

describe('a workspace that is or holds the home folder', () => {
  it('is warned about at start-up and in the page’s header, whether it is the home folder, holds it, or HOME names it through a link', async () => {
    await using dir = await tempDir();
    const home = join(dir.path, 'home', 'me');
    await mkdir(join(home, 'project'), { recursive: true });
    await symlink(home, join(dir.path, 'home-link'));
    const data = join(dir.path, 'data');
    const cases = [
      [home, { HOME: home }, `The workspace ${home} is your home folder: ${consequence}`],
      [join(dir.path, 'home'), { HOME: home }, `The workspace ${join(dir.path, 'home')} holds your home folder (${home}): ${consequence}`],
      [home, { HOME: join(dir.path, 'home-link') }, `The workspace ${home} is your home folder: ${consequence}`],
    ] as const;
    for (const [workspace, env, warning] of cases) {
      const { lines, shown } = await startUp(['--workspace', workspace, '--data-dir', data, '--tool-sandbox', 'none', '--port', '0'], env, dir.path);
      expect(lines.filter((line) => line.startsWith('Warning: The workspace'))).toStrictEqual([`Warning: ${warning}`]);
      // Said next to the workspace it is about.
      expect(lines[lines.indexOf(`Workspace: ${workspace}`) + 1]).toBe(`Warning: ${warning}`);
      expect(shown).toBe(warning);
    }
  });

  it('is not warned about for a folder inside the home folder', async () => {
    await using dir = await tempDir();
    const home = join(dir.path, 'home');
    await mkdir(join(home, 'project'), { recursive: true });
    const { lines, shown } = await startUp(['--workspace', join(home, 'project'), '--data-dir', join(dir.path, 'data'), '--tool-sandbox', 'none', '--port', '0'], { HOME: home }, dir.path);
    expect(lines).toContain(`Workspace: ${join(home, 'project')}`);
    expect(lines.filter((line) => line.includes('home folder'))).toStrictEqual([]);
    expect(shown).toBeUndefined();
  });

  it('`/` holds every home folder', () => {
    expect(homeFolderWarning('/', '/root')).toBe(`The workspace / holds your home folder (/root): ${consequence}`);
    expect(homeFolderWarning('/srv/project', '/root')).toBeUndefined();
  });
});
