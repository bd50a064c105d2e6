import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, realpathSync } from 'node:fs';
import { link, mkdir, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUILD_OPTIONS } from '../build-options';
import { loadConfig } from '../src/config';
import { installationFiles } from '../src/shared-installation-file';
import { fakeInstallation } from './support/fake-installation';
import { startFakeOpenAIServer } from './support/fake-openai-server';
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

    const copy = join(installation.workspace, 'project', 'node_modules', 'tiny', 'package.json');
    await mkdir(dirname(copy), { recursive: true });
    await link(installation.files.manifest, copy);
    expect(configProblem(() => loadConfig(argv, {}, installation.workspace, installation.root))).toMatch(
      new RegExp(`^--workspace: "${installation.workspace}" is on the file system of ${installation.files.manifest}, a file Airlock runs, which has 2 names there \\(hard links\\): `),
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
    // checkout's packages but for smol-toml, a copy, so this test can give that one's manifest a second name without
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
    const manifest = join(server, 'node_modules', 'smol-toml', 'package.json');
    const linked = join(workspace, 'project', 'node_modules', 'smol-toml', 'package.json');
    await mkdir(dirname(linked), { recursive: true });
    await link(manifest, linked);

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
    expect(output).toContain(`airlock: --workspace: "${workspace}" is on the file system of ${manifest}, a file Airlock runs, which has 2 names there (hard links)`);
    expect(output).toContain(`cd ${join(top, 'airlock')} && rm -rf node_modules && pnpm install`);
    expect(exitCode).toBe(1);
  });
});

// Found by the whole suite: the check asked Node's require for each package's entry (require.resolve), after which the
// server's own import('undici') read the package as an empty module, and every start with a model server that
// answered failed with "Agent is not a constructor". The built server, checked, starts against one.
describe('the built server after its check', () => {
  it('loads the model client and starts with a model server that answers', async () => {
    await using dir = await tempDir('airlock-shared-install-');
    await using model = await startFakeOpenAIServer();
    await build({ ...BUILD_OPTIONS, outdir: join(dir.path, 'dist'), logLevel: 'silent' });
    // Beside the server's sources, so the build finds its packages where `npm start` does.
    const built = join(SERVER_DIR, `dist-check-${process.pid}`);
    cpSync(join(dir.path, 'dist'), built, { recursive: true });
    try {
      const workspace = join(dir.path, 'workspace');
      await mkdir(workspace);
      const child = spawn(process.execPath, [join(built, 'main.js'), '--port', '0', '--workspace', workspace, '--data-dir', join(dir.path, 'data'), '--model-url', model.url], {
        env: { PATH: process.env.PATH, HOME: dir.path },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const ended = new Promise<void>((resolve) => {
        const read = (chunk: Buffer) => {
          output += chunk.toString();
          if (/running at/.test(output)) child.kill('SIGTERM');
        };
        child.stdout.on('data', read);
        child.stderr.on('data', read);
        child.once('close', () => resolve());
      });
      await ended;
      expect(output).not.toContain('failed to start');
      expect(output).toMatch(/running at/);
    } finally {
      await rm(built, { recursive: true, force: true });
    }
  });
});
