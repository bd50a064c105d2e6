import { existsSync } from 'node:fs';
import { mkdir, realpath } from 'node:fs/promises';
import { join, relative, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { configProblem, tempDir } from './support/temp-dir';

/** This checkout, which a workspace may not hold either: a shared folder holding it is refused for that first. */
const CHECKOUT = fileURLToPath(new URL('../../..', import.meta.url));
const holdsCheckout = (folder: string) => {
  const path = relative(folder, CHECKOUT);
  return !path.startsWith('..') && !isAbsolute(path);
};

const consequence =
  "a call would see it read-write, with other programs' files and Unix sockets (tmux, ssh-agent, X11, D-Bus: through one a call runs commands outside the sandbox). Choose a project folder of its own with --workspace";

describe('a workspace that is, holds or lies in a folder the machine shares', () => {
  it('is refused at start-up, naming the folder and why: /tmp, /, /var/tmp, /dev/shm and the other system folders', async () => {
    await using dir = await tempDir('airlock-shared-folders-');
    const shared = ['/tmp', '/var/tmp', '/dev/shm', '/run', '/proc', '/sys', '/dev', '/etc', '/usr', '/var'].filter((folder) => existsSync(folder));
    expect(shared).toContain('/tmp');
    for (const folder of shared) {
      const said = configProblem(() => loadConfig(['--workspace', folder, '--data-dir', join(dir.path, 'data')], {}, dir.path));
      // Where this checkout lies in it (a clone in /tmp), that is said first: refused either way.
      if (holdsCheckout(folder)) expect(said, folder).toMatch(new RegExp(`^--workspace: "${folder}" holds Airlock's own files`));
      else expect(said, folder).toBe(`--workspace: "${folder}" is ${folder}, a folder the whole machine shares: ${consequence}`);
    }
    // `/` holds Airlock's own files as well, which is said first.
    expect(configProblem(() => loadConfig(['--workspace', '/', '--data-dir', join(dir.path, 'data')], {}, dir.path))).toMatch(/^--workspace: "\/" /);
  });

  it('refuses `npm start` typed in /tmp, where the default workspace is the folder it was typed in', async () => {
    await using dir = await tempDir('airlock-shared-folders-');
    // Typed in the folder holding this checkout, `npm start` takes another default workspace: another shared folder then.
    const typedIn = ['/tmp', '/var/tmp'].find((folder) => existsSync(folder) && !holdsCheckout(folder));
    expect(typedIn).toBeDefined();
    expect(configProblem(() => loadConfig(['--data-dir', join(dir.path, 'data')], { HOME: dir.path, INIT_CWD: typedIn! }, dir.path))).toBe(
      `the workspace: "${typedIn}" is ${typedIn}, a folder the whole machine shares: ${consequence}`,
    );
  });

  it('refuses a workspace inside a folder of the system or of Unix sockets (/run/…, /dev/…)', async () => {
    await using dir = await tempDir('airlock-shared-folders-');
    const inside = ['/dev/shm', '/run/lock', '/proc/self', '/sys/kernel'].filter((folder) => existsSync(folder));
    expect(inside.length).toBeGreaterThan(0);
    for (const folder of inside) {
      const real = await realpath(folder);
      expect(configProblem(() => loadConfig(['--workspace', folder, '--data-dir', join(dir.path, 'data')], {}, dir.path))).toMatch(
        new RegExp(`^--workspace: "${real.replaceAll('/', '\\/')}" (is|is inside) `),
      );
    }
  });

  it("refuses a workspace that is or holds the server's temporary folder (TMPDIR), where ssh-agent puts its socket", async () => {
    await using dir = await tempDir('airlock-shared-folders-');
    const temp = join(dir.path, 'project', '.tmp');
    await mkdir(temp, { recursive: true });
    for (const workspace of [temp, join(dir.path, 'project')]) {
      const how = workspace === temp ? `is ${temp}` : `holds ${temp}`;
      expect(configProblem(() => loadConfig(['--workspace', workspace, '--data-dir', join(dir.path, 'data')], { TMPDIR: temp }, dir.path))).toBe(
        `--workspace: "${workspace}" ${how}, the server's temporary folder (TMPDIR), where programs keep files and sockets: ${consequence}`,
      );
    }
  });

  it('takes a project folder inside /tmp or beside the temporary folder', async () => {
    await using dir = await tempDir('airlock-shared-folders-');
    const project = join(dir.path, 'project');
    await mkdir(project);
    expect(loadConfig(['--workspace', project, '--data-dir', join(dir.path, 'data')], { TMPDIR: join(dir.path, 'tmp') }, dir.path).workspace).toBe(project);
  });
});
