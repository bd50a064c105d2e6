import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { homeFolderWarning, loadConfig } from '../src/config';
import { createServices } from '../src/create-services';
import { startServer } from '../src/start-server';
import { tempDir } from './support/temp-dir';

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
  'which run or let others in at your next login, outside any sandbox, and the package caches and settings (~/.cargo, ' +
  '~/.m2, ~/go, ~/.config) that programs your rules allow take code from. Choose a project folder with --workspace';

function problem(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return 'no error';
}

describe('a workspace that is or holds the home folder', () => {
  // Found in review: such a workspace was taken with a warning, and each program that reads code or settings from the
  // home folder (package caches, gpg's and nmap's files, a build tool's plugins) was one more gap in the rule check.
  it('is refused unless asked for, by flag or variable, naming the flag, whether it is the home folder, holds it, or HOME names it through a link', async () => {
    await using dir = await tempDir('airlock-home-warning-');
    const home = join(dir.path, 'home', 'me');
    await mkdir(home, { recursive: true });
    await symlink(home, join(dir.path, 'home-link'));
    const data = join(dir.path, 'data');
    const refusal = ', or give --allow-home-workspace (AIRLOCK_ALLOW_HOME_WORKSPACE=1) to take it all the same';
    const cases = [
      [['--workspace', home], { HOME: home }, `--workspace: The workspace ${home} is your home folder: ${consequence}${refusal}`],
      [['--workspace', join(dir.path, 'home')], { HOME: home }, `--workspace: The workspace ${join(dir.path, 'home')} holds your home folder (${home}): ${consequence}${refusal}`],
      [['--workspace', home], { HOME: join(dir.path, 'home-link') }, `--workspace: The workspace ${home} is your home folder: ${consequence}${refusal}`],
      [[], { HOME: home, AIRLOCK_WORKSPACE: home }, `AIRLOCK_WORKSPACE: The workspace ${home} is your home folder: ${consequence}${refusal}`],
      // `npm start` typed in the home folder takes it as the default workspace.
      [[], { HOME: home, INIT_CWD: home }, `the workspace: The workspace ${home} is your home folder: ${consequence}${refusal}`],
      [['--workspace', home], { HOME: home, AIRLOCK_ALLOW_HOME_WORKSPACE: '0' }, `--workspace: The workspace ${home} is your home folder: ${consequence}${refusal}`],
    ] as const;
    for (const [argv, env, refused] of cases) {
      expect(problem(() => loadConfig([...argv, '--data-dir', data], env, dir.path))).toBe(refused);
    }
    // Found in review: HOME pointed elsewhere, relative or empty, the account's own home was taken. The shell at the
    // next login reads the account's home (the password database's), whatever HOME said when the server started.
    await mkdir(join(dir.path, 'elsewhere'));
    for (const env of [{ HOME: join(dir.path, 'elsewhere') }, { HOME: 'me' }, { HOME: '' }, {}]) {
      expect(problem(() => loadConfig(['--workspace', home, '--data-dir', data], env, join(dir.path, 'home'), undefined, home))).toBe(
        `--workspace: The workspace ${home} is your home folder: ${consequence}${refusal}`,
      );
    }
    expect(loadConfig(['--workspace', home, '--data-dir', data, '--allow-home-workspace'], { HOME: home }, dir.path).workspace).toBe(home);
    expect(loadConfig(['--workspace', home, '--data-dir', data], { HOME: home, AIRLOCK_ALLOW_HOME_WORKSPACE: '1' }, dir.path).workspace).toBe(home);
    expect(problem(() => loadConfig(['--workspace', home, '--data-dir', data], { HOME: home, AIRLOCK_ALLOW_HOME_WORKSPACE: 'yes' }, dir.path))).toBe('AIRLOCK_ALLOW_HOME_WORKSPACE: must be 1 or 0');
  });

  it('asked for, is warned about at start-up and in the page’s header, whether it is the home folder, holds it, or HOME names it through a link', async () => {
    await using dir = await tempDir('airlock-home-warning-');
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
      const { lines, shown } = await startUp(['--workspace', workspace, '--allow-home-workspace', '--data-dir', data, '--tool-sandbox', 'none', '--port', '0'], env, dir.path);
      expect(lines.filter((line) => line.startsWith('Warning: The workspace'))).toStrictEqual([`Warning: ${warning}`]);
      // Said next to the workspace it is about.
      expect(lines[lines.indexOf(`Workspace: ${workspace}`) + 1]).toBe(`Warning: ${warning}`);
      expect(shown).toBe(warning);
    }
  });

  it('is not warned about for a folder inside the home folder', async () => {
    await using dir = await tempDir('airlock-home-warning-');
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
