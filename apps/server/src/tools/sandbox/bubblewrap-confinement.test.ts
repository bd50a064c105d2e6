import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, test, vi } from 'vitest';
import { createBuiltinTools, type BuiltinToolsOptions } from '../index';
import { callContext, runTool, tempFolder, toolNamed } from '../test-support';
import { probeBubblewrap } from './probe-bubblewrap';
import { DEFAULT_TMPFS_MIB } from './tmpfs-size';

const probe = await probeBubblewrap(true);
/** Whether bubblewrap starts in a namespace of the call's own here (see limitedNamespaceCommand). */
const namespaced = probe.available && 'unshare' in probe;

/** Git as the person runs it in their own shell, outside any sandbox, with no system or global config of this machine. */
function hostGit(cwd: string, args: readonly string[]): number | null {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
  return spawnSync('git', args, { cwd, env, stdio: 'ignore' }).status;
}

function terminal(workspace: string, options: Partial<BuiltinToolsOptions> = {}) {
  return toolNamed(createBuiltinTools({ workspace, killGraceMs: 500, sandbox: 'bubblewrap', ...options }), 'terminal');
}

/** Connects to the Unix socket named by its argument (a leading @ for an abstract one) and prints `connected` or the error code. */
const CONNECT_SCRIPT = `
const name = process.argv[2].startsWith('@') ? '\\0' + process.argv[2].slice(1) : process.argv[2];
require('node:net').connect(name)
  .on('connect', () => { console.log('connected'); process.exit(0); })
  .on('error', (error) => { console.log(error.code); process.exit(0); });
`;

interface UnixServer extends AsyncDisposable {
  /** Connections accepted so far. */
  connections(): number;
}

/** A Unix socket listening at `address` (a path, or `\0name` for an abstract one), as a database or a session bus would. */
async function unixServer(address: string): Promise<UnixServer> {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address, resolve);
  });
  return {
    connections: () => connections,
    [Symbol.asyncDispose]: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!address.startsWith('\0')) await rm(address, { force: true });
    },
  };
}

/** A folder of /run this process may create a socket in: the session's own, or /run itself as root (CI). */
function writableRunFolder(): string | undefined {
  return [`/run/user/${process.getuid?.() ?? -1}`, '/run'].find((folder) => {
    try {
      accessSync(folder, constants.W_OK);
      return true;
    } catch {
      return false;
    }
  });
}

async function connectFromSandbox(workspace: string, address: string, network: boolean): Promise<string> {
  await writeFile(path.join(workspace, 'connect.js'), CONNECT_SCRIPT);
  const result = await runTool(terminal(workspace, { network }), { command: `'${process.execPath}' connect.js '${address}'` });
  return result.content;
}

