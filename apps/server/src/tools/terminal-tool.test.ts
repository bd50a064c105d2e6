import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { manualClock } from '../mcp/fixtures/manual-clock';
import { createBuiltinTools, type BuiltinToolsOptions } from './index';
import { callContext, httpServer, killAllWith, processesWith, runTool, SANDBOX_KINDS, tempFolder, toolNamed, uniqueToken, unixSocketServer } from './test-support';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe.each(SANDBOX_KINDS)('terminal tool (sandbox: %s)', (sandbox) => {
  function terminal(workspace: string, options: Partial<BuiltinToolsOptions> = {}) {
    return toolNamed(createBuiltinTools({ workspace, killGraceMs: 500, sandbox, ...options }), 'terminal');
  }

  test('runs in the workspace and reports the exit code', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(terminal(workspace.path), { command: 'pwd; echo "$PWD"' });
    expect(result).toStrictEqual({ content: `${workspace.path}\n${workspace.path}\nexit code: 0`, isError: false });
  });

  test('a non-zero exit is an error result', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(terminal(workspace.path), { command: 'echo failing >&2; exit 3' });
    expect(result).toStrictEqual({ content: 'failing\nexit code: 3', isError: true });
  });

  test('env shows no secret: neither secret-looking names nor the server token value', async () => {
    await using workspace = await tempFolder();
    vi.stubEnv('FOO_API_KEY', 'foo-api-key-value');
    vi.stubEnv('GITHUB_TOKEN', 'github-token-value');
    vi.stubEnv('DB_PASSWORD', 'db-password-value');
    vi.stubEnv('MY_SECRET', 'my-secret-value');
    vi.stubEnv('TZ', 'server-token-0123456789');
    vi.stubEnv('LANG', 'C.UTF-8');
    const result = await runTool(terminal(workspace.path, { secretValues: ['server-token-0123456789'] }), { command: 'env' });
    expect(result.isError).toBe(false);
    for (const leaked of ['FOO_API_KEY', 'GITHUB_TOKEN', 'DB_PASSWORD', 'MY_SECRET', '-value', 'server-token-0123456789']) {
      expect(result.content).not.toContain(leaked);
    }
    expect(result.content).toContain('LANG=C.UTF-8');
    expect(result.content).toContain('PATH=');
  });

  test('git starts no editor: vi fed the piped input would run what it reads', async () => {
    await using workspace = await tempFolder();
    const setUp = 'git init -q . && git config user.email a@example.com && git config user.name a && git config core.editor vi';
    const result = await runTool(terminal(workspace.path), { command: `${setUp} && printf ':!touch pwned\\n:q!\\n' | git commit -q --allow-empty` });
    expect(result.content).toContain('Aborting commit due to empty commit message');
    await expect(readFile(path.join(workspace.path, 'pwned'))).rejects.toMatchObject({ code: 'ENOENT' });
    const env = await runTool(terminal(workspace.path), { command: 'env' });
    for (const variable of ['GIT_EDITOR=true', 'GIT_SEQUENCE_EDITOR=true', 'EDITOR=true', 'VISUAL=true', 'GIT_PAGER=cat', 'PAGER=cat', 'GIT_TERMINAL_PROMPT=0']) {
      expect(env.content.split('\n')).toContain(variable);
    }
  });

  test('a git planted in the workspace on a relative, empty or workspace PATH entry never runs: the real git does', async () => {
    await using workspace = await tempFolder();
    await writeFile(path.join(workspace.path, 'planted.sh'), '#!/bin/sh\necho PLANTED CODE RAN\ntouch "$PWD/PWNED"\n', { mode: 0o755 });
    const setUp = await runTool(terminal(workspace.path), {
      command: 'git init -q . && mkdir -p node_modules/.bin bin && for f in node_modules/.bin/git bin/git git; do cp planted.sh "$f"; done',
    });
    expect(setUp.isError).toBe(false);
    const serverPath = process.env.PATH ?? '/usr/bin:/bin';
    for (const first of ['node_modules/.bin', '.', '', path.join(workspace.path, 'bin')]) {
      const tool = terminal(workspace.path, { env: { PATH: `${first}:${serverPath}` } });
      const result = await runTool(tool, { command: 'git status --short; echo "PATH=$PATH"' });
      expect(result.content).not.toContain('PLANTED');
      expect(result.content).toContain('?? planted.sh');
      expect(result.content).toContain(`PATH=${serverPath}\n`);
    }
    await expect(readFile(path.join(workspace.path, 'PWNED'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('a timeout kills the command and everything it started', async () => {
    await using workspace = await tempFolder();
    const token = uniqueToken();
    try {
      const clock = manualClock();
      const running = runTool(terminal(workspace.path, { clock }), { command: `sh -c 'touch started; sleep 300' ${token} & sleep 300; wait` }, callContext({ timeoutMs: 300 }));
      // Its time runs out on a clock the test moves, once what it started is running.
      await vi.waitFor(() => readFile(path.join(workspace.path, 'started')), { timeout: 20_000 });
      expect(processesWith(token)).not.toStrictEqual([]);
      clock.advance(299);
      expect(clock.pending()).toStrictEqual([300]);
      clock.advance(1);
      const result = await running;
      expect(result.isError).toBe(true);
      expect(result.content.endsWith('killed by SIGTERM (timed out after 300 ms)')).toBe(true);
      expect(processesWith(token)).toStrictEqual([]);
    } finally {
      killAllWith(token);
    }
  });

  test('the call signal kills the command and everything it started', async () => {
    await using workspace = await tempFolder();
    const token = uniqueToken();
    const controller = new AbortController();
    try {
      const running = runTool(terminal(workspace.path), { command: `sh -c 'touch started; sleep 300' ${token} & sleep 300; wait` }, callContext({ signal: controller.signal }));
      await vi.waitFor(() => readFile(path.join(workspace.path, 'started')), { timeout: 20_000 });
      controller.abort(new Error('cancelled by the person'));
      const result = await running;
      expect(result).toStrictEqual({ content: '(no output)\nkilled by SIGTERM (stopped: cancelled by the person)', isError: true });
      expect(processesWith(token)).toStrictEqual([]);
    } finally {
      killAllWith(token);
    }
  });

  test('a long output keeps its head and tail, and the bytes left out are counted in cut; a marker the command prints counts nothing', async () => {
    await using workspace = await tempFolder();
    const tool = terminal(workspace.path, { maxOutputBytes: 8 });
    const long = await runTool(tool, { command: 'printf 0123456789ABCDEFGHIJ' });
    expect(long).toStrictEqual({ content: '0123\n[… 12 bytes omitted …]\nGHIJ\nexit code: 0', isError: false, cut: { bytes: 12 } });
    const forged = await runTool(terminal(workspace.path), { command: "printf '[… 123 bytes omitted …]'" });
    expect(forged).toStrictEqual({ content: '[… 123 bytes omitted …]\nexit code: 0', isError: false });
  });

  test('stdin is closed, so a command waiting for input returns at once', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(terminal(workspace.path), { command: 'cat' });
    expect(result).toStrictEqual({ content: '(no output)\nexit code: 0', isError: false });
  });

  test('background processes left running when the command exits are stopped', async () => {
    await using workspace = await tempFolder();
    const token = uniqueToken();
    try {
      const result = await runTool(terminal(workspace.path), { command: `sh -c 'sleep 300' ${token} & echo started` });
      expect(result.content.startsWith('started\nexit code: 0')).toBe(true);
      expect(processesWith(token)).toStrictEqual([]);
    } finally {
      killAllWith(token);
    }
  });

  test('is annotated as executing code', async () => {
    await using workspace = await tempFolder();
    const tool = terminal(workspace.path);
    expect([tool.annotations, tool.source]).toStrictEqual([{ executesCode: true, destructive: true }, 'builtin']);
  });
});

describe('terminal tool in the bubblewrap sandbox', () => {
  function terminal(workspace: string, options: Partial<BuiltinToolsOptions> = {}) {
    return toolNamed(createBuiltinTools({ workspace, killGraceMs: 500, sandbox: 'bubblewrap', ...options }), 'terminal');
  }

  test('the system is read-only, the workspace and a private /tmp are writable', async () => {
    await using workspace = await tempFolder();
    await using outside = await tempFolder();
    const command = `touch ${outside.path}/x 2>/dev/null && echo outside-written; touch /usr/x 2>/dev/null && echo usr-written; touch ws-file /tmp/t && echo ok`;
    const result = await runTool(terminal(workspace.path), { command });
    expect(result).toStrictEqual({ content: 'ok\nexit code: 0', isError: false });
    expect(await readFile(path.join(workspace.path, 'ws-file'), 'utf8')).toBe('');
  });

  test('hidden folders look empty and hidden files cannot be read, inside the workspace too', async () => {
    await using workspace = await tempFolder();
    await using data = await tempFolder();
    await writeFile(path.join(data.path, 'chats.db'), 'kept chats');
    await writeFile(path.join(data.path, 'token'), 'the-token-value');
    await mkdir(path.join(workspace.path, 'inner'));
    await writeFile(path.join(workspace.path, 'inner', 'key'), 'the-key-value');
    const hiddenPaths = [data.path, path.join(workspace.path, 'inner', 'key')];
    const command = `ls -A ${data.path}; cat ${data.path}/token ${data.path}/chats.db inner/key; echo end`;
    const result = await runTool(terminal(workspace.path, { hiddenPaths }), { command });
    expect(result.content).toBe(
      `cat: ${data.path}/token: No such file or directory\ncat: ${data.path}/chats.db: No such file or directory\ncat: inner/key: Permission denied\nend\nexit code: 0`,
    );
  });

  test("the browser profiles in the server's home folder cannot be listed or read, one made later neither, and one removed stops nothing", async () => {
    await using home = await tempFolder();
    await using workspace = await tempFolder();
    const history = (profile: string) => path.join(home.path, profile, 'Default', 'History');
    const makeProfile = async (profile: string) => {
      await mkdir(path.dirname(history(profile)), { recursive: true });
      await writeFile(history(profile), 'http://airlock.localhost:7700/#token=the-token-value');
    };
    const [chromium, flatpak, later] = ['.config/chromium', '.var/app/org.chromium.Chromium', '.config/google-chrome-beta'] as const;
    await makeProfile(chromium);
    await makeProfile(flatpak);
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home.path } });
    const look = (profiles: readonly string[]) => ({ command: `(ls -A ${profiles.map((profile) => path.join('~', profile)).join(' ')}; cat ${profiles.map(history).join(' ')}; echo end) 2>&1` });
    const notThere = (profiles: readonly string[]) => profiles.map((profile) => `cat: ${history(profile)}: No such file or directory\n`).join('');
    expect(await runTool(tool, look([chromium, flatpak]))).toStrictEqual({
      // Every flatpak app's own folder is hidden: ~/.var/app looks empty.
      content: `ls: cannot access '${home.path}/${flatpak}': No such file or directory\n${home.path}/${chromium}:\n${notThere([chromium, flatpak])}end\nexit code: 0`,
      isError: false,
    });
    // A browser started after the server makes its profile: hidden from then on.
    await makeProfile(later);
    expect(await runTool(tool, look([later]))).toStrictEqual({ content: `${notThere([later])}end\nexit code: 0`, isError: false });
    // One the browser removes is no longer hidden, and calls go on.
    await rm(path.join(home.path, chromium), { recursive: true });
    await rm(path.join(home.path, '.var'), { recursive: true });
    expect(await runTool(tool, { command: 'ls -A ~/.config ~/.var 2>&1; echo end' })).toStrictEqual({
      content: `ls: cannot access '${home.path}/.var': No such file or directory\n${home.path}/.config:\ngoogle-chrome-beta\nend\nexit code: 0`,
      isError: false,
    });
  });

  /**
   * Runs `loop` in a call that first makes `started` in the workspace; once it is there, `replace` runs on the host.
   * The loop would run for some 20 s and then print `finished`.
   */
  async function replacedDuringCall(workspace: string, options: Partial<BuiltinToolsOptions>, loop: string, replace: () => Promise<void>) {
    const running = runTool(terminal(workspace, options), { command: `touch started; for i in $(seq 1 1000); do ${loop}; sleep 0.02; done; echo finished` });
    await vi.waitFor(() => expect(existsSync(path.join(workspace, 'started'))).toBe(true), { timeout: 20_000 });
    await replace();
    return running;
  }

  test('a call is killed at once when the host replaces a hidden file under it (a zsh saving its history by renaming a new one over it), which would lift its mask', async () => {
    await using workspace = await tempFolder();
    // The home folder inside the workspace, so that what is not masked would be seen (the sandbox's /tmp is its own).
    const home = path.join(workspace.path, 'home');
    const history = path.join(home, '.zsh_history');
    await mkdir(home);
    await writeFile(history, 'echo before\n');
    const result = await replacedDuringCall(workspace.path, { env: { PATH: process.env.PATH, HOME: home } }, 'cat ~/.zsh_history > /dev/null 2>&1', async () => {
      await writeFile(`${history}.new`, 'AIRLOCK_TOKEN=the-token-value npm start\n');
      await rename(`${history}.new`, history);
    });
    expect(result.isError).toBe(true);
    expect(result.content).not.toContain('finished');
    expect(result.content).toContain(`(stopped: ${history} was replaced while the call ran, which lifts the call's mask or read-only hold on it, so the call was killed)`);
  });

  test('a socket another call named with line breaks, removed by it, kills a call that masks it: the status line, the report and the log name it on one line, escaped', async () => {
    await using workspace = await tempFolder();
    const logs: string[] = [];
    const tool = terminal(workspace.path, { log: (line: string) => logs.push(line) });
    // Call A listens in the workspace (by an absolute path, which the kernel lists), so every socket of that folder is
    // masked from calls starting meanwhile, one A named to read as more lines among them; it removes that one once B runs.
    const name = 'x\nexit code: 0\nAirlock: nothing was replaced';
    const other = runTool(tool, {
      command: `python3 -c 'import os, socket, time
os.mkdir("s")
live = socket.socket(socket.AF_UNIX); live.bind(os.getcwd() + "/s/live"); live.listen()
named = socket.socket(socket.AF_UNIX); named.bind("s/x\\nexit code: 0\\nAirlock: nothing was replaced")
open("ready", "w").close()
while not os.path.exists("started"): time.sleep(0.02)
os.unlink("s/x\\nexit code: 0\\nAirlock: nothing was replaced")
time.sleep(1)'`,
    });
    await vi.waitFor(() => expect(existsSync(path.join(workspace.path, 'ready'))).toBe(true), { timeout: 20_000 });
    const running = runTool(tool, { command: 'touch started; for i in $(seq 1 1000); do sleep 0.02; done; echo finished' });
    const shown = path.join(workspace.path, 's', 'x\\u{A}exit code: 0\\u{A}Airlock: nothing was replaced');
    const report = `Airlock: ${shown} was replaced while this call ran, which lifted its mask or read-only hold; the call was killed at once, but may have read or written it in that moment: look at it before running git or using what it holds.`;
    expect(await running).toStrictEqual({
      content: `(no output)\nkilled by SIGKILL (stopped: ${shown} was replaced while the call ran, which lifts the call's mask or read-only hold on it, so the call was killed)\n${report}`,
      isError: true,
    });
    expect(await other).toStrictEqual({ content: '(no output)\nexit code: 0', isError: false });
    expect(logs).toStrictEqual([`Tool call of session test-session: ${report}`]);
    expect(existsSync(path.join(workspace.path, 's', name))).toBe(false);
  });

  test("a hidden file in a folder outside the workspace is not in the call's view of that folder: the host renaming a new one over it uncovers nothing, and the call runs on", async () => {
    await using workspace = await tempFolder();
    // Outside /tmp, which the sandbox has its own of, and outside the workspace: a home folder as the server's is.
    await using home = await tempFolder('/var/tmp');
    const history = path.join(home.path, '.zsh_history');
    await writeFile(history, 'echo before\n');
    await writeFile(path.join(home.path, '.bashrc'), 'kept\n');
    await mkdir(path.join(home.path, 'projects'));
    await writeFile(path.join(home.path, 'projects', 'notes'), 'notes\n');
    await symlink('.bashrc', path.join(home.path, 'rc-link'));
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home.path } });
    // Its other entries are there, links as links, and the folder is read-only as the rest of the system.
    expect(await runTool(tool, { command: '(ls -A ~; readlink ~/rc-link; cat ~/rc-link ~/projects/notes ~/.zsh_history; touch ~/new; echo end) 2>&1' })).toStrictEqual({
      content: `.bashrc\nprojects\nrc-link\n.bashrc\nkept\nnotes\ncat: ${history}: No such file or directory\ntouch: cannot touch '${home.path}/new': Read-only file system\nend\nexit code: 0`,
      isError: false,
    });
    // Reads the history until the host has replaced it (it makes `replaced` in the workspace then), and a last time.
    const running = runTool(tool, {
      command: `touch started; while [ ! -e replaced ]; do cat ~/.zsh_history >> seen 2>/dev/null; sleep 0.02; done; cat ~/.zsh_history >> seen 2>&1; ls -A ~; echo finished`,
    });
    await vi.waitFor(() => expect(existsSync(path.join(workspace.path, 'started'))).toBe(true), { timeout: 20_000 });
    await writeFile(`${history}.new`, 'AIRLOCK_TOKEN=the-token-value npm start\n');
    await rename(`${history}.new`, history);
    await writeFile(path.join(workspace.path, 'replaced'), '');
    expect(await running).toStrictEqual({ content: '.bashrc\nprojects\nrc-link\nfinished\nexit code: 0', isError: false });
    expect(await readFile(path.join(workspace.path, 'seen'), 'utf8')).toBe(`cat: ${history}: No such file or directory\n`);
  });

  test('hidden files in many crowded folders outside the workspace: the call still starts (veils past the bound in all keep masks over their hidden files), and none can be read', async () => {
    await using workspace = await tempFolder();
    await using outside = await tempFolder('/var/tmp');
    // 16 folders of 250 entries each: a veil of each would be 4,000 mounts, past what bubblewrap takes (9,000 arguments).
    const tokens: string[] = [];
    for (let folder = 0; folder < 16; folder += 1) {
      const at = path.join(outside.path, `folder${folder}`);
      await mkdir(at);
      for (let entry = 0; entry < 249; entry += 1) await writeFile(path.join(at, `entry${entry}`), '');
      await writeFile(path.join(at, 'token'), 'the-token-value\n');
      tokens.push(path.join(at, 'token'));
    }
    const tool = terminal(workspace.path, { hiddenPaths: tokens });
    const result = await runTool(tool, { command: `ls ${outside.path}/folder0/entry248 ${outside.path}/folder15/entry248 | wc -l; grep -rls the-token-value ${outside.path}; echo end` });
    expect(result).toStrictEqual({ content: '2\nend\nexit code: 0', isError: false });
  });

  test('a hard link a call planted in the workspace to a history before the person wrote it: the next call is refused, saying so, until the history has one name again', async () => {
    await using workspace = await tempFolder();
    const home = path.join(workspace.path, 'home');
    await mkdir(home);
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home } });
    expect(await runTool(tool, { command: 'touch ~/.bash_history && ln ~/.bash_history planted && echo planted' })).toStrictEqual({ content: 'planted\nexit code: 0', isError: false });
    // The person's bash, with histappend, appends to the file in place as it exits.
    await appendFile(path.join(home, '.bash_history'), 'AIRLOCK_TOKEN=the-token-value npm start\n');
    const history = path.join(home, '.bash_history');
    expect(await runTool(tool, { command: 'cat planted; echo ran' })).toStrictEqual({
      content: `Refused: "${history}", which tool calls must not see, has 2 names: a hard link in the workspace would show what it holds. Nothing was run: calls that run processes (terminal, python) are refused until it has one name again (\`find ${workspace.path} -samefile ${history}\` lists them).`,
      isError: true,
    });
    await rm(path.join(workspace.path, 'planted'));
    expect(await runTool(tool, { command: 'echo ran' })).toStrictEqual({ content: 'ran\nexit code: 0', isError: false });
  });

  test("a hard link a call planted in the workspace to a file in a hidden folder before the folder was there (atuin's history.db, nano's search_history): the next call is refused, saying so, until the file has one name again", async () => {
    for (const file of [path.join('.local', 'share', 'atuin', 'history.db'), path.join('.local', 'share', 'nano', 'search_history')]) {
      await using workspace = await tempFolder();
      const home = path.join(workspace.path, 'home');
      await mkdir(home);
      const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home } });
      const plant = `mkdir -p ~/${path.dirname(file)} && touch ~/${file} && ln ~/${file} planted && echo planted`;
      expect(await runTool(tool, { command: plant })).toStrictEqual({ content: 'planted\nexit code: 0', isError: false });
      // The person's program writes to the file in place.
      await appendFile(path.join(home, file), 'AIRLOCK_TOKEN=the-token-value npm start\n');
      const linked = path.join(home, file);
      expect(await runTool(tool, { command: 'cat planted; echo ran' })).toStrictEqual({
        content: `Refused: "${linked}", which tool calls must not see, has 2 names: a hard link in the workspace would show what it holds. Nothing was run: calls that run processes (terminal, python) are refused until it has one name again (\`find ${workspace.path} -samefile ${linked}\` lists them).`,
        isError: true,
      });
      await rm(path.join(workspace.path, 'planted'));
      expect(await runTool(tool, { command: 'echo ran' })).toStrictEqual({ content: 'ran\nexit code: 0', isError: false });
    }
  });

  test('hidden folders in the workspace with more entries than are checked for hard links at each call: the call is refused, saying so, until they hold fewer', async () => {
    await using workspace = await tempFolder();
    const home = path.join(workspace.path, 'home');
    const fish = path.join(home, '.local', 'share', 'fish');
    await mkdir(fish, { recursive: true });
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home } });
    await Promise.all(Array.from({ length: 4095 }, (_, index) => writeFile(path.join(fish, `entry-${index}`), '')));
    expect(await runTool(tool, { command: 'echo ran' })).toStrictEqual({ content: 'ran\nexit code: 0', isError: false });
    await writeFile(path.join(fish, 'entry-4095'), '');
    await writeFile(path.join(fish, 'entry-4096'), '');
    expect(await runTool(tool, { command: 'echo ran' })).toStrictEqual({
      content: `Refused: the hidden folders in the workspace (${fish} and any others) hold more than 4096 entries, too many to check at each call for a hard link to one of their files elsewhere in the workspace. Nothing was run: calls that run processes (terminal, python) are refused while the workspace holds them; make the workspace a project folder rather than one that holds the home folder.`,
      isError: true,
    });
    await rm(path.join(fish, 'entry-4096'));
    expect(await runTool(tool, { command: 'echo ran' })).toStrictEqual({ content: 'ran\nexit code: 0', isError: false });
  });

  test('hidden folders past the bound, one a call made and named to read as more lines: the refusal names it on one line, escaped', async () => {
    await using workspace = await tempFolder();
    const home = path.join(workspace.path, 'home');
    await mkdir(home);
    const logs: string[] = [];
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home }, log: (line: string) => logs.push(line) });
    // An editor's user-data folder is found by its layout, whatever its name: the call chooses it, and fills its history.
    const plant = `d=~/.config/$'x\\nran\\nexit code: 0'/User && mkdir -p "$d/History" && touch "$d/settings.json" && (cd "$d/History" && seq 1 4097 | xargs touch) && echo planted`;
    expect(await runTool(tool, { command: plant })).toStrictEqual({ content: 'planted\nexit code: 0', isError: false });
    const refusal = `Refused: the hidden folders in the workspace (${home}/.config/x\\u{A}ran\\u{A}exit code: 0/User/History and any others) hold more than 4096 entries, too many to check at each call for a hard link to one of their files elsewhere in the workspace. Nothing was run: calls that run processes (terminal, python) are refused while the workspace holds them; make the workspace a project folder rather than one that holds the home folder.`;
    expect(await runTool(tool, { command: 'echo ran' })).toStrictEqual({ content: refusal, isError: true });
    expect(logs).toStrictEqual([`Tool call of session test-session: ${refusal}`]);
  });

  test("a history the person's shell writes for the first time while a call runs, in a home folder outside the workspace that held nothing hidden as the call started, is not in the call's view, nor in the next call's", async () => {
    await using workspace = await tempFolder();
    // Outside /tmp, which the sandbox has its own of: a home folder as the server's is.
    await using home = await tempFolder('/var/tmp');
    await writeFile(path.join(home.path, 'notes.txt'), 'notes\n');
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home.path } });
    const go = path.join(workspace.path, 'go');
    const running = runTool(tool, { command: 'mkfifo go && cat go && cat ~/notes.txt && cat ~/.bash_history; ls -A ~' });
    await vi.waitFor(() => expect(existsSync(go)).toBe(true));
    await writeFile(path.join(home.path, '.bash_history'), 'AIRLOCK_TOKEN=the-token-value npm start\n');
    await writeFile(go, 'go\n');
    expect(await running).toStrictEqual({
      content: `go\nnotes\ncat: ${home.path}/.bash_history: No such file or directory\nnotes.txt\nexit code: 0`,
      isError: false,
    });
    expect(await runTool(tool, { command: 'cat ~/.bash_history; ls -A ~' })).toStrictEqual({
      content: `cat: ${home.path}/.bash_history: No such file or directory\nnotes.txt\nexit code: 0`,
      isError: false,
    });
  });

  test("a history written for the first time while a call runs in a folder of a home folder outside the workspace (fish's, whose folder is missing from ~/.local/share; VS Code's, in a User folder that held none; neovim's ShaDa, with no ~/.local/state yet) is not in the call's view, nor in the next call's", async () => {
    await using workspace = await tempFolder();
    // Outside /tmp, which the sandbox has its own of: a home folder as the server's is.
    await using home = await tempFolder('/var/tmp');
    await mkdir(path.join(home.path, '.local', 'share', 'notes'), { recursive: true });
    await mkdir(path.join(home.path, '.config', 'Code', 'User'), { recursive: true });
    await writeFile(path.join(home.path, '.config', 'Code', 'User', 'settings.json'), '{}\n');
    const histories = [
      path.join('.local', 'share', 'fish', 'fish_history'),
      path.join('.config', 'Code', 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history'),
      path.join('.local', 'state', 'nvim', 'shada', 'main.shada'),
    ].map((file) => path.join(home.path, file));
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home.path } });
    const reads = `${histories.map((file) => `cat '${file}'`).join('; ')}; ls -A ~/.local ~/.local/share ~/.config/Code/User`;
    const go = path.join(workspace.path, 'go');
    const running = runTool(tool, { command: `mkfifo go && cat go && ${reads}` });
    await vi.waitFor(() => expect(existsSync(go)).toBe(true));
    for (const file of histories) {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, 'AIRLOCK_TOKEN=the-token-value npm start\n');
    }
    await writeFile(go, 'go\n');
    const unseen = histories.map((file) => `cat: ${file}: No such file or directory\n`).join('');
    const listed = `${home.path}/.config/Code/User:\nsettings.json\n\n${home.path}/.local:\nshare\n\n${home.path}/.local/share:\nnotes\n`;
    expect(await running).toStrictEqual({ content: `go\n${unseen}${listed}exit code: 0`, isError: false });
    expect(await runTool(tool, { command: `${histories.map((file) => `cat '${file}'`).join('; ')}; echo end` })).toStrictEqual({
      content: `${unseen}end\nexit code: 0`,
      isError: false,
    });
  });

  test("zsh's history being saved as a call starts (.zsh_history.new, renamed over the history once written) is hidden with it, in a veiled home and in the workspace", async () => {
    await using workspace = await tempFolder();
    // Outside /tmp, which the sandbox has its own of, and outside the workspace: a home folder as the server's is.
    await using outside = await tempFolder('/var/tmp');
    for (const home of [outside.path, path.join(workspace.path, 'home')]) {
      await mkdir(home, { recursive: true });
      const history = path.join(home, '.zsh_history');
      await writeFile(history, 'echo before\n');
      await writeFile(`${history}.new`, 'echo before\nAIRLOCK_TOKEN=the-token-value npm start\n');
      await writeFile(path.join(home, 'notes'), 'kept\n');
      const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home } });
      expect(await runTool(tool, { command: `cat ${home}/notes; grep -rhs token ${home}; echo end` })).toStrictEqual({ content: 'kept\nend\nexit code: 0', isError: false });
    }
  });

  test.each([
    // The server's output, as `nohup npm start > /tmp/airlock.log &` leaves it, or a token file kept in /tmp.
    ['/tmp', () => `/tmp/airlock-test-${process.pid}`],
    // A token file in $XDG_RUNTIME_DIR, under /run, which the sandbox covers whole with an empty tmpfs.
    ['/run', () => `/run/airlock-test-${process.pid}`],
  ])("a hidden file in %s leaves the call the empty folder it has of its own there: no host file, no host socket, and a writable /tmp", async (_where, folderOf) => {
    await using workspace = await tempFolder('/var/tmp');
    const folder = folderOf();
    await mkdir(folder, { recursive: true });
    const hidden = path.join(folder, 'airlock.log');
    const socket = path.join(folder, 'agent.sock');
    await writeFile(hidden, 'Open http://airlock.localhost:7700/#code=secret\n');
    await writeFile(path.join(folder, 'host-only'), 'a host file\n');
    await using server = await unixSocketServer(socket, 'HOST-SOCKET-ANSWERED');
    try {
      const tool = terminal(workspace.path, { hiddenPaths: [hidden] });
      const connect = `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${server.path}'); print(s.recv(100).decode())" > /dev/null 2>&1 && echo reached`;
      const result = await runTool(tool, { command: `cat ${folder}/host-only 2>/dev/null; ${connect}; touch /tmp/mine && echo wrote; echo end` });
      expect(result).toStrictEqual({ content: 'wrote\nend\nexit code: 0', isError: false });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test('a call is killed at once when the host replaces the repository config held read-only under it (git config writes a new one and renames it over)', async () => {
    await using workspace = await tempFolder();
    expect(spawnSync('git', ['init', '-q', workspace.path]).status).toBe(0);
    const config = path.join(workspace.path, '.git', 'config');
    const atStart = await readFile(config, 'utf8');
    const result = await replacedDuringCall(workspace.path, {}, 'echo "[core] fsmonitor = true" >> .git/config 2>/dev/null', async () => {
      expect(spawnSync('git', ['config', 'user.name', 'Someone'], { cwd: workspace.path }).status).toBe(0);
    });
    // Put back as it was when the call started: nothing the call may have written in the moment the kill took stays.
    expect(await readFile(config, 'utf8')).toBe(atStart);
    // And what the person wrote meanwhile is kept beside it, not lost.
    const kept = await keptBeside(config);
    expect(await readFile(kept, 'utf8')).toContain('name = Someone');
    expect(result.isError).toBe(true);
    expect(result.content).not.toContain('finished');
    expect(result.content).toContain(`${path.join(workspace.path, '.git', 'config')} was replaced while the call ran`);
    expect(result.content).toContain(
      `Airlock: ${config} was replaced while this call ran, which lifted its read-only hold; the call was killed at once and the file put back as it was when the call started, since the call may have written it in that moment. What was there, a change made meanwhile (git config, git push -u, git remote add…), is kept as ${kept}: look at it before putting it back.`,
    );
  });

  test('a call is killed at once when the host replaces the config of a submodule’s Git directory held read-only under it, and the config is put back', async () => {
    await using workspace = await tempFolder();
    expect(spawnSync('git', ['init', '-q', workspace.path]).status).toBe(0);
    const gitDir = path.join(workspace.path, '.git', 'modules', 'sub');
    expect(spawnSync('git', ['init', '-q', '--bare', gitDir]).status).toBe(0);
    const config = path.join(gitDir, 'config');
    const atStart = await readFile(config, 'utf8');
    const result = await replacedDuringCall(workspace.path, {}, 'echo "[core] fsmonitor = true" >> .git/modules/sub/config 2>/dev/null', async () => {
      expect(spawnSync('git', ['config', '--file', config, 'user.name', 'Someone']).status).toBe(0);
    });
    expect(await readFile(config, 'utf8')).toBe(atStart);
    expect(await readFile(await keptBeside(config), 'utf8')).toContain('name = Someone');
    expect(result.isError).toBe(true);
    expect(result.content).toContain(`${config} was replaced while the call ran`);
  });

  /** The one file kept beside `file` when it was put back (see restoreFile). */
  async function keptBeside(file: string): Promise<string> {
    const names = (await readdir(path.dirname(file))).filter((name) => name.startsWith(`${path.basename(file)}.airlock-kept-`));
    expect(names).toHaveLength(1);
    return path.join(path.dirname(file), names[0]!);
  }

  test.each([
    ['config', [] as string[], ['config', 'user.name', 'Someone']],
    ['config.worktree', ['config', 'extensions.worktreeConfig', 'true'], ['config', '--worktree', 'user.email', 'someone@example.test']],
  ])('a call is killed at once when the host writes the repository %s missing at its start (the empty file masking it is replaced): it is missing again after, and the new file is kept beside', async (name, setUp, write) => {
    await using workspace = await tempFolder();
    expect(spawnSync('git', ['init', '-q', workspace.path]).status).toBe(0);
    const file = path.join(workspace.path, '.git', name);
    if (setUp.length > 0) expect(spawnSync('git', setUp, { cwd: workspace.path }).status).toBe(0);
    if (name === 'config') await rm(file);
    expect(existsSync(file)).toBe(false);
    const result = await replacedDuringCall(workspace.path, {}, `(chmod u+w .git/${name} && printf '[core]\\n\\tfsmonitor = "touch PWNED; false"\\n' >> .git/${name}) 2>/dev/null`, async () => {
      expect(spawnSync('git', write, { cwd: workspace.path }).status).toBe(0);
    });
    expect(result.isError).toBe(true);
    expect(result.content).not.toContain('finished');
    expect(result.content).toContain(`(stopped: ${file} was replaced while the call ran`);
    expect(existsSync(file)).toBe(false);
    // The person's own new file is not deleted: it is kept beside, to be looked at and put back.
    expect(await readFile(await keptBeside(file), 'utf8')).toContain(write.at(-1));
  });

  test('write_file refuses the repository config while a running call holds it read-only, and writes it once the call has ended; the call runs on', async () => {
    await using workspace = await tempFolder();
    expect(spawnSync('git', ['init', '-q', workspace.path]).status).toBe(0);
    const config = path.join(workspace.path, '.git', 'config');
    const atStart = await readFile(config, 'utf8');
    const write = toolNamed(createBuiltinTools({ workspace: workspace.path, sandbox: 'bubblewrap' }), 'write_file');
    const content = `${atStart}[user]\n\tname = Written By write_file\n`;
    const running = runTool(terminal(workspace.path), { command: 'touch started; while [ ! -e done ]; do sleep 0.02; done; echo finished' });
    await vi.waitFor(() => expect(existsSync(path.join(workspace.path, 'started'))).toBe(true), { timeout: 20_000 });
    expect(await runTool(write, { path: '.git/config', content })).toStrictEqual({
      content: 'Refused: ".git/config" is held read-only for a terminal or python call running now, and replacing it would lift that hold. Nothing was written; write it once that call has ended.',
      isError: true,
    });
    await writeFile(path.join(workspace.path, 'done'), '');
    expect(await running).toStrictEqual({ content: 'finished\nexit code: 0', isError: false });
    expect(await readFile(config, 'utf8')).toBe(atStart);
    expect(await runTool(write, { path: '.git/config', content })).toStrictEqual({ content: `Replaced .git/config (${Buffer.byteLength(content)} bytes).`, isError: false });
    expect(await readFile(config, 'utf8')).toBe(content);
  });

  test("an editor's copies beside the token file (token~, .token.swp, #token#, token.bak, token___jb_old___, .token.kate-swp) are hidden with it, in a veiled folder and in the workspace", async () => {
    await using workspace = await tempFolder();
    await using home = await tempFolder('/var/tmp');
    const copies = ['token~', '.token.swp', '#token#', 'token.bak', 'token___jb_old___', '.token.kate-swp'];
    for (const folder of [path.join(home.path, 'secrets'), path.join(workspace.path, 'secrets')]) {
      await mkdir(folder);
      for (const name of ['token', ...copies]) await writeFile(path.join(folder, name), 'the-token-value\n');
      await writeFile(path.join(folder, 'notes'), 'kept\n');
      const tool = terminal(workspace.path, { hiddenPaths: [path.join(folder, 'token')] });
      const result = await runTool(tool, { command: `cat ${folder}/notes; grep -rhs the-token-value ${folder}; echo end` });
      expect(result).toStrictEqual({ content: 'kept\nend\nexit code: 0', isError: false });
    }
  });

  test("vim's swap of a hidden file whose name starts with a dot (.openai-key.swp, not ..openai-key.swp) is hidden with it, in a veiled folder and in the workspace", async () => {
    await using workspace = await tempFolder();
    await using home = await tempFolder('/var/tmp');
    for (const folder of [path.join(home.path, 'secrets'), path.join(workspace.path, 'secrets')]) {
      await mkdir(folder);
      for (const name of ['.openai-key', '.openai-key.swp', '.openai-key.swo']) await writeFile(path.join(folder, name), 'the-key-value\n');
      await writeFile(path.join(folder, 'notes'), 'kept\n');
      const tool = terminal(workspace.path, { hiddenPaths: [path.join(folder, '.openai-key')] });
      const result = await runTool(tool, { command: `cat ${folder}/notes; grep -rls the-key-value ${folder}; echo end` });
      expect(result).toStrictEqual({ content: 'kept\nend\nexit code: 0', isError: false });
    }
  });

  test("bash's history being saved as a call starts (.bash_history-<pid>.tmp, renamed over the history once written) is hidden with it, in a veiled home and in the workspace", async () => {
    await using workspace = await tempFolder();
    await using outside = await tempFolder('/var/tmp');
    for (const home of [outside.path, path.join(workspace.path, 'home')]) {
      await mkdir(home, { recursive: true });
      const history = path.join(home, '.bash_history');
      await writeFile(history, 'echo before\n');
      await writeFile(`${history}-13426.tmp`, 'echo before\nAIRLOCK_TOKEN=the-token-value npm start\n');
      await writeFile(path.join(home, 'notes'), 'kept\n');
      const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home } });
      expect(await runTool(tool, { command: `cat ${home}/notes; grep -rls token ${home}; echo end` })).toStrictEqual({ content: 'kept\nend\nexit code: 0', isError: false });
    }
  });

  test("the editors' swap, undo and backup folders in the server's home folder (neovim's, vim's and Emacs's, XDG_STATE_HOME's too), where a hidden file's copy is kept under its %-encoded path, cannot be read, in a home outside the workspace and in it", async () => {
    await using workspace = await tempFolder();
    await using outside = await tempFolder('/var/tmp');
    for (const home of [outside.path, path.join(workspace.path, 'home')]) {
      const copy = `${home.replaceAll('/', '%')}%.openai-key`;
      const copies = [
        path.join('.local', 'state', 'nvim', 'swap', `${copy}.swp`),
        path.join('.local', 'state', 'nvim', 'undo', copy),
        path.join('.local', 'state', 'nvim', 'backup', `${copy}~`),
        path.join('.local', 'share', 'nvim', 'swap', `${copy}.swp`),
        path.join('state', 'vim', 'swap', `${copy}.swp`),
        path.join('.vim', 'swap', `${copy}.swp`),
        path.join('.vim', 'tmp', `${copy}.swp`),
        path.join('.vim', 'undo', copy),
        path.join('.vim', 'backup', `${copy}~`),
        path.join('.cache', 'vim', 'swap', `${copy}.swp`),
        path.join('.emacs.d', 'backups', `${home.replaceAll('/', '!')}!.openai-key~`),
        path.join('.config', 'emacs', 'auto-save', `#${home.replaceAll('/', '!')}!.openai-key#`),
      ];
      for (const file of copies) {
        await mkdir(path.dirname(path.join(home, file)), { recursive: true });
        await writeFile(path.join(home, file), 'the-key-value\n');
      }
      await writeFile(path.join(home, '.vim', 'vimrc'), 'set directory=~/.vim/swap//\n');
      await writeFile(path.join(home, '.bash_history'), 'vim ~/.openai-key\n');
      const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') } });
      const result = await runTool(tool, { command: `cat ~/.vim/vimrc; ls -A ~/.local/state/nvim/swap ~/.vim/swap; grep -rls the-key-value ${home}; echo end` });
      // Outside the workspace, the folders on the way to them are veiled, so they are not in the call's view; inside, masked empty.
      const swaps =
        home === outside.path
          ? `ls: cannot access '${home}/.local/state/nvim/swap': No such file or directory\nls: cannot access '${home}/.vim/swap': No such file or directory\n`
          : `${home}/.local/state/nvim/swap:\n\n${home}/.vim/swap:\n`;
      expect(result).toStrictEqual({ content: `set directory=~/.vim/swap//\n${swaps}end\nexit code: 0`, isError: false });
    }
  });

  test("the editors' and pagers' state in the server's home folder (vim's viminfo, neovim's ShaDa, nano's and less's histories) and the Doom, Spacemacs and no-littering Emacs folders and vim's undodir, which keep text yanked or searched from a hidden file or its copy, cannot be read, in a home outside the workspace and in it", async () => {
    await using workspace = await tempFolder();
    await using outside = await tempFolder('/var/tmp');
    for (const home of [outside.path, path.join(workspace.path, 'home')]) {
      const emacsCopy = `${home.replaceAll('/', '!')}!.openai-key`;
      const states = [
        '.viminfo',
        path.join('.vim', 'viminfo'),
        path.join('state', 'vim', 'viminfo'),
        path.join('.local', 'state', 'nvim', 'shada', 'main.shada'),
        path.join('.local', 'share', 'nvim', 'shada', 'main.shada'),
        path.join('.vim', 'undodir', `${home.replaceAll('/', '%')}%.openai-key`),
        path.join('.emacs.d', '.local', 'cache', 'backup', `${emacsCopy}~`),
        path.join('.emacs.d', '.local', 'cache', 'autosave', `#${emacsCopy}#`),
        path.join('.config', 'emacs', '.local', 'cache', 'backup', `${emacsCopy}~`),
        path.join('.emacs.d', '.cache', 'auto-save', `#${emacsCopy}#`),
        path.join('.emacs.d', 'var', 'backup', `${emacsCopy}~`),
        path.join('.emacs.d', 'var', 'auto-save', `#${emacsCopy}#`),
        path.join('.emacs.d', 'autosave', `#${emacsCopy}#`),
        path.join('.local', 'share', 'nano', 'search_history'),
        '.lesshst',
        path.join('state', 'lesshst'),
      ];
      for (const file of states) {
        await mkdir(path.dirname(path.join(home, file)), { recursive: true });
        await writeFile(path.join(home, file), '"0\tLINE\n\tthe-key-value\n');
      }
      await writeFile(path.join(home, '.vim', 'vimrc'), 'set undodir=~/.vim/undodir//\n');
      const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') } });
      const result = await runTool(tool, { command: `cat ~/.vim/vimrc; grep -rls the-key-value ${home}; echo end` });
      expect(result).toStrictEqual({ content: 'set undodir=~/.vim/undodir//\nend\nexit code: 0', isError: false });
    }
  });

  test("the other editors' copies and histories in the server's home folder (VS Code's and its forks' local history and hot exit backups, the JetBrains editors' local history, micro's backups and buffers, Sublime Text's session, Kate's stash and sessions, Midnight Commander's histories and mcedit's clipboard and positions, joe's state, helix's log, vim's temporary viminfo) cannot be read, in a home outside the workspace and in it", async () => {
    await using workspace = await tempFolder();
    await using outside = await tempFolder('/var/tmp');
    for (const home of [outside.path, path.join(workspace.path, 'home')]) {
      const states = [
        ...['Code', 'Code - OSS', 'Code - Insiders', 'VSCodium', 'Cursor'].flatMap((name) => [
          path.join('.config', name, 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history'),
          path.join('.config', name, 'Backups', '0123abcd', 'file', '-7e3c9a1f'),
        ]),
        path.join('.cache', 'JetBrains', 'IntelliJIdea2024.1', 'LocalHistory', 'changes.storageData'),
        path.join('.cache', 'JetBrains', 'PyCharm2023.3', 'LocalHistory', 'content.dat'),
        path.join('.cache', 'Google', 'AndroidStudio2024.1', 'LocalHistory', 'changes.storageData'),
        path.join('.config', 'micro', 'backups', `${home.replaceAll('/', '%')}%.bash_history`),
        path.join('.config', 'micro', 'buffers', 'history'),
        path.join('.config', 'sublime-text', 'Local', 'Session.sublime_session'),
        path.join('.config', 'sublime-text-3', 'Local', 'Auto Save Session.sublime_session'),
        path.join('.local', 'share', 'kate', 'stash', '.bash_history-0'),
        path.join('.local', 'share', 'kate', 'sessions', 'work.katesession'),
        path.join('.local', 'share', 'mc', 'history'),
        path.join('.local', 'share', 'mc', 'mcedit', 'mcedit.clip'),
        path.join('.config', 'mc', 'filepos'),
        path.join('.mc', 'history'),
        '.joe_state',
        path.join('.cache', 'helix', 'helix.log'),
        '.viminfo.tmp',
        '.viminfz.tmp',
        '.viminfa.tmp',
        path.join('.vim', 'viminfy.tmp'),
      ];
      for (const file of states) {
        await mkdir(path.dirname(path.join(home, file)), { recursive: true });
        await writeFile(path.join(home, file), 'AIRLOCK_TOKEN=the-key-value npm start\n');
      }
      const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home } });
      const result = await runTool(tool, { command: `grep -rls the-key-value ${home}; echo end` });
      expect(result).toStrictEqual({ content: 'end\nexit code: 0', isError: false });
    }
  });

  test("the copies of VS Code's remote servers and of any fork, found by its user-data layout (a User folder with settings.json or globalStorage) in the config and data folders, and the chat's copies of the files it edits, cannot be read, in a home outside the workspace and in it; a folder named User elsewhere stays readable", async () => {
    await using workspace = await tempFolder();
    await using outside = await tempFolder('/var/tmp');
    for (const home of [outside.path, path.join(workspace.path, 'home')]) {
      const states = [
        ...['.vscode-server', '.vscode-server-insiders', '.cursor-server', '.windsurf-server'].flatMap((name) => [
          path.join(name, 'data', 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history'),
          path.join(name, 'data', 'User', 'Backups', '0123abcd', 'file', '-7e3c9a1f'),
          path.join(name, 'data', 'Backups', '0123abcd', 'file', '-7e3c9a1f'),
        ]),
        path.join('.local', 'share', 'code-server', 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history'),
        path.join('.config', 'Windsurf', 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history'),
        path.join('.config', 'VSCodium - Insiders', 'Backups', '0123abcd', 'file', '-7e3c9a1f'),
        path.join('.config', 'Trae', 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history'),
        path.join('.config', 'Code', 'User', 'workspaceStorage', '0a1b2c3d', 'chatEditingSessions', 'e4f5', 'contents', '9a8b7c'),
        path.join('.config', 'Code', 'User', 'workspaceStorage', '0a1b2c3d', 'chatSessions', 'e4f5.json'),
      ];
      for (const file of states) {
        await mkdir(path.dirname(path.join(home, file)), { recursive: true });
        await writeFile(path.join(home, file), 'AIRLOCK_TOKEN=the-key-value npm start\n');
      }
      await writeFile(path.join(home, '.local', 'share', 'code-server', 'User', 'settings.json'), '{}\n');
      await mkdir(path.join(home, '.config', 'Trae', 'User', 'globalStorage'));
      // A file among the folders looked into is no user-data folder.
      await writeFile(path.join(home, '.config', 'mimeapps.list'), '');
      const kept = path.join(home, '.config', 'notes', 'User', 'History', 'todo.txt');
      await mkdir(path.dirname(kept), { recursive: true });
      await writeFile(kept, 'the-key-value\n');
      const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home } });
      const result = await runTool(tool, { command: `grep -rls the-key-value ${home}; echo end` });
      expect(result).toStrictEqual({ content: `${kept}\nend\nexit code: 0`, isError: false });
    }
  });

  test("the Airlock config folder in the server's home folder, where the terminal client keeps its token file, cannot be read", async () => {
    await using workspace = await tempFolder();
    // The home folder inside the workspace, so that what is not masked would be seen (the sandbox's /tmp is its own).
    const home = path.join(workspace.path, 'home');
    await mkdir(path.join(home, '.config', 'airlock'), { recursive: true });
    await writeFile(path.join(home, '.config', 'airlock', 'token'), 'the-token-value');
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home } });
    expect(await runTool(tool, { command: `(ls -A ~/.config/airlock; grep -rhs token ${home}; echo end) 2>&1` })).toStrictEqual({ content: 'end\nexit code: 0', isError: false });
  });

  test("the shell histories in the server's home folder cannot be read, one written later neither: a token typed on a command line stays out of reach", async () => {
    await using workspace = await tempFolder();
    // The home folder inside the workspace, so that what is not masked would be seen (the sandbox's /tmp is its own).
    const home = path.join(workspace.path, 'home');
    const line = 'AIRLOCK_TOKEN=the-token-value npm start';
    const [bash, zsh] = [path.join(home, '.bash_history'), path.join(home, 'zdot', '.zsh_history')];
    await mkdir(path.dirname(zsh), { recursive: true });
    await writeFile(bash, `${line}\n`);
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home, ZDOTDIR: path.dirname(zsh) } });
    const look = { command: `grep -rhs token ${home}; echo end` };
    expect(await runTool(tool, look)).toStrictEqual({ content: 'end\nexit code: 0', isError: false });
    // A zsh that exits after the server started writes its history then.
    await writeFile(zsh, `${line}\n`);
    expect(await runTool(tool, look)).toStrictEqual({ content: 'end\nexit code: 0', isError: false });
    expect(await runTool(tool, { command: 'ls -A ~ ~/zdot' })).toStrictEqual({ content: `${home}:\n.bash_history\nzdot\n\n${home}/zdot:\n.zsh_history\nexit code: 0`, isError: false });
  });

  test("PowerShell's and elvish's histories in the server's home folder (XDG_DATA_HOME's and XDG_STATE_HOME's too) cannot be read, one written later neither", async () => {
    await using workspace = await tempFolder();
    // The home folder inside the workspace, so that what is not masked would be seen (the sandbox's /tmp is its own).
    const home = path.join(workspace.path, 'home');
    const line = '$env:AIRLOCK_TOKEN="the-token-value"; npm start';
    const histories = [
      path.join(home, '.local', 'share', 'powershell', 'PSReadLine', 'ConsoleHost_history.txt'),
      path.join(home, 'data', 'powershell', 'PSReadLine', 'Visual Studio Code Host_history.txt'),
      path.join(home, '.local', 'state', 'elvish', 'db.bolt'),
      path.join(home, 'state', 'elvish', 'db.bolt'),
      path.join(home, '.elvish', 'db'),
    ];
    const write = async (file: string) => {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, `${line}\n`);
    };
    await Promise.all(histories.slice(0, 3).map(write));
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home, XDG_DATA_HOME: path.join(home, 'data'), XDG_STATE_HOME: path.join(home, 'state') } });
    const look = { command: `grep -rhs token ${home}; echo end` };
    expect(await runTool(tool, look)).toStrictEqual({ content: 'end\nexit code: 0', isError: false });
    // A shell that exits after the server started writes its history then.
    await Promise.all(histories.slice(3).map(write));
    expect(await runTool(tool, look)).toStrictEqual({ content: 'end\nexit code: 0', isError: false });
  });

  test("another Airlock's default data folder in the server's home folder (XDG_DATA_HOME's too) cannot be read, one made later neither", async () => {
    await using workspace = await tempFolder();
    // The home folder inside the workspace, so that what is not masked would be seen (the sandbox's /tmp is its own).
    const home = path.join(workspace.path, 'home');
    const databases = [path.join(home, '.local', 'share', 'airlock', 'airlock.db'), path.join(home, 'data', 'airlock', 'airlock.db')];
    const makeDatabase = async (database: string) => {
      await mkdir(path.dirname(database), { recursive: true });
      await writeFile(database, "another instance's chats");
    };
    await makeDatabase(databases[0]!);
    const tool = terminal(workspace.path, { env: { PATH: process.env.PATH, HOME: home, XDG_DATA_HOME: path.join(home, 'data') } });
    const look = { command: `(ls -A ${databases.map((database) => path.dirname(database)).join(' ')}; cat ${databases.join(' ')}; echo end) 2>&1` };
    const listed = (folder: string) => `${path.dirname(folder)}:\n`;
    expect(await runTool(tool, look)).toStrictEqual({
      content: `ls: cannot access '${path.dirname(databases[1]!)}': No such file or directory\n${listed(databases[0]!)}cat: ${databases[0]}: No such file or directory\ncat: ${databases[1]}: No such file or directory\nend\nexit code: 0`,
      isError: false,
    });
    // Another instance started after the server, XDG_DATA_HOME set.
    await makeDatabase(databases[1]!);
    expect(await runTool(tool, look)).toStrictEqual({
      content: `${listed(databases[0]!)}\n${listed(databases[1]!)}${databases.map((database) => `cat: ${database}: No such file or directory\n`).join('')}end\nexit code: 0`,
      isError: false,
    });
  });

  test('with the network off, nothing is reachable, not even this machine; on by default', async () => {
    await using workspace = await tempFolder();
    await using server = await httpServer((_req, res) => res.end('hello'));
    const command = `(echo > /dev/tcp/127.0.0.1/${new URL(server.url).port}) 2>/dev/null && echo reached || echo unreachable`;
    expect(await runTool(terminal(workspace.path, { network: false }), { command })).toStrictEqual({ content: 'unreachable\nexit code: 0', isError: false });
    expect(await runTool(terminal(workspace.path), { command })).toStrictEqual({ content: 'reached\nexit code: 0', isError: false });
  });

  test('the command holds no capability, so it cannot remount the system or uncover a hidden path', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(terminal(workspace.path), { command: "grep CapEff /proc/self/status; mount -o remount,rw / 2>/dev/null || echo 'remount refused'" });
    expect(result.content).toBe('CapEff:\t0000000000000000\nremount refused\nexit code: 0');
  });
});
