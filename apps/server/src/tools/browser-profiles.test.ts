import { readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { browserPlaces, browserProfileFolders, FolderScans, MAX_LISTED_ENTRIES } from './browser-profiles';
import { nextFileClockTick, tempFolder } from './test-support';

describe('browserProfileFolders', () => {
  it('finds the profiles of the Chromium-based browsers, Firefox, and the Qt and GTK ones in config, cache and data folders', async () => {
    await using home = await tempFolder();
    const made = [
      '.config/chromium',
      '.config/Thorium',
      '.config/qutebrowser',
      '.config/falkon',
      '.cache/google-chrome-beta',
      '.local/share/qutebrowser',
      '.local/share/epiphany',
      '.local/share/konqueror',
    ];
    const unrelated = ['.config/git', '.local/share/operator-tools', '.local/share/airlock'];
    for (const folder of [...made, ...unrelated]) await mkdir(path.join(home.path, folder), { recursive: true });
    const found = browserProfileFolders(browserPlaces({ HOME: home.path }));
    for (const folder of made) expect(found).toContain(path.join(home.path, folder));
    for (const folder of unrelated) expect(found).not.toContain(path.join(home.path, folder));
  });

  it('reads a folder only up to its bound, and then takes the whole folder for one to hide (a call can fill it and touch it before each call)', async () => {
    await using home = await tempFolder();
    const config = path.join(home.path, '.config');
    await mkdir(path.join(config, 'google-chrome'), { recursive: true });
    for (let i = 0; i < MAX_LISTED_ENTRIES; i += 1) writeFileSync(path.join(config, `filler-${i}`), '');
    const found = browserProfileFolders(browserPlaces({ HOME: home.path }));
    expect(found).toContain(config);
    expect(found).not.toContain(path.join(config, 'google-chrome'));
    // At the bound or under it, read to the end as before.
    rmSync(path.join(config, 'filler-0'));
    expect(browserProfileFolders(browserPlaces({ HOME: home.path }))).toStrictEqual(expect.arrayContaining([path.join(config, 'google-chrome')]));
    expect(browserProfileFolders(browserPlaces({ HOME: home.path }))).not.toContain(config);
  });

  it('looks in XDG_DATA_HOME as well as ~/.local/share', async () => {
    await using home = await tempFolder();
    await mkdir(path.join(home.path, 'data', 'qutebrowser'), { recursive: true });
    const found = browserProfileFolders(browserPlaces({ HOME: home.path, XDG_DATA_HOME: path.join(home.path, 'data') }));
    expect(found).toContain(path.join(home.path, 'data', 'qutebrowser'));
  });

  describe('with the listings kept between calls (FolderScans)', () => {
    // nextFileClockTick: a change gets a change time other than the one of the read before. The clock that ages
    // listings here is put ahead on purpose (a real one keeps no listing this young, see the last test), which is what
    // makes this needed in the test alone.

    /** A FolderScans whose clock is `ahead` ns past the folder's last change, counting its reads of `.config`. */
    function counted(config: string, ahead: bigint) {
      const reads = { count: 0 };
      const scans = new FolderScans({
        now: () => statSync(config, { bigint: true }).ctimeNs + ahead,
        read: (folder) => {
          if (folder === config) reads.count += 1;
          return readdirSync(folder);
        },
      });
      return { scans, reads };
    }

    it('reads a folder again only once an entry is added, removed or renamed in it, and finds what changed', async () => {
      await using home = await tempFolder();
      const config = path.join(home.path, '.config');
      await mkdir(path.join(config, 'git'), { recursive: true });
      const places = browserPlaces({ HOME: home.path });
      const { scans, reads } = counted(config, 10_000_000_000n);
      const chromium = path.join(config, 'chromium');
      expect(browserProfileFolders(places, scans)).not.toContain(chromium);
      expect(browserProfileFolders(places, scans)).not.toContain(chromium);
      expect(reads.count).toBe(1);

      nextFileClockTick(config);
      await mkdir(chromium);
      expect(browserProfileFolders(places, scans)).toContain(chromium);
      expect(reads.count).toBe(2);
      nextFileClockTick(config);
      await rename(chromium, path.join(config, 'vivaldi'));
      const renamed = browserProfileFolders(places, scans);
      expect(renamed).toContain(path.join(config, 'vivaldi'));
      expect(renamed).not.toContain(chromium);
      nextFileClockTick(config);
      await rm(path.join(config, 'vivaldi'), { recursive: true });
      expect(browserProfileFolders(places, scans).filter((folder) => folder.startsWith(config))).toStrictEqual([]);
      expect(reads.count).toBe(4);
    });

    it('sees an entry made after the folder’s times were set back as they were (its change time cannot be)', async () => {
      await using home = await tempFolder();
      const config = path.join(home.path, '.config');
      await mkdir(path.join(config, 'git'), { recursive: true });
      const places = browserPlaces({ HOME: home.path });
      const { scans } = counted(config, 10_000_000_000n);
      const before = statSync(config);
      expect(browserProfileFolders(places, scans)).not.toContain(path.join(config, 'chromium'));
      nextFileClockTick(config);
      await mkdir(path.join(config, 'chromium'));
      utimesSync(config, before.atime, before.mtime);
      expect(browserProfileFolders(places, scans)).toContain(path.join(config, 'chromium'));
    });

    it('does not keep a listing read within two seconds of the folder’s last change: the next call reads it again', async () => {
      await using home = await tempFolder();
      const config = path.join(home.path, '.config');
      await mkdir(path.join(config, 'git'), { recursive: true });
      const places = browserPlaces({ HOME: home.path });
      const { scans, reads } = counted(config, 1_000_000_000n);
      browserProfileFolders(places, scans);
      browserProfileFolders(places, scans);
      expect(reads.count).toBe(2);
    });

    it('entriesWhere keeps its verdicts with the listing: none judged again while the folder holds still, but those it could not decide; every one once the folder changes', async () => {
      await using home = await tempFolder();
      const config = path.join(home.path, '.config');
      for (const name of ['yes', 'no', 'unsure']) await mkdir(path.join(config, name), { recursive: true });
      const { scans } = counted(config, 10_000_000_000n);
      const judged: string[] = [];
      const judge = (entry: string) => {
        const name = path.basename(entry);
        judged.push(name);
        return name === 'unsure' ? undefined : name.startsWith('yes');
      };
      const where = () => scans.entriesWhere(config, /^[^.]/, judge, 60_000_000_000n).map((entry) => path.basename(entry));
      expect(where()).toStrictEqual(['yes']);
      expect(judged.toSorted()).toStrictEqual(['no', 'unsure', 'yes']);
      judged.length = 0;
      expect(where()).toStrictEqual(['yes']);
      expect(judged).toStrictEqual(['unsure']);
      nextFileClockTick(config);
      await mkdir(path.join(config, 'yes-too'));
      judged.length = 0;
      expect(where().toSorted()).toStrictEqual(['yes', 'yes-too']);
      expect(judged.toSorted()).toStrictEqual(['no', 'unsure', 'yes', 'yes-too']);
    });

    it('entriesWhere judges every entry at each use while the folder’s listing is not kept (changed within two seconds)', async () => {
      await using home = await tempFolder();
      const config = path.join(home.path, '.config');
      await mkdir(path.join(config, 'no'), { recursive: true });
      const { scans } = counted(config, 0n);
      let judged = 0;
      const judge = () => {
        judged += 1;
        return false;
      };
      scans.entriesWhere(config, /^[^.]/, judge, 60_000_000_000n);
      scans.entriesWhere(config, /^[^.]/, judge, 60_000_000_000n);
      expect(judged).toBe(2);
    });

    it('entriesWhere judges at most maxUndecided undecided entries at each use; the rest are taken as false for a while', async () => {
      await using home = await tempFolder();
      const config = path.join(home.path, '.config');
      for (const name of ['a', 'b', 'c', 'd']) await mkdir(path.join(config, name), { recursive: true });
      let ahead = 10_000_000_000n;
      const scans = new FolderScans({ now: () => statSync(config, { bigint: true }).ctimeNs + ahead });
      let judged = 0;
      const judge = () => {
        judged += 1;
        return undefined;
      };
      const use = () => scans.entriesWhere(config, /^[^.]/, judge, 5_000_000_000n, 2);
      use();
      expect(judged).toBe(4);
      judged = 0;
      use();
      expect(judged).toBe(2);
      ahead += 5_000_000_000n;
      judged = 0;
      use();
      expect(judged).toBe(4);
    });

    it('entriesWhere judges an entry found false again once that verdict is as old as it is kept for, the folder still', async () => {
      await using home = await tempFolder();
      const config = path.join(home.path, '.config');
      await mkdir(path.join(config, 'fork'), { recursive: true });
      let ahead = 10_000_000_000n;
      const scans = new FolderScans({ now: () => statSync(config, { bigint: true }).ctimeNs + ahead });
      let answer = false;
      let judged = 0;
      const judge = () => {
        judged += 1;
        return answer;
      };
      const where = () => scans.entriesWhere(config, /^[^.]/, judge, 5_000_000_000n).map((entry) => path.basename(entry));
      expect(where()).toStrictEqual([]);
      answer = true;
      ahead += 4_000_000_000n;
      expect(where()).toStrictEqual([]);
      expect(judged).toBe(1);
      ahead += 1_000_000_000n;
      expect(where()).toStrictEqual(['fork']);
      answer = false;
      ahead += 60_000_000_000n;
      expect(where()).toStrictEqual(['fork']);
      expect(judged).toBe(2);
    });
  });
});