describe('the bubblewrap sandbox keeps a call from what this machine offers on its Unix sockets', () => {
  const runFolder = writableRunFolder();

  test.skipIf(runFolder === undefined).each([true, false])('a socket under /run cannot be reached (network on: %s)', async (network) => {
    await using workspace = await tempFolder();
    const socketPath = path.join(runFolder!, `airlock-test-${randomBytes(6).toString('hex')}.sock`);
    await using server = await unixServer(socketPath);
    expect(await connectFromSandbox(workspace.path, socketPath, network)).toBe('ENOENT\nexit code: 0');
    expect(server.connections()).toBe(0);
  });

  test('an abstract socket is reached with the network on (the network namespace is shared) and not with it off', async () => {
    await using workspace = await tempFolder();
    const name = `airlock-test-${randomBytes(6).toString('hex')}`;
    await using server = await unixServer(`\0${name}`);
    expect(await connectFromSandbox(workspace.path, `@${name}`, false)).toBe('ECONNREFUSED\nexit code: 0');
    expect(server.connections()).toBe(0);
    expect(await connectFromSandbox(workspace.path, `@${name}`, true)).toBe('connected\nexit code: 0');
  });

  test.each([true, false])('a socket listening in the workspace, or in a folder outside it such as ~/.ssh, cannot be reached; the files beside it can (network on: %s)', async (network) => {
    await using workspace = await tempFolder();
    // Outside /tmp, which the sandbox has its own of: a home folder as the person's is.
    await using home = await tempFolder('/var/tmp');
    // In the workspace a socket is masked by /dev/null (no socket there); outside, its folder is veiled (not there at all).
    for (const [folder, refusal] of [
      [path.join(workspace.path, '.ssh'), 'ECONNREFUSED'],
      [path.join(home.path, '.ssh'), 'ENOENT'],
    ] as const) {
      await mkdir(folder);
      await writeFile(path.join(folder, 'config'), 'Host *\n');
      // As ssh's ControlMaster makes its socket: bound under a passing name, linked to its own, the passing one removed.
      const passing = path.join(folder, 'cm-host.AbCdEfGh');
      const socket = path.join(folder, 'cm-host');
      await using server = await unixServer(passing);
      await link(passing, socket);
      await unlink(passing);
      expect(await connectFromSandbox(workspace.path, socket, network)).toBe(`${refusal}\nexit code: 0`);
      expect(server.connections()).toBe(0);
      expect((await runTool(terminal(workspace.path, { network }), { command: `cat ${folder}/config` })).content).toBe('Host *\nexit code: 0');
    }
  });

  test("a socket made during a call in the home folder's ~/.ssh, ~/.gnupg or ~/.docker, or in any folder inside them, outside the workspace, is not in the call's view; their files are", async () => {
    await using workspace = await tempFolder();
    await using home = await tempFolder('/var/tmp');
    // ControlPath folders people choose (~/.ssh/controlmasters, ~/.ssh/cm), and deeper ones.
    const inside = [path.join('.ssh', 'controlmasters'), path.join('.ssh', 'cm'), path.join('.ssh', 'a', 'b'), path.join('.gnupg', 'private'), path.join('.docker', 'contexts')];
    for (const name of ['.ssh', '.gnupg', path.join('.docker', 'run'), ...inside]) {
      const folder = path.join(home.path, name);
      await mkdir(folder, { recursive: true });
      await writeFile(path.join(folder, 'kept'), 'kept\n');
      await writeFile(path.join(workspace.path, 'connect.js'), CONNECT_SCRIPT);
      const socket = path.join(folder, 'made-later.sock');
      // The call waits for the socket the person's program makes once it has started, then tries it.
      const running = runTool(terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home.path } }), {
        command: `touch started; while [ ! -e ready ]; do sleep 0.02; done; cat ${folder}/kept; '${process.execPath}' connect.js '${socket}'`,
      });
      await vi.waitFor(() => expect(existsSync(path.join(workspace.path, 'started'))).toBe(true), { timeout: 20_000 });
      await using server = await unixServer(socket);
      await writeFile(path.join(workspace.path, 'ready'), '');
      expect(await running).toStrictEqual({ content: 'kept\nENOENT\nexit code: 0', isError: false });
      expect(server.connections()).toBe(0);
      await rm(path.join(workspace.path, 'started'));
      await rm(path.join(workspace.path, 'ready'));
    }
  });

  test("a ~/.docker of 5,000 folders, too many to veil one by one, is covered whole: the call starts, a socket made during it in ~/.docker or a folder of it is not reached and its files are not read; a small ~/.ssh is still veiled, its files readable", async () => {
    await using workspace = await tempFolder();
    await using home = await tempFolder('/var/tmp');
    const docker = path.join(home.path, '.docker');
    for (let index = 0; index < 5000; index += 1) await mkdir(path.join(docker, `context-${index}`), { recursive: true });
    await mkdir(path.join(docker, 'run'));
    await writeFile(path.join(docker, 'config.json'), '{"auths":{"registry.example":{"auth":"dXNlcjpzZWNyZXQ="}}}\n');
    await mkdir(path.join(home.path, '.ssh'));
    await writeFile(path.join(home.path, '.ssh', 'config'), 'Host *\n');
    await writeFile(path.join(workspace.path, 'connect.js'), CONNECT_SCRIPT);
    const sockets = [path.join(docker, 'run', 'docker.sock'), path.join(docker, 'desktop.sock'), path.join(docker, 'context-4999', 'made-later.sock')];
    const running = runTool(terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home.path } }), {
      command: [
        'touch started; while [ ! -e ready ]; do sleep 0.02; done',
        'cat ~/.ssh/config; cat ~/.docker/config.json 2>/dev/null || echo no config.json',
        ...sockets.map((socket) => `'${process.execPath}' connect.js '${socket}'`),
      ].join('; '),
    });
    await vi.waitFor(() => expect(existsSync(path.join(workspace.path, 'started'))).toBe(true), { timeout: 20_000 });
    const servers = await Promise.all(sockets.map((socket) => unixServer(socket)));
    try {
      await writeFile(path.join(workspace.path, 'ready'), '');
      expect(await running).toStrictEqual({ content: 'Host *\nno config.json\nENOENT\nENOENT\nENOENT\nexit code: 0', isError: false });
      expect(servers.map((server) => server.connections())).toStrictEqual([0, 0, 0]);
    } finally {
      for (const server of servers) await server[Symbol.asyncDispose]();
    }
  });

  test('/run/shm still leads to the shared memory folder, and the name server configuration is still read', async () => {
    await using workspace = await tempFolder();
    const command = 'test -d /run/shm/ && echo shm; cat /etc/resolv.conf > /dev/null && echo resolv.conf';
    expect((await runTool(terminal(workspace.path), { command })).content).toBe('shm\nresolv.conf\nexit code: 0');
  });
});

