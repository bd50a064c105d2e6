import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, realpathSync } from 'node:fs';
import { link, mkdir, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUILD_OPTIONS } from '../build-options';
import { loadConfig } from '../src/config';
import { installationFiles } from '../src/shared-installation-file';
import { fakeInstallation } from './support/fake-installation';
import { configProblem, tempDir } from './support/temp-dir';

const CHECKOUT = fileURLToPath(new URL('../../..', import.meta.url));
const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The package an import names: `@trpc/server/adapters/ws` is in `@trpc/server`, `openai/resources/…` in `openai`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

describe('loadConfig and an installation sharing its files', () => {
  it('refuses a workspace where a file the installation runs has another name', async () => {
    await using installation = await fakeInstallation();
    const argv = ['--workspace', installation.workspace, '--data-dir', join(dirname(installation.workspace), 'data')];
    expect(loadConfig(argv, {}, installation.workspace, installation.root).workspace).toBe(installation.workspace);

    const copy = join(installation.workspace, 'project', 'node_modules', 'tiny', 'lib', 'index.js');
    await mkdir(dirname(copy), { recursive: true });
    await link(installation.files.entry, copy);
    expect(configProblem(() => loadConfig(argv, {}, installation.workspace, installation.root))).toMatch(
      new RegExp(`^--workspace: "${installation.workspace}" is on the file system of ${installation.files.entry}, a file Airlock runs, which has 2 names there \\(hard links\\): `),
    );
  });

  it('looks at a file of every package the server build leaves external, and at better-sqlite3\'s native addon', async () => {
    const { metafile } = await build({ ...BUILD_OPTIONS, write: false, metafile: true, logLevel: 'silent' });
    const external = new Set<string>();
    for (const output of Object.values(metafile.outputs)) {
      for (const { path, external: isExternal } of output.imports) if (isExternal === true && !path.startsWith('node:')) external.add(packageOf(path));
    }
    expect(external.size).toBeGreaterThan(5);
    const files = installationFiles(CHECKOUT);
    const serverRequire = createRequire(join(SERVER_DIR, 'package.json'));
    for (const name of external) {
      const folder = serverRequire.resolve.paths(name)?.map((modules) => join(modules, name)).find((candidate) => existsSync(join(candidate, 'package.json')));
      expect(folder, name).toBeDefined();
      expect(files, name).toContain(join(realpathSync(folder!), 'package.json'));
    }
    expect(files.filter((file) => file.endsWith('better_sqlite3.node'))).toHaveLength(1);
    expect(files).toContain(join(SERVER_DIR, 'bin', 'airlock.mjs'));
  });
});

describe('the built server with an installation sharing a file it runs', () => {
  it('refuses to start, naming the file and the reinstall, and listens on no port', async () => {
    // The build in an installation of its own, as bench/paired-builds.ts lays one out: its node_modules links this
    // checkout's packages but for smol-toml, a copy, so this test can give that one's entry a second name without
    // touching this checkout's files (other tests start servers from them meanwhile).
    await using dir = await tempDir('airlock-shared-install-');
    const top = dir.path;
    const server = join(top, 'airlock', 'apps', 'server');
    await mkdir(join(server, 'node_modules'), { recursive: true });
    cpSync(join(SERVER_DIR, 'bin'), join(server, 'bin'), { recursive: true });
    cpSync(join(SERVER_DIR, 'package.json'), join(server, 'package.json'));
    for (const name of readdirSync(join(SERVER_DIR, 'node_modules'))) {
      if (name === 'smol-toml') cpSync(realpathSync(join(SERVER_DIR, 'node_modules', name)), join(server, 'node_modules', name), { recursive: true });
      else await symlink(join(SERVER_DIR, 'node_modules', name), join(server, 'node_modules', name));
    }
    await build({ ...BUILD_OPTIONS, outdir: join(server, 'dist'), logLevel: 'silent' });
    const workspace = join(top, 'workspace');
    const entry = createRequire(join(server, 'package.json')).resolve('smol-toml');
    const linked = join(workspace, 'project', 'node_modules', 'smol-toml', 'index.cjs');
    await mkdir(dirname(linked), { recursive: true });
    await link(entry, linked);

    const child = spawn(process.execPath, [join(server, 'dist', 'main.js'), '--port', '0', '--workspace', workspace, '--data-dir', join(top, 'data')], {
      env: { PATH: process.env.PATH, HOME: top },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    // Settled by the exit, or by the start-up line of a server that should not have started (then stopped).
    const ended = new Promise<number | null>((resolve) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (/running at/.test(output)) child.kill('SIGKILL');
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.once('close', resolve);
    });
    const exitCode = await ended;
    expect(output).not.toMatch(/running at/);
    expect(output).toContain(`airlock: --workspace: "${workspace}" is on the file system of ${entry}, a file Airlock runs, which has 2 names there (hard links)`);
    expect(output).toContain(`cd ${join(top, 'airlock')} && rm -rf node_modules && pnpm install`);
    expect(exitCode).toBe(1);
  });
});
