import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A temporary folder laid out as an installation of Airlock is, with two packages, and a workspace beside it. */
export interface FakeInstallation extends AsyncDisposable {
  /** The installation's root (what config.ts calls the installation). */
  root: string;
  /** A folder beside it, on the same file system, for the workspace. */
  workspace: string;
  /** The files the server would run from it, by what they are. */
  files: {
    launcher: string;
    main: string;
    chunk: string;
    /** The one dependency of apps/server from node_modules: its manifest and its native addon. */
    manifest: string;
    addon: string;
    /** The manifests of the workspace package the server depends on, and of the package it depends on in turn. */
    workspaceManifest: string;
    nestedManifest: string;
  };
}

/**
 * Lays out an installation as pnpm leaves one: apps/server with its launcher, a build, and node_modules holding
 * `tiny` (with a native addon) and a link to the workspace package `@airlock/lib`, whose own node_modules holds
 * `deep`. `absent` is named in the server's dependencies but not installed (an optional dependency left out).
 */
export async function fakeInstallation(): Promise<FakeInstallation> {
  const top = await realpath(await mkdtemp(join(tmpdir(), 'airlock-installation-')));
  const root = join(top, 'airlock');
  const server = join(root, 'apps', 'server');
  const lib = join(root, 'packages', 'lib');
  const files = {
    launcher: join(server, 'bin', 'airlock.mjs'),
    main: join(server, 'dist', 'main.js'),
    chunk: join(server, 'dist', 'chunk-ABC.js'),
    manifest: join(server, 'node_modules', 'tiny', 'package.json'),
    addon: join(server, 'node_modules', 'tiny', 'build', 'Release', 'tiny.node'),
    workspaceManifest: join(lib, 'package.json'),
    nestedManifest: join(lib, 'node_modules', 'deep', 'package.json'),
  };
  const write = async (path: string, text: string) => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  };
  await write(join(server, 'package.json'), JSON.stringify({ name: '@airlock/server', dependencies: { tiny: '1.0.0', '@airlock/lib': 'workspace:*', absent: '1.0.0' } }));
  await write(files.launcher, '');
  await write(files.main, '');
  await write(files.chunk, '');
  await write(`${files.main}.map`, '{}');
  await write(files.manifest, JSON.stringify({ name: 'tiny', main: 'lib/index.js' }));
  await write(join(server, 'node_modules', 'tiny', 'lib', 'index.js'), '');
  await write(files.addon, '');
  await write(files.workspaceManifest, JSON.stringify({ name: '@airlock/lib', exports: './src/index.js', dependencies: { deep: '1.0.0' } }));
  await write(join(lib, 'src', 'index.js'), '');
  await write(files.nestedManifest, JSON.stringify({ name: 'deep' }));
  await write(join(lib, 'node_modules', 'deep', 'index.js'), '');
  await mkdir(join(server, 'node_modules', '@airlock'), { recursive: true });
  await symlink(lib, join(server, 'node_modules', '@airlock', 'lib'));
  const workspace = join(top, 'workspace');
  await mkdir(workspace);
  return { root, workspace, files, [Symbol.asyncDispose]: () => rm(top, { recursive: true, force: true }) };
}
