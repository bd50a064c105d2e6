import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { browserPlaces, FolderScans } from './browser-profiles';
import { editorStatePaths } from './editor-state-paths';
import { tempFolder } from './test-support';

describe("a VS Code fork's user-data folder among the config folder's entries", () => {
  it('is found again once its User folder, removed to reset the editor, is made again at its next start, the config folder unchanged', async () => {
    await using home = await tempFolder();
    const fork = path.join(home.path, '.config', 'Some Fork');
    await mkdir(path.join(fork, 'User', 'globalStorage'), { recursive: true });
    let ahead = 0n;
    // Far past every change made here, so the config folder's listing is kept and the fork's folder has held still.
    const scans = new FolderScans({ now: () => BigInt(Date.now()) * 1_000_000n + 600_000_000_000n + ahead });
    const places = browserPlaces({ HOME: home.path });
    const history = path.join(fork, 'User', 'History');
    const found = () => editorStatePaths(places, {}, scans).includes(history);
    expect(found()).toBe(true);
    await rm(path.join(fork, 'User'), { recursive: true });
    // A kept listing of the config folder, made after the reset: the fork's folder holds no User folder now.
    await mkdir(path.join(home.path, '.config', 'another-app'));
    expect(found()).toBe(false);
    await mkdir(path.join(fork, 'User', 'globalStorage'), { recursive: true });
    ahead += 11_000_000_000n;
    expect(found()).toBe(true);
  });

});
