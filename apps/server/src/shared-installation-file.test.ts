import { link, mkdir, rename, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeInstallation } from '../test/support/fake-installation';
import { installationFiles, mountPointsWithin, sharedInstallationFile } from './shared-installation-file';

/** Gives `file` a second name inside the workspace, as pnpm does for a project there installed from the same store. */
async function linkIntoWorkspace(file: string, workspace: string): Promise<void> {
  const name = join(workspace, 'project', 'node_modules', 'copy', file.replaceAll('/', '_'));
  await mkdir(dirname(name), { recursive: true });
  await link(file, name);
}

describe('installationFiles', () => {
  it("lists the launcher, the build's scripts, and each dependency's manifest and native addon, through workspace packages", async () => {
    await using installation = await fakeInstallation();
    const { files } = installation;
    expect(installationFiles(installation.root).sort()).toStrictEqual(
      [
        files.launcher,
        files.main,
        files.chunk,
        files.manifest,
        files.addon,
        files.workspaceManifest,
        files.nestedManifest,
      ].sort(),
    );
  });

  it('lists no build when there is none (the server then runs from its sources through tsx)', async () => {
    await using installation = await fakeInstallation();
    await rm(dirname(installation.files.main), { recursive: true });
    expect(installationFiles(installation.root)).not.toContain(installation.files.main);
    expect(installationFiles(installation.root)).toContain(installation.files.manifest);
  });
});

describe('sharedInstallationFile', () => {
  it('finds nothing when each file the server runs has one name', async () => {
    await using installation = await fakeInstallation();
    expect(sharedInstallationFile(installation.workspace, installation.root)).toBeUndefined();
  });

  for (const which of ['manifest', 'addon', 'nestedManifest', 'main', 'launcher'] as const) {
    it(`refuses a workspace on the file system where a file it runs (${which}) has another name, naming the file and the reinstall`, async () => {
      await using installation = await fakeInstallation();
      const file = installation.files[which];
      await linkIntoWorkspace(file, installation.workspace);
      expect(sharedInstallationFile(installation.workspace, installation.root)).toBe(
        `"${installation.workspace}" is on the file system of ${file}, a file Airlock runs, which has 2 names there (hard links): ` +
          'pnpm links the files of a package from its store into every project installed from it, so a project in the workspace may ' +
          "hold this very file, and a call that writes into that project's node_modules would change code Airlock runs outside any sandbox. " +
          `Reinstall Airlock's packages as copies: cd ${installation.root} && rm -rf node_modules && pnpm install ` +
          '(its pnpm-workspace.yaml has pnpm copy them; pnpm install --force would keep the links)',
      );
    });
  }

  // node-gyp's make copies a built addon into build/Release with `ln -f` from build/Release/obj.target: where the
  // prebuilt binary cannot be downloaded, the addon built here has two names, both Airlock's own.
  it("finds nothing when an addon's other names are all in its own package's build folder", async () => {
    await using installation = await fakeInstallation();
    const { addon } = installation.files;
    await mkdir(join(dirname(addon), 'obj.target'), { recursive: true });
    await link(addon, join(dirname(addon), 'obj.target', 'built.node'));
    expect(sharedInstallationFile(installation.workspace, installation.root)).toBeUndefined();
  });

  it("refuses an addon with a name in its build folder and another in the workspace, counting those it found", async () => {
    await using installation = await fakeInstallation();
    const { addon } = installation.files;
    await mkdir(join(dirname(addon), 'obj.target'), { recursive: true });
    await link(addon, join(dirname(addon), 'obj.target', 'built.node'));
    await linkIntoWorkspace(addon, installation.workspace);
    expect(sharedInstallationFile(installation.workspace, installation.root)).toContain(
      `"${installation.workspace}" is on the file system of ${addon}, a file Airlock runs, which has 3 names there (hard links), 2 of them in its package's build folder: `,
    );
  });

  it('refuses a workspace that holds the real path of a file the server runs (node_modules linked into it)', async () => {
    await using installation = await fakeInstallation();
    const store = join(installation.workspace, 'store', 'tiny');
    await mkdir(dirname(store), { recursive: true });
    const installed = dirname(installation.files.manifest);
    await rename(installed, store);
    await symlink(store, installed);
    expect(sharedInstallationFile(installation.workspace, installation.root)).toBe(
      `"${installation.workspace}" holds ${join(store, 'package.json')}, a file Airlock runs: ` +
        'a call allowed there could change code Airlock runs outside any sandbox. Choose a folder that does not hold it with --workspace',
    );
  });
});

describe('mountPointsWithin', () => {
  it("reads the mount points inside a folder from /proc/self/mountinfo's lines, escapes undone", () => {
    const mountinfo = [
      '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
      '30 22 254:16 / /home/me/work/disk rw,relatime shared:9 - ext4 /dev/vdb rw',
      '31 22 254:32 / /home/me/work/my\\040disk rw,relatime shared:10 - ext4 /dev/vdc rw',
      '32 22 254:48 / /home/me/workshop rw,relatime shared:11 - ext4 /dev/vdd rw',
      '33 22 0:5 / /home/me/work rw,relatime shared:12 - tmpfs tmpfs rw',
      '',
    ].join('\n');
    expect(mountPointsWithin('/home/me/work', mountinfo)).toStrictEqual(['/home/me/work/disk', '/home/me/work/my disk']);
  });
});
