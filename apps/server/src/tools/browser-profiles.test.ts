import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { browserPlaces, browserProfileFolders } from './browser-profiles';
import { tempFolder } from './test-support';

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

  it('looks in XDG_DATA_HOME as well as ~/.local/share', async () => {
    await using home = await tempFolder();
    await mkdir(path.join(home.path, 'data', 'qutebrowser'), { recursive: true });
    const found = browserProfileFolders(browserPlaces({ HOME: home.path, XDG_DATA_HOME: path.join(home.path, 'data') }));
    expect(found).toContain(path.join(home.path, 'data', 'qutebrowser'));
  });
});