describe('the bubblewrap sandbox keeps a call from leaving code to run outside it later', () => {
  test('an existing repository’s config and hooks, and .airlock, are read-only, and .git cannot be moved away; the rest of .git is writable', async () => {
    await using workspace = await tempFolder();
    const at = (...parts: string[]) => path.join(workspace.path, ...parts);
    await mkdir(at('.git/hooks'), { recursive: true });
    await mkdir(at('.git/remotes'));
    await mkdir(at('.git/branches'));
    await mkdir(at('.git/objects'));
    await mkdir(at('.airlock'));
    await writeFile(at('.git/config'), '[core]\n\tbare = false\n');
    await writeFile(at('.airlock/rules.json'), '{"version":1,"rules":[]}');
    const attempts = [
      `printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config`,
      'touch .git/hooks/pre-commit',
      `printf 'URL: ../evil\\nPull: +refs/heads/main:refs/heads/keep\\n' > .git/remotes/origin`,
      'touch .git/branches/origin',
      'mv .git/config .git/config.old',
      'mv .git/hooks .git/hooks.old',
      'mv .git moved-git',
      'rm -rf .airlock',
      'touch .airlock/rules.json',
      'touch .git/objects/written',
    ];
    const command = attempts.map((attempt) => `(${attempt}) 2>/dev/null && echo 'done: ${attempt.split(' ')[0]} ${attempt.split(' ').at(-1)}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; echo end` });
    expect(result.content).toBe('done: touch .git/objects/written\nend\nexit code: 0');
    expect(await readFile(at('.git/config'), 'utf8')).toBe('[core]\n\tbare = false\n');
    expect(await readdir(at('.git/hooks'))).toStrictEqual([]);
    expect(await readdir(at('.git/remotes'))).toStrictEqual([]);
    expect(await readdir(at('.git/branches'))).toStrictEqual([]);
    expect((await readdir(at('.git'))).sort()).toStrictEqual(['branches', 'config', 'hooks', 'objects', 'remotes']);
    expect(await readFile(at('.airlock/rules.json'), 'utf8')).toBe('{"version":1,"rules":[]}');
  });

  test('the Git directories of submodules and linked worktrees kept in .git hold their config, hooks and commondir read-only', async () => {
    await using workspace = await tempFolder();
    const at = (...parts: string[]) => path.join(workspace.path, ...parts);
    const gitDirs = ['.git/modules/sub', '.git/modules/sub/modules/inner', '.git/worktrees/feature'];
    await mkdir(at('.git/hooks'), { recursive: true });
    await writeFile(at('.git/config'), '[core]\n\tbare = false\n');
    for (const gitDir of gitDirs) {
      await mkdir(at(gitDir, 'hooks'), { recursive: true });
      await writeFile(at(gitDir, 'config'), '[core]\n\tbare = false\n');
      await writeFile(at(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
    }
    await writeFile(at('.git/worktrees/feature/commondir'), '../..\n');
    await writeFile(at('.git/worktrees/feature/config.worktree'), '');
    const attempts = [
      ...gitDirs.flatMap((gitDir) => [`echo '[core] fsmonitor = touch /tmp/pwned' >> ${gitDir}/config`, `touch ${gitDir}/hooks/pre-commit`, `mv ${gitDir} ${gitDir}.old`]),
      'echo ../../../evil > .git/worktrees/feature/commondir',
      `echo '[core] fsmonitor = touch /tmp/pwned' >> .git/worktrees/feature/config.worktree`,
      'mv .git/modules .git/modules.old',
      'mv .git/worktrees .git/worktrees.old',
      'touch .git/modules/sub/written',
    ];
    const command = attempts.map((attempt) => `(${attempt}) 2>/dev/null && echo 'done: ${attempt}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; echo end` });
    expect(result.content).toBe('done: touch .git/modules/sub/written\nend\nexit code: 0');
    for (const gitDir of gitDirs) {
      expect(await readFile(at(gitDir, 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
      expect(await readdir(at(gitDir, 'hooks'))).toStrictEqual([]);
    }
    expect(await readFile(at('.git/worktrees/feature/commondir'), 'utf8')).toBe('../..\n');
    expect(await readFile(at('.git/worktrees/feature/config.worktree'), 'utf8')).toBe('');
  });

  test('Git directories an earlier call laid out in .git/modules, more than are held one by one, leave no submodule’s config writable: the folder is held whole', async () => {
    await using workspace = await tempFolder();
    const at = (...parts: string[]) => path.join(workspace.path, ...parts);
    await mkdir(at('.git/modules/sub/hooks'), { recursive: true });
    await writeFile(at('.git/modules/sub/HEAD'), 'ref: refs/heads/main\n');
    await writeFile(at('.git/modules/sub/config'), '[core]\n\tbare = false\n');
    // Names that sort before `sub`, each a Git directory to the look for them.
    const planted = await runTool(terminal(workspace.path), { command: 'for i in $(seq 100 199); do mkdir .git/modules/a$i && echo x > .git/modules/a$i/HEAD; done; echo planted' });
    expect(planted.content).toBe('planted\nexit code: 0');
    const attempts = [`echo '[core] fsmonitor = touch /tmp/pwned' >> .git/modules/sub/config`, 'touch .git/modules/sub/hooks/pre-commit', 'mv .git/modules .git/modules.old'];
    const command = attempts.map((attempt) => `(${attempt}) 2>/dev/null && echo 'done: ${attempt}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; echo end` });
    expect(result.content).toBe('end\nexit code: 0');
    expect(await readFile(at('.git/modules/sub/config'), 'utf8')).toBe('[core]\n\tbare = false\n');
    expect(await readdir(at('.git/modules/sub/hooks'))).toStrictEqual([]);
  });

  test('a .git/modules an earlier call filled with entries is held whole, not read through at each call’s start', async () => {
    await using workspace = await tempFolder();
    const at = (...parts: string[]) => path.join(workspace.path, ...parts);
    await mkdir(at('.git/modules/sub/hooks'), { recursive: true });
    await writeFile(at('.git/modules/sub/HEAD'), 'ref: refs/heads/main\n');
    await writeFile(at('.git/modules/sub/config'), '[core]\n\tbare = false\n');
    const planted = await runTool(terminal(workspace.path), { command: 'cd .git/modules && seq 1 5000 | xargs touch && echo planted' });
    expect(planted.content).toBe('planted\nexit code: 0');
    const result = await runTool(terminal(workspace.path), { command: '(touch .git/modules/sub/written) 2>/dev/null && echo written; echo end' });
    expect(result.content).toBe('end\nexit code: 0');
  });

  test('a repository without .git/hooks when the call starts: the call cannot make it, and the folder its mask needed is gone after', async () => {
    await using workspace = await tempFolder();
    const setUp = await runTool(terminal(workspace.path), { command: 'git init -q . && rm -rf .git/hooks && echo ready' });
    expect(setUp.content).toBe('ready\nexit code: 0');
    const attempts = ['mkdir -p .git/hooks', 'touch .git/hooks/pre-commit', 'mv .git/hooks .git/hooks.old', 'mv .git moved-git'];
    const command = attempts.map((attempt) => `(${attempt}) 2>/dev/null && echo 'done: ${attempt}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; ls -A .git/hooks; git status --short; echo end` });
    expect(result.content).toBe('done: mkdir -p .git/hooks\nend\nexit code: 0');
    expect(await readdir(path.join(workspace.path, '.git'))).not.toContain('hooks');
    expect(await readdir(workspace.path)).toStrictEqual(['.git']);
  });

  test('a repository without .git/config when the call starts: the call can make neither it nor .git/hooks, Git still works, and the files its masks needed are gone after', async () => {
    await using workspace = await tempFolder();
    const setUp = await runTool(terminal(workspace.path), { command: 'git init -q . && rm -rf .git/hooks .git/config && echo ready' });
    expect(setUp.content).toBe('ready\nexit code: 0');
    const attempts = [
      `printf '[core]\\n\\thooksPath = h\\n' > .git/config`,
      'git config core.hooksPath h',
      'mkdir -p .git/hooks && touch .git/hooks/pre-commit',
      'rm .git/config',
      'mv .git moved-git',
    ];
    const command = attempts.map((attempt) => `(${attempt}) 2>/dev/null && echo 'done: ${attempt}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; git status --short && echo status; echo end` });
    expect(result.content).toBe('status\nend\nexit code: 0');
    expect((await readdir(path.join(workspace.path, '.git'))).filter((name) => ['config', 'hooks'].includes(name))).toStrictEqual([]);
    expect(await readdir(workspace.path)).toStrictEqual(['.git']);
  });

  test.each([
    { hooksPath: '.githooks', folders: ['.githooks'], hooks: ['.githooks/pre-commit'] },
    // husky 9: the hooks in .husky/_ run the scripts of the same name in .husky.
    { hooksPath: '.husky/_', folders: ['.husky', '.husky/_'], hooks: ['.husky/pre-commit', '.husky/_/pre-commit'] },
    { hooksPath: 'tools/git/hooks', folders: ['tools', 'tools/git', 'tools/git/hooks'], hooks: ['tools/git/hooks/pre-commit'] },
  ])('the hooks folder core.hooksPath names ($hooksPath) is read-only, and the folders on the way cannot be moved', async ({ hooksPath, folders, hooks }) => {
    await using workspace = await tempFolder();
    const setUp = await runTool(terminal(workspace.path), { command: `git init -q . && mkdir -p ${hooksPath} && echo ready` });
    expect(setUp.content).toBe('ready\nexit code: 0');
    await writeFile(path.join(workspace.path, '.git/config'), `[core]\n\thooksPath = ${hooksPath}\n`);
    const attempts = [...hooks.map((hook) => `touch ${hook}`), ...folders.map((folder) => `mv ${folder} ${folder}.old`), 'touch elsewhere'];
    const command = attempts.map((attempt) => `(${attempt}) 2>/dev/null && echo 'done: ${attempt}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; echo end` });
    expect(result.content).toBe('done: touch elsewhere\nend\nexit code: 0');
  });

  test('a hooks folder core.hooksPath names that is missing when the call starts cannot be made, and the folder its mask needed is gone after', async () => {
    await using workspace = await tempFolder();
    const setUp = await runTool(terminal(workspace.path), { command: 'git init -q . && git config core.hooksPath tools/hooks && mkdir tools && echo ready' });
    expect(setUp.content).toBe('ready\nexit code: 0');
    const attempts = ['mkdir -p tools/hooks && touch tools/hooks/pre-commit', 'mv tools tools.old'];
    const command = attempts.map((attempt) => `(${attempt}) 2>/dev/null && echo 'done: ${attempt}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; echo end` });
    expect(result.content).toBe('end\nexit code: 0');
    expect(await readdir(path.join(workspace.path, 'tools'))).toStrictEqual([]);
  });

  test.each([
    { gitdir: 'absolute', setUp: 'git init -q --separate-git-dir=.repo .' },
    { gitdir: 'relative', setUp: "git init -q --separate-git-dir=.repo . && printf 'gitdir: .repo\\n' > .git" },
  ])('a .git file naming a Git directory in the workspace ($gitdir): neither the file nor that directory’s config and hooks can be changed or moved', async ({ setUp }) => {
    await using workspace = await tempFolder();
    const ready = await runTool(terminal(workspace.path), { command: `${setUp} && rm -rf .repo/hooks && echo ready` });
    expect(ready.content).toBe('ready\nexit code: 0');
    const gitFile = await readFile(path.join(workspace.path, '.git'), 'utf8');
    const attempts = [
      `printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .repo/config`,
      'mkdir -p .repo/hooks && touch .repo/hooks/pre-commit',
      `printf 'gitdir: evil\\n' > .git`,
      'mv .git git-file.old',
      'mv .repo repo.old',
    ];
    const command = attempts.map((attempt) => `(${attempt}) 2>/dev/null && echo 'done: ${attempt}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; git status --short > /dev/null && echo status; echo end` });
    expect(result.content).toBe('status\nend\nexit code: 0');
    expect(await readFile(path.join(workspace.path, '.git'), 'utf8')).toBe(gitFile);
    expect(await readFile(path.join(workspace.path, '.repo/config'), 'utf8')).not.toContain('fsmonitor');
    expect(await readdir(path.join(workspace.path, '.repo'))).not.toContain('hooks');
    expect((await readdir(workspace.path)).sort()).toStrictEqual(['.git', '.repo']);
  });

  test.each([
    { where: 'in the workspace', outside: false },
    { where: 'outside the workspace', outside: true },
  ])('a call starting while another has written .git/commondir (naming a folder $where) can still write neither .git/config nor .git/hooks', async ({ outside }) => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    const at = (...parts: string[]) => path.join(workspace.path, ...parts);
    const marker = path.join(elsewhere.path, 'fsmonitor-ran');
    expect(hostGit(workspace.path, ['init', '-q', '.'])).toBe(0);
    const config = await readFile(at('.git/config'), 'utf8');
    // The first call names another common directory, then waits, running, until the second is over.
    const named = outside ? elsewhere.path : '../evil';
    const first = runTool(terminal(workspace.path), {
      command: `mkdir evil && echo '${named}' > .git/commondir && touch planted && while [ ! -e second-over ]; do sleep 0.1; done; echo first-over`,
    });
    await vi.waitFor(() => expect(existsSync(at('planted'))).toBe(true), { timeout: 20_000, interval: 50 });
    const attempts = [
      `printf '[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n' >> .git/config`,
      'git config core.hooksPath h',
      'touch .git/hooks/pre-commit',
      'mv .git/hooks .git/hooks.old',
    ];
    const command = attempts.map((attempt) => `(${attempt}) 2>/dev/null && echo 'done: ${attempt}'`).join('; ');
    const second = await runTool(terminal(workspace.path), { command: `${command}; echo end` });
    await writeFile(at('second-over'), '');
    expect(second.content).toBe('end\nexit code: 0');
    expect((await first).content).toContain('first-over\nexit code: 0\n');
    expect(existsSync(at('.git/commondir'))).toBe(false);
    expect(await readFile(at('.git/config'), 'utf8')).toBe(config);
    expect(await readdir(at('.git/hooks'))).not.toContain('pre-commit');
    hostGit(workspace.path, ['status', '--short']);
    expect(existsSync(marker)).toBe(false);
  });

  test.each([
    { state: 'missing', present: false },
    { state: 'there', present: true },
  ])('with extensions.worktreeConfig on, a .git/config.worktree $state when the call starts cannot be written, and the person’s git status runs nothing from it', async ({ present }) => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    const at = (...parts: string[]) => path.join(workspace.path, ...parts);
    const marker = path.join(elsewhere.path, 'fsmonitor-ran');
    expect(hostGit(workspace.path, ['init', '-q', '.'])).toBe(0);
    expect(hostGit(workspace.path, ['config', 'extensions.worktreeConfig', 'true'])).toBe(0);
    if (present) expect(hostGit(workspace.path, ['config', '--worktree', 'core.sparseCheckout', 'false'])).toBe(0);
    const before = present ? await readFile(at('.git/config.worktree'), 'utf8') : undefined;
    const attempts = [
      `printf '[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n' >> .git/config.worktree`,
      `git config --worktree core.fsmonitor 'touch ${marker}; false'`,
      'rm -f .git/config.worktree',
      'mv .git/config.worktree .git/config.worktree.old',
    ];
    const command = attempts.map((attempt) => `(${attempt}) 2>/dev/null && echo 'done: ${attempt.split(' ')[0]}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; git status --short && echo status; echo end` });
    expect(result.content).toBe('status\nend\nexit code: 0');
    expect(await readFile(at('.git/config.worktree'), 'utf8').catch(() => undefined)).toBe(before);
    hostGit(workspace.path, ['status', '--short']);
    expect(existsSync(marker)).toBe(false);
  });

  test.each([
    { state: 'there', present: true },
    { state: 'missing', present: false },
  ])('a workspace file the repository config includes ($state when the call starts), and those it includes, cannot be written, made or moved away, and the person’s git status runs nothing from them', async ({ present }) => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    const at = (...parts: string[]) => path.join(workspace.path, ...parts);
    const marker = path.join(elsewhere.path, 'fsmonitor-ran');
    const fsmonitor = `[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n`;
    expect(hostGit(workspace.path, ['init', '-q', '.'])).toBe(0);
    // The common recipe for project-shared settings, and a conditional include from the file it includes.
    expect(hostGit(workspace.path, ['config', 'include.path', '../.gitconfig'])).toBe(0);
    await mkdir(at('shared'));
    await writeFile(at('shared/branch.gitconfig'), '[user]\n\tname = a\n');
    const shared = '[includeIf "onbranch:main"]\n\tpath = shared/branch.gitconfig\n[include]\n\tpath = tools/git/more.gitconfig\n';
    if (present) await writeFile(at('.gitconfig'), shared);
    // Missing, .gitconfig includes nothing yet, and cannot be made: the files it would include are no config then.
    const attempts = [
      `printf '${fsmonitor}' >> .gitconfig`,
      `git config --file .gitconfig core.fsmonitor 'touch ${marker}; false'`,
      `mv .gitconfig moved.gitconfig`,
      ...(present
        ? [
            `printf '${fsmonitor}' >> shared/branch.gitconfig`,
            `mkdir -p tools/git && printf '${fsmonitor}' > tools/git/more.gitconfig`,
            `mv shared moved-shared && mkdir shared && printf '${fsmonitor}' > shared/branch.gitconfig`,
          ]
        : []),
    ];
    const command = attempts.map((attempt, index) => `(${attempt}) 2>/dev/null && echo 'done: ${index}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; git status --short >/dev/null && echo status; echo end` });
    expect(result.content).toBe('status\nend\nexit code: 0');
    expect(await readFile(at('.gitconfig'), 'utf8').catch(() => undefined)).toBe(present ? shared : undefined);
    expect(await readFile(at('shared/branch.gitconfig'), 'utf8')).toBe('[user]\n\tname = a\n');
    expect((await readdir(workspace.path)).sort()).toStrictEqual(present ? ['.git', '.gitconfig', 'shared'] : ['.git', 'shared']);
    hostGit(workspace.path, ['status', '--short']);
    expect(existsSync(marker)).toBe(false);
  });

  test('a workspace file included through a config outside the workspace, or beside a link Git names, cannot be written or made, and the person’s git status runs nothing from it', async () => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    const at = (...parts: string[]) => path.join(workspace.path, ...parts);
    const marker = path.join(elsewhere.path, 'fsmonitor-ran');
    const fsmonitor = `[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n`;
    expect(hostGit(workspace.path, ['init', '-q', '.'])).toBe(0);
    // A team config kept outside the workspace that includes a file of it through a link of its own; and, in the
    // workspace, a link to a file elsewhere in it whose relative include Git reads beside the link.
    await symlink(workspace.path, path.join(elsewhere.path, 'project'));
    await writeFile(path.join(elsewhere.path, 'team.gitconfig'), '[include]\n\tpath = project/local.gitconfig\n');
    await mkdir(at('shared'));
    await writeFile(at('shared/settings.gitconfig'), '[include]\n\tpath = beside.gitconfig\n');
    await symlink('shared/settings.gitconfig', at('settings.gitconfig'));
    expect(hostGit(workspace.path, ['config', '--add', 'include.path', path.join(elsewhere.path, 'team.gitconfig')])).toBe(0);
    expect(hostGit(workspace.path, ['config', '--add', 'include.path', '../settings.gitconfig'])).toBe(0);
    const attempts = [`printf '${fsmonitor}' > local.gitconfig`, `printf '${fsmonitor}' > beside.gitconfig`];
    const command = attempts.map((attempt, index) => `(${attempt}) 2>/dev/null && echo 'done: ${index}'`).join('; ');
    const result = await runTool(terminal(workspace.path), { command: `${command}; echo end` });
    expect(result.content).toBe('end\nexit code: 0');
    expect((await readdir(workspace.path)).sort()).toStrictEqual(['.git', 'settings.gitconfig', 'shared']);
    hostGit(workspace.path, ['status', '--short']);
    expect(existsSync(marker)).toBe(false);
  });

  test.each([
    { state: 'there', present: true },
    { state: 'missing', present: false },
  ])('a workspace file the person’s ~/.gitconfig includes ($state when the call starts) cannot be written or made, and the person’s git status runs nothing from it', async ({ present }) => {
    await using home = await tempFolder();
    await using elsewhere = await tempFolder();
    const workspace = path.join(home.path, 'project');
    await mkdir(workspace);
    const marker = path.join(elsewhere.path, 'fsmonitor-ran');
    const fsmonitor = `[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n`;
    // The person's Git, as in their own shell: their ~/.gitconfig, which includes a file of the workspace by a path
    // through a link and up, as the kernel resolves it.
    const personGit = (args: readonly string[]) => spawnSync('git', args, { cwd: workspace, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home.path, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' }).status;
    expect(personGit(['init', '-q', '.'])).toBe(0);
    await mkdir(path.join(workspace, 'tools'));
    await symlink(path.join(workspace, 'tools'), path.join(home.path, 'tools'));
    await writeFile(path.join(home.path, '.gitconfig'), '[include]\n\tpath = tools/../.gitconfig.local\n');
    if (present) await writeFile(path.join(workspace, '.gitconfig.local'), '[user]\n\tname = a\n');
    vi.stubEnv('HOME', home.path);
    try {
      const result = await runTool(terminal(workspace), { command: `(printf '${fsmonitor}' >> .gitconfig.local) 2>/dev/null && echo done; echo end` });
      expect(result.content).toBe('end\nexit code: 0');
    } finally {
      vi.unstubAllEnvs();
    }
    expect(await readFile(path.join(workspace, '.gitconfig.local'), 'utf8').catch(() => undefined)).toBe(present ? '[user]\n\tname = a\n' : undefined);
    personGit(['status', '--short']);
    expect(existsSync(marker)).toBe(false);
  });

  test.each([
    { named: 'relative, each repository’s own', hooksPath: '.githooks', hooks: (workspace: string) => path.join(workspace, '.githooks') },
    { named: 'in a workspace that holds the home folder', hooksPath: '~/.git-hooks', hooks: (workspace: string) => path.join(workspace, '.git-hooks') },
  ])('a hooks folder the person’s own ~/.gitconfig names ($named) cannot be made or written, and the person’s commit runs nothing from it', async ({ hooksPath, hooks }) => {
    await using home = await tempFolder();
    await using elsewhere = await tempFolder();
    // The workspace is the home folder in the second case; a project folder of it in the first.
    const workspace = hooksPath.startsWith('~') ? home.path : path.join(home.path, 'project');
    await mkdir(workspace, { recursive: true });
    const marker = path.join(elsewhere.path, 'hook-ran');
    await writeFile(path.join(home.path, '.gitconfig'), `[core]\n\thooksPath = ${hooksPath}\n[user]\n\temail = a@example.com\n\tname = a\n`);
    const personGit = (args: readonly string[]) => spawnSync('git', args, { cwd: workspace, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home.path, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' }).status;
    expect(personGit(['init', '-q', '.'])).toBe(0);
    const folder = hooks(workspace);
    vi.stubEnv('HOME', home.path);
    try {
      const plant = `mkdir -p ${folder} 2>/dev/null; (printf '#!/bin/sh\\ntouch ${marker}\\n' > ${folder}/pre-commit && chmod +x ${folder}/pre-commit) 2>/dev/null && echo planted; echo end`;
      expect((await runTool(terminal(workspace), { command: plant })).content).toBe('end\nexit code: 0');
    } finally {
      vi.unstubAllEnvs();
    }
    personGit(['commit', '-q', '--allow-empty', '-m', 'x']);
    expect(existsSync(marker)).toBe(false);
  });

  test('a call is killed when the person’s git config replaces a workspace file their ~/.gitconfig includes, held read-only under it, and the file is put back', async () => {
    await using home = await tempFolder();
    const workspace = path.join(home.path, 'project');
    await mkdir(workspace);
    const local = path.join(workspace, '.gitconfig.local');
    await writeFile(path.join(home.path, '.gitconfig'), '[include]\n\tpath = ~/project/.gitconfig.local\n');
    await writeFile(local, '[user]\n\tname = a\n');
    vi.stubEnv('HOME', home.path);
    try {
      const running = runTool(terminal(workspace), { command: 'touch started; for i in $(seq 1 1000); do printf "[core]\\n\\tfsmonitor = x\\n" >> .gitconfig.local 2>/dev/null; sleep 0.02; done; echo finished' });
      await vi.waitFor(() => expect(existsSync(path.join(workspace, 'started'))).toBe(true), { timeout: 20_000 });
      // git config writes a new file and renames it over, which lifts the hold in the call's view.
      expect(spawnSync('git', ['config', '--file', local, 'user.email', 'a@example.com']).status).toBe(0);
      const result = await running;
      expect(result.isError).toBe(true);
      expect(result.content).toContain(`(stopped: ${local} was replaced while the call ran`);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(await readFile(local, 'utf8')).toBe('[user]\n\tname = a\n');
  });

  test('a .git file is read-only whatever it names, one leading outside the workspace (a linked worktree) too', async () => {
    await using main = await tempFolder();
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'worktree');
    expect(hostGit(main.path, ['init', '-q', '.'])).toBe(0);
    expect(hostGit(main.path, ['-c', 'user.email=a@example.com', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'first'])).toBe(0);
    expect(hostGit(main.path, ['worktree', 'add', '-q', workspace])).toBe(0);
    const gitFile = await readFile(path.join(workspace, '.git'), 'utf8');
    const result = await runTool(terminal(workspace), { command: "echo 'gitdir: evil' > .git; mv .git moved; rm .git; cat .git" });
    expect(result.content).toMatch(/^\S*: line 1: \.git: Read-only file system\n/);
    expect(result.content).toContain(`mv: cannot move '.git' to 'moved': Device or resource busy\nrm: cannot remove '.git': Device or resource busy\n${gitFile}exit code: 0`);
    expect(await readFile(path.join(workspace, '.git'), 'utf8')).toBe(gitFile);
  });

  test('not covered: a repository the call creates itself', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(terminal(workspace.path), { command: 'mkdir -p .git/hooks && touch .git/config .git/hooks/pre-commit && echo created' });
    expect(result.content).toBe('created\nexit code: 0');
  });
});

describe('the bubblewrap sandbox keeps a call from the kernel keyring', () => {
  // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0): the session keyring the server was started in.
  const code = [
    'import ctypes, os, platform',
    'libc = ctypes.CDLL(None, use_errno=True)',
    "number = {'x86_64': 250, 'aarch64': 219}[platform.machine()]",
    'found = libc.syscall(number, 0, -3, 0)',
    "print('refused' if found == -1 and ctypes.get_errno() == 1 else f'keyring {found} errno {ctypes.get_errno()}')",
  ].join('\n');
  const PATH = ['/usr/bin', '/bin', process.env.PATH].join(':');

  test.skipIf(!['x64', 'arm64'].includes(process.arch))('keyctl is refused, so the session keyring the server runs in is out of reach', async () => {
    await using workspace = await tempFolder();
    const tools = createBuiltinTools({ workspace: workspace.path, env: { PATH, HOME: process.env.HOME }, sandbox: 'bubblewrap' });
    expect(await runTool(toolNamed(tools, 'python'), { code })).toStrictEqual({ content: 'refused\nexit code: 0', isError: false });
  });
});

describe('the bubblewrap sandbox keeps a call from io_uring', () => {
  // io_uring_setup(1, params): its operations would run out of the filter's sight (an IORING_OP_OPENAT made a set-user-ID file).
  const code = [
    'import ctypes',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'params = ctypes.create_string_buffer(120)',
    'ring = libc.syscall(425, 1, params)',
    "print('refused' if ring == -1 and ctypes.get_errno() == 1 else f'ring {ring} errno {ctypes.get_errno()}')",
  ].join('\n');
  const PATH = ['/usr/bin', '/bin', process.env.PATH].join(':');
  const onHost = spawnSync('python3', ['-c', code], { env: { PATH }, encoding: 'utf8' }).stdout.trim();
  const usable = /^ring \d+ errno 0$/.test(onHost);

  test.skipIf(!['x64', 'arm64'].includes(process.arch) || !usable)(
    `io_uring_setup is refused with EPERM${usable ? '' : ` (skipped: io_uring is not usable outside the sandbox either: ${onHost})`}`,
    async () => {
      await using workspace = await tempFolder();
      const tools = createBuiltinTools({ workspace: workspace.path, env: { PATH, HOME: process.env.HOME }, sandbox: 'bubblewrap' });
      expect(await runTool(toolNamed(tools, 'python'), { code })).toStrictEqual({ content: 'refused\nexit code: 0', isError: false });
    },
  );
});

describe('the bubblewrap sandbox keeps a call from Linux AIO', () => {
  // io_setup(1, &ctx): each context reserves events of the machine's one count (fs.aio-max-nr); a call that took them
  // all left every other program of every user EAGAIN from io_setup while it ran.
  const code = [
    'import ctypes, platform',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'ctx = ctypes.c_ulong(0)',
    "nr = {'x86_64': 206, 'aarch64': 0}[platform.machine()]",
    'got = libc.syscall(nr, 1, ctypes.byref(ctx))',
    "print('refused' if got == -1 and ctypes.get_errno() == 1 else f'io_setup {got} errno {ctypes.get_errno()}')",
  ].join('\n');
  const PATH = ['/usr/bin', '/bin', process.env.PATH].join(':');
  const onHost = spawnSync('python3', ['-c', code], { env: { PATH }, encoding: 'utf8' }).stdout.trim();
  const usable = onHost === 'io_setup 0 errno 0';

  test.skipIf(!['x64', 'arm64'].includes(process.arch) || !usable)(
    `io_setup is refused with EPERM${usable ? '' : ` (skipped: AIO is not usable outside the sandbox either: ${onHost})`}`,
    async () => {
      await using workspace = await tempFolder();
      const tools = createBuiltinTools({ workspace: workspace.path, env: { PATH, HOME: process.env.HOME }, sandbox: 'bubblewrap' });
      expect(await runTool(toolNamed(tools, 'python'), { code })).toStrictEqual({ content: 'refused\nexit code: 0', isError: false });
    },
  );
});

describe('the bubblewrap sandbox keeps a call from making set-user-ID files', () => {
  const PATH = ['/usr/bin', '/bin', process.env.PATH].join(':');
  // Each attempt prints its name when it made a set-user-ID or set-group-ID file; the last lines show what still works.
  const command = [
    'cp /bin/sh copy',
    'chmod 4755 copy 2>/dev/null; [ -u copy ] && echo chmod-4755',
    'chmod u+s copy 2>/dev/null; [ -u copy ] && echo chmod-u+s',
    'chmod g+s copy 2>/dev/null; [ -g copy ] && echo chmod-g+s',
    'install -m 4755 /bin/sh installed 2>/dev/null; [ -u installed ] && echo install-4755',
    "python3 -c \"import os; os.close(os.open('created', os.O_CREAT | os.O_WRONLY, 0o6755))\" 2>/dev/null; [ -u created ] && echo open-6755",
    'chmod 750 copy && stat -c %a copy',
    "python3 -c \"import os; os.close(os.open('plain', os.O_CREAT | os.O_WRONLY, 0o640)); print(oct(os.stat('plain').st_mode & 0o7777))\"",
    // openat with no O_CREAT and a mode holding S_ISUID, as a raw call (the C library would pass 0): the mode is unused.
    "python3 -c \"import ctypes, os, platform; libc = ctypes.CDLL(None, use_errno=True); fd = libc.syscall({'x86_64': 257, 'aarch64': 56}[platform.machine()], -100, b'plain', os.O_RDONLY, 0o4755); print(fd >= 0)\"",
  ].join('; ');

  test.skipIf(!['x64', 'arm64'].includes(process.arch))('chmod, install and open with S_ISUID or S_ISGID are refused; other modes and reads work', async () => {
    await using workspace = await tempFolder();
    const tools = createBuiltinTools({ workspace: workspace.path, env: { PATH, HOME: process.env.HOME }, sandbox: 'bubblewrap' });
    expect(await runTool(toolNamed(tools, 'terminal'), { command })).toStrictEqual({ content: '750\n0o640\nTrue\nexit code: 0', isError: false });
    for (const name of ['copy', 'installed', 'created']) {
      const mode = await stat(path.join(workspace.path, name)).then((found) => found.mode & 0o7000, () => 0);
      expect(mode, name).toBe(0);
    }
  });
});

describe('the bubblewrap sandbox limits the processes of a call', () => {
  // Whether forks are then refused is seen as an ordinary user only (root is exempt): tool-sandbox.integration.test.ts.
  const limits = "grep 'Max processes' /proc/self/limits | tr -s ' '; ulimit -H -u 100000 2>/dev/null || echo 'cannot raise it'";

  test('to 1024 by default, or as set, soft and hard, and the command cannot raise it', async () => {
    await using workspace = await tempFolder();
    expect((await runTool(terminal(workspace.path), { command: limits })).content).toBe('Max processes 1024 1024 processes \ncannot raise it\nexit code: 0');
    expect((await runTool(terminal(workspace.path, { maxProcesses: 64 }), { command: limits })).content).toBe('Max processes 64 64 processes \ncannot raise it\nexit code: 0');
  });
});

describe('the bubblewrap sandbox limits the open files of each process of a call', () => {
  // Opens /dev/null until refused: without the limit, up to the server's own (often 20,000 or far more).
  const openAll = [
    "python3 -c '",
    'import os',
    'held = []',
    'try:',
    '    while len(held) < 100000: held.append(os.open("/dev/null", os.O_RDONLY))',
    'except OSError as error: print(error.strerror)',
    'print("opened", len(held))',
    "'",
    "grep 'Max open files' /proc/self/limits | tr -s ' '; ulimit -H -n 100000 2>/dev/null || echo 'cannot raise it'",
  ].join('\n');

  test('to 1024, soft and hard: an open past it fails with EMFILE, and the command cannot raise it', async () => {
    await using workspace = await tempFolder();
    const PATH = ['/usr/bin', '/bin', process.env.PATH].join(':');
    const result = await runTool(terminal(workspace.path, { env: { PATH } }), { command: openAll });
    // Descriptors 0, 1 and 2, and python's own, are open already.
    const opened = Number(/^opened (\d+)$/m.exec(result.content)?.[1]);
    expect(opened).toBeGreaterThan(1000);
    expect(opened).toBeLessThanOrEqual(1021);
    expect(result.content).toBe(`Too many open files\nopened ${opened}\nMax open files 1024 1024 files \ncannot raise it\nexit code: 0`);
  });
});

describe('the bubblewrap sandbox ends a call’s SysV shared memory with the call', () => {
  const SEGMENT_BYTES = 64 * 1024 * 1024;
  // Makes a segment, fills it, detaches (no process holds it then), says its IPC namespace in ./held, and sleeps.
  const code = [
    'import ctypes, os, time',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'libc.shmat.restype = ctypes.c_void_p',
    `shmid = libc.shmget(0, ${SEGMENT_BYTES}, 0o1600)`,
    'address = libc.shmat(shmid, None, 0)',
    `ctypes.memset(address, 1, ${SEGMENT_BYTES})`,
    'libc.shmdt(ctypes.c_void_p(address))',
    'limits = [open(f"/proc/sys/kernel/{name}").read().strip() for name in ("shmmax", "shmall", "shmmni")]',
    'open("held", "w").write(" ".join([os.readlink("/proc/self/ns/ipc"), str(shmid), *limits]))',
    'time.sleep(300)',
  ].join('\n');

  /** Host pids of the processes in the IPC namespace named like `ipc:[4026532178]`. */
  const inNamespace = (namespace: string) =>
    readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((entry) => {
        try {
          return readlinkSync(`/proc/${entry}/ns/ipc`) === namespace;
        } catch {
          return false;
        }
      });

  test('a segment no process holds, of a call killed at its time limit, goes with the call’s IPC namespace', async () => {
    await using workspace = await tempFolder();
    const PATH = ['/usr/bin', '/bin', process.env.PATH].join(':');
    const result = runTool(terminal(workspace.path, { env: { PATH } }), { command: `python3 -c '${code}'` }, callContext({ timeoutMs: 5_000 }));
    const held = await vi.waitFor(() => readFileSync(path.join(workspace.path, 'held'), 'utf8'), { timeout: 5_000, interval: 50 });
    const [namespace = '', shmid, shmmax, shmall, shmmni] = held.split(' ');
    // Where bubblewrap starts in a namespace of the call's own, those of ipcSysctls at the default size (512 MiB, 4096
    // segments); else the kernel's defaults in bubblewrap's namespace: no practical bound on size.
    const pages = String((DEFAULT_TMPFS_MIB * 1024 * 1024) / Number(spawnSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).stdout.trim()));
    expect({ shmmax, shmall, shmmni }).toStrictEqual(
      namespaced ? { shmmax: String(DEFAULT_TMPFS_MIB * 1024 * 1024), shmall: pages, shmmni: '4096' } : { shmmax: '18446744073692774399', shmall: '18446744073692774399', shmmni: '4096' },
    );
    // While the call runs, its namespace holds the segment (its size in the kernel's own list), the host's does not.
    const [member] = inNamespace(namespace);
    const listed = spawnSync('nsenter', [`--ipc=/proc/${member}/ns/ipc`, 'cat', '/proc/sysvipc/shm'], { encoding: 'utf8' }).stdout;
    expect(listed).toMatch(new RegExp(`^\\s*\\d+\\s+${shmid}\\s+\\d+\\s+${SEGMENT_BYTES}\\s`, 'm'));
    expect(readFileSync('/proc/sysvipc/shm', 'utf8')).not.toMatch(new RegExp(`^\\s*\\d+\\s+${shmid}\\s+\\d+\\s+${SEGMENT_BYTES}\\s`, 'm'));
    expect((await result).content).toMatch(/timed out after 5000 ms\)$/);
    // No process is left in it: the kernel freed the namespace, and every segment in it.
    await vi.waitFor(() => expect(inNamespace(namespace)).toStrictEqual([]), { timeout: 10_000 });
  });
});
