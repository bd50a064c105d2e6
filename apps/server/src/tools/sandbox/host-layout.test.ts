import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempFolder } from '../test-support';
import { hostLayout, lookupInside } from './host-layout';

describe('where a lookup enters a socket folder', () => {
  test('follows links as the kernel does, relative or absolute, through a linked folder, and names the path inside the folder as spelled there', async () => {
    await using root = await tempFolder();
    const at = (...parts: string[]) => path.join(root.path, ...parts);
    await mkdir(at('run/resolve'), { recursive: true });
    await mkdir(at('etc'));
    await mkdir(at('var'));
    await writeFile(at('run/resolve/stub.conf'), 'nameserver 127.0.0.53\n');
    await symlink('../run', at('var/run'));
    // etc/resolv.conf -> var/run/resolvconf.conf (through the linked var/run) -> resolve/stub.conf, a link inside the folder.
    await symlink(at('var/run/resolvconf.conf'), at('etc/resolv.conf'));
    await symlink('resolve/stub.conf', at('run/resolvconf.conf'));
    await writeFile(at('etc/hosts'), '127.0.0.1 localhost\n');
    await symlink('hosts', at('etc/hosts-link'));

    const folders = [at('run')];
    expect(lookupInside(at('etc/resolv.conf'), folders)).toBe(at('run/resolvconf.conf'));
    expect(lookupInside(at('var/run/resolve/../resolve/stub.conf'), folders)).toBe(at('run/resolve/stub.conf'));
    expect(lookupInside(at('etc/hosts-link'), folders)).toBeUndefined();
    expect(lookupInside(at('etc/missing'), folders)).toBeUndefined();
  });

  test('a loop of links is given up on', async () => {
    await using root = await tempFolder();
    await symlink('b', path.join(root.path, 'a'));
    await symlink('a', path.join(root.path, 'b'));
    expect(lookupInside(path.join(root.path, 'a'), [path.join(root.path, 'run')])).toBeUndefined();
  });

  test('on this machine, /run is covered, and each file kept lies in a covered folder', () => {
    const layout = hostLayout();
    expect(layout.maskedFolders).toContain('/run');
    for (const file of layout.keptFiles) expect(layout.maskedFolders.some((folder) => file.path.startsWith(`${folder}/`))).toBe(true);
  });
});
