import { lstatSync, statSync } from 'node:fs';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { nextFileClockTick, tempFolder } from './test-support';
import { FolderScans } from './browser-profiles';
import { HiddenPathMovedError, HiddenPaths } from './hidden-paths';

/** A workspace holding a data folder and a token file, as when the server starts in the home folder. */
async function home(folder: string) {
  const dataDir = path.join(folder, '.local', 'share', 'airlock');
  const tokenFile = path.join(folder, 'secrets', 'token');
  await mkdir(dataDir, { recursive: true });
  await mkdir(path.dirname(tokenFile));
  await writeFile(path.join(dataDir, 'airlock.db'), 'db');
  await writeFile(tokenFile, 'token');
  return { dataDir, tokenFile };
}

const refusal = (hidden: HiddenPaths) => {
  try {
    hidden.masks();
  } catch (error) {
    if (error instanceof HiddenPathMovedError) return { entry: error.entry, change: error.change };
    throw error;
  }
  return undefined;
};

describe('hidden paths', () => {
  test('are masked at their real place, by kind, while they stay there', async () => {
    await using folder = await tempFolder();
    const { dataDir, tokenFile } = await home(folder.path);
    const hidden = new HiddenPaths([dataDir, tokenFile, path.join(folder.path, 'missing-key')]);
    const masks = [
      { path: dataDir, folder: true },
      { path: tokenFile, folder: false },
    ];
    expect(hidden.masks()).toStrictEqual(masks);
    await writeFile(tokenFile, 'rewritten in place');
    expect(hidden.masks()).toStrictEqual(masks);
  });

  test('a folder moved away with its parent refuses the next call, until it is back', async () => {
    await using folder = await tempFolder();
    const { dataDir, tokenFile } = await home(folder.path);
    const hidden = new HiddenPaths([dataDir, tokenFile]);
    await rename(path.join(folder.path, '.local', 'share'), path.join(folder.path, '.local', 'share2'));
    expect(refusal(hidden)).toStrictEqual({ entry: dataDir, change: 'gone' });
    await rename(path.join(folder.path, '.local', 'share2'), path.join(folder.path, '.local', 'share'));
    expect(refusal(hidden)).toBeUndefined();
  });

  test('a folder or file replaced at its place refuses the next call', async () => {
    await using folder = await tempFolder();
    const { dataDir, tokenFile } = await home(folder.path);
    const hidden = new HiddenPaths([dataDir, tokenFile]);
    await rename(path.join(folder.path, '.local'), path.join(folder.path, '.moved'));
    await mkdir(dataDir, { recursive: true });
    expect(refusal(hidden)).toStrictEqual({ entry: dataDir, change: 'replaced' });
    await rm(path.join(folder.path, '.local'), { recursive: true });
    await rename(path.join(folder.path, '.moved'), path.join(folder.path, '.local'));
    await rename(tokenFile, `${tokenFile}.old`);
    await writeFile(tokenFile, 'another');
    expect(refusal(hidden)).toStrictEqual({ entry: tokenFile, change: 'replaced' });
  });

  test('a path missing at first is masked once it appears, and held to what appeared', async () => {
    await using folder = await tempFolder();
    const keyFile = path.join(folder.path, 'keys', 'key');
    const hidden = new HiddenPaths([keyFile]);
    expect(hidden.masks()).toStrictEqual([]);
    await mkdir(path.dirname(keyFile));
    await writeFile(keyFile, 'key');
    expect(hidden.masks()).toStrictEqual([{ path: keyFile, folder: false }]);
    await rename(path.dirname(keyFile), path.join(folder.path, 'keys2'));
    expect(refusal(hidden)).toStrictEqual({ entry: keyFile, change: 'gone' });
  });

  test("others' folders are masked where they are at each use, and one moved or removed refuses nothing", async () => {
    await using folder = await tempFolder();
    const { dataDir } = await home(folder.path);
    const profile = path.join(folder.path, '.config', 'chromium');
    let others = [profile];
    const hidden = new HiddenPaths([dataDir], { others: () => others });
    expect(hidden.masks()).toStrictEqual([{ path: dataDir, folder: true }]);
    await mkdir(profile, { recursive: true });
    expect(hidden.masks()).toStrictEqual([
      { path: dataDir, folder: true },
      { path: profile, folder: true },
    ]);
    expect(hidden.known().paths).toStrictEqual([dataDir, profile]);
    await rename(path.join(folder.path, '.config'), path.join(folder.path, '.config2'));
    others = [profile, path.join(folder.path, '.config2', 'chromium')];
    expect(hidden.masks()).toStrictEqual([
      { path: dataDir, folder: true },
      { path: path.join(folder.path, '.config2', 'chromium'), folder: true },
    ]);
    await rm(path.join(folder.path, '.config2'), { recursive: true });
    expect(hidden.masks()).toStrictEqual([{ path: dataDir, folder: true }]);
    expect(hidden.known().paths).toStrictEqual([dataDir]);
  });

  test("others' paths reached through links are masked where the links lead; a link to nowhere or a path under a file is not there", async () => {
    await using folder = await tempFolder();
    const real = path.join(folder.path, 'profiles', 'firefox');
    await mkdir(real, { recursive: true });
    await writeFile(path.join(folder.path, 'a-file'), 'x');
    await symlink(path.join(folder.path, 'profiles'), path.join(folder.path, 'linked'));
    await symlink(path.join(folder.path, 'missing'), path.join(folder.path, 'dangling'));
    const others = [path.join(folder.path, 'linked', 'firefox'), path.join(folder.path, 'dangling'), path.join(folder.path, 'a-file', 'below'), path.join(folder.path, 'none')];
    const hidden = new HiddenPaths([], { others: () => others });
    expect(hidden.masks()).toStrictEqual([{ path: real, folder: true }]);
    expect(hidden.known().paths).toStrictEqual([real]);
    // The link to nowhere made to lead somewhere: found at the next use.
    await mkdir(path.join(folder.path, 'missing'));
    // In no set order: others' paths are looked for folder by folder.
    expect(hidden.known().paths.toSorted()).toStrictEqual([real, path.join(folder.path, 'missing')].toSorted());
  });

  describe("others' folders kept track of between uses (FolderScans.present)", () => {
    // nextFileClockTick: a change gets a change time other than the one its folder had at the last look, needed here
    // only because the clock below ages every folder at once.

    /** Scans whose clock puts `folder`'s last change 10 s back (settled), counting each name looked at in it. */
    function settledScans(folder: string) {
      const looks = { count: 0 };
      const scans = new FolderScans({
        now: () => statSync(folder, { bigint: true }).ctimeNs + 10_000_000_000n,
        isEntry: (file) => {
          if (path.dirname(file) === folder) looks.count += 1;
          return lstatSync(file, { throwIfNoEntry: false }) !== undefined;
        },
      });
      return { scans, looks };
    }

    test('a folder that holds still is not looked through again; a history written into it later is hidden at the next use', async () => {
      await using folder = await tempFolder();
      const names = ['.bash_history', '.zsh_history', '.python_history'];
      const others = names.map((name) => path.join(folder.path, name));
      const { scans, looks } = settledScans(folder.path);
      const hidden = new HiddenPaths([], { others: () => others, scans });
      expect(hidden.known().paths).toStrictEqual([]);
      expect(hidden.known().paths).toStrictEqual([]);
      expect(looks.count).toBe(names.length);
      nextFileClockTick(folder.path);
      await writeFile(others[1]!, 'AIRLOCK_TOKEN=secret npm start\n');
      expect(hidden.known().paths).toStrictEqual([others[1]]);
      expect(hidden.masks()).toStrictEqual([{ path: others[1], folder: false }]);
      nextFileClockTick(folder.path);
      await rename(others[1]!, others[0]!);
      expect(hidden.known().paths).toStrictEqual([others[0]]);
    });

    test("a history's copies and saves in progress made later in a folder that held still are hidden at the next use, links named so are not", async () => {
      await using folder = await tempFolder();
      const history = path.join(folder.path, '.bash_history');
      await writeFile(history, 'AIRLOCK_TOKEN=secret npm start\n');
      const { scans } = settledScans(folder.path);
      const hidden = new HiddenPaths([], { others: () => [history], scans });
      expect(hidden.known().paths).toStrictEqual([history]);
      expect(hidden.known().paths).toStrictEqual([history]);
      nextFileClockTick(folder.path);
      await writeFile(`${history}~`, 'AIRLOCK_TOKEN=secret npm start\n');
      expect(hidden.known().paths.toSorted()).toStrictEqual([history, `${history}~`].toSorted());
      nextFileClockTick(folder.path);
      await writeFile(`${history}-4242.tmp`, 'AIRLOCK_TOKEN=secret npm start\n');
      await symlink(path.join(folder.path, 'elsewhere'), `${history}.bak`);
      expect(hidden.known().paths.toSorted()).toStrictEqual([history, `${history}~`, `${history}-4242.tmp`].toSorted());
    });

    test('a link whose target appears later, its folder unchanged, is hidden where it leads', async () => {
      await using folder = await tempFolder();
      const home = path.join(folder.path, 'home');
      await mkdir(home);
      const target = path.join(folder.path, 'elsewhere', 'mozilla');
      await symlink(target, path.join(home, '.mozilla'));
      const { scans } = settledScans(home);
      const hidden = new HiddenPaths([], { others: () => [path.join(home, '.mozilla')], scans });
      expect(hidden.known().paths).toStrictEqual([]);
      await mkdir(target, { recursive: true });
      expect(hidden.known().paths).toStrictEqual([target]);
    });

    test('a folder put in place of another (a link to a folder elsewhere) is looked through again', async () => {
      await using folder = await tempFolder();
      const config = path.join(folder.path, '.config');
      await mkdir(config);
      const { scans } = settledScans(config);
      const profile = path.join(config, 'chromium');
      const hidden = new HiddenPaths([], { others: () => [profile], scans });
      expect(hidden.known().paths).toStrictEqual([]);
      const elsewhere = path.join(folder.path, 'elsewhere');
      await mkdir(path.join(elsewhere, 'chromium'), { recursive: true });
      await rename(config, path.join(folder.path, 'old-config'));
      await symlink(elsewhere, config);
      expect(hidden.known().paths).toStrictEqual([path.join(elsewhere, 'chromium')]);
    });
  });

  test('the refusal says what moved and that nothing runs until it is back', () => {
    expect(new HiddenPathMovedError('/home/me/.local/share/airlock', 'gone').message).toBe(
      'Refused: "/home/me/.local/share/airlock", which tool calls must not see, has been moved or removed since the server started, ' +
        'so it cannot be hidden where it is now. Nothing was run: calls that run processes (terminal, python) are refused until it is back at its place.',
    );
  });

  test("an editor's copies of a hidden file there now are masked and known with it, links named so are not", async () => {
    await using folder = await tempFolder();
    const { tokenFile } = await home(folder.path);
    await writeFile(`${tokenFile}~`, 'token');
    await writeFile(path.join(path.dirname(tokenFile), '.token.swp'), 'token');
    await symlink(path.join(folder.path, '.local'), path.join(path.dirname(tokenFile), '#token#'));
    const hidden = new HiddenPaths([tokenFile]);
    const copies = [`${tokenFile}~`, path.join(path.dirname(tokenFile), '.token.swp')];
    expect(hidden.masks()).toStrictEqual([tokenFile, ...copies].map((file) => ({ path: file, folder: false })));
    expect(hidden.known().paths).toStrictEqual([tokenFile, ...copies]);
  });

  test("the copies other editors and tools save beside a hidden file are masked with it; a lock link and other names are not", async () => {
    await using folder = await tempFolder();
    const { tokenFile } = await home(folder.path);
    const beside = (name: string) => path.join(path.dirname(tokenFile), name);
    // JetBrains' safe write, Kate's swap, vim's later swap names, patch's rejects, an atomic save's temporary file.
    const copies = ['token.~7~', '.token.swm', '.token.kate-swp', 'token___jb_old___', 'token___jb_tmp___', 'token.rej', 'token.tmp'].map(beside);
    for (const copy of copies) await writeFile(copy, 'token');
    // Emacs's lock is a link that names who edits the file, and holds none of it; `token.pub` is another file.
    await symlink('me@host.1234:1700000000', beside('.#token'));
    await writeFile(beside('token.pub'), 'public');
    const hidden = new HiddenPaths([tokenFile]);
    expect(hidden.masks()).toStrictEqual([tokenFile, ...copies].map((file) => ({ path: file, folder: false })));
  });

  test("the copies of a hidden file whose name starts with a dot: vim adds no second dot to its swap's name", async () => {
    await using folder = await tempFolder();
    const keyFile = path.join(folder.path, '.openai-key');
    await writeFile(keyFile, 'key');
    const beside = (name: string) => path.join(folder.path, name);
    // vim's swap of `.openai-key` is `.openai-key.swp` (its undo file `..openai-key.un~`); Kate's swap and vim's undo
    // file are taken under both names.
    const copies = ['.openai-key.swp', '.openai-key.swo', '.openai-key.swn', '..openai-key.un~', '.openai-key.un~', '..openai-key.kate-swp', '.openai-key.kate-swp'];
    for (const copy of copies) await writeFile(beside(copy), 'key');
    await writeFile(beside('.openai-key.pub'), 'public');
    const hidden = new HiddenPaths([keyFile]);
    expect(hidden.masks().map((mask) => path.basename(mask.path)).sort()).toStrictEqual(['.openai-key', ...copies].sort());
  });

  test("a history's save in progress, `<name>-<digits>.tmp` (bash and readline write it, then rename it over the history), is masked with it", async () => {
    await using folder = await tempFolder();
    const history = path.join(folder.path, '.bash_history');
    await writeFile(history, 'echo before');
    const beside = (name: string) => path.join(folder.path, name);
    await writeFile(beside('.bash_history-13426.tmp'), 'echo before');
    // Not a save of the history: other words before `.tmp`, or a link named so.
    await writeFile(beside('.bash_history-old.tmp'), 'other');
    await writeFile(beside('.bash_history-12.tmp.1'), 'other');
    await symlink(folder.path, beside('.bash_history-99.tmp'));
    const hidden = new HiddenPaths([history]);
    expect(hidden.masks()).toStrictEqual([history, beside('.bash_history-13426.tmp')].map((file) => ({ path: file, folder: false })));
  });
});
