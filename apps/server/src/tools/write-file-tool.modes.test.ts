import type * as FsPromises from 'node:fs/promises';
import { chmod, chown, readFile, stat, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { createBuiltinTools } from './index';
import { runTool, tempFolder, toolNamed } from './test-support';

/** The permissions of each file write_file creates, read from the file the moment it is made, before any content. */
const created: number[] = [];

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const recordingOpen: typeof actual.open = async (...args) => {
    const handle = await actual.open(...args);
    if (args[1] === 'wx') created.push((await handle.stat()).mode & 0o7777);
    return handle;
  };
  return { ...actual, open: vi.fn(recordingOpen) };
});

describe('write_file and the permissions of a file it replaces', () => {
  test('a private file is never readable by others while its new content is written', async () => {
    await using workspace = await tempFolder();
    const secret = path.join(workspace.path, '.env');
    await writeFile(secret, 'API_KEY=old\n');
    await chmod(secret, 0o600);
    created.length = 0;
    const write = toolNamed(createBuiltinTools({ workspace: workspace.path }), 'write_file');
    expect(await runTool(write, { path: '.env', content: 'API_KEY=new\n' })).toStrictEqual({ content: 'Replaced .env (12 bytes).', isError: false });
    // Another user who opened the temporary file beside it while it was readable would read the new key once written.
    expect(created.map((mode) => mode & 0o077)).toStrictEqual([0]);
    expect([await readFile(secret, 'utf8'), (await stat(secret)).mode & 0o777]).toStrictEqual(['API_KEY=new\n', 0o600]);
  });

  // A group this process may give a file other than the one its new files get: any as root, else one it is a member of.
  const { uid, gid } = userInfo();
  const otherGroup = uid === 0 ? gid + 4242 : (process.getgroups?.() ?? []).find((group) => group !== gid);

  test.skipIf(otherGroup === undefined)('a file shared with a group keeps that group: its new content goes to no other group', async () => {
    await using workspace = await tempFolder();
    const shared = path.join(workspace.path, 'team.env');
    await writeFile(shared, 'API_KEY=old\n');
    await chown(shared, uid, otherGroup ?? gid);
    await chmod(shared, 0o640);
    created.length = 0;
    const write = toolNamed(createBuiltinTools({ workspace: workspace.path }), 'write_file');
    expect(await runTool(write, { path: 'team.env', content: 'API_KEY=new\n' })).toStrictEqual({ content: 'Replaced team.env (12 bytes).', isError: false });
    // Made with the group of the process (its own, or one all users share), the file's group bits would show it to them.
    expect(created.map((mode) => mode & 0o077)).toStrictEqual([0]);
    const after = await stat(shared);
    expect([await readFile(shared, 'utf8'), after.gid, after.mode & 0o777]).toStrictEqual(['API_KEY=new\n', otherGroup, 0o640]);
  });
});
