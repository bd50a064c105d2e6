import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanSearchPath } from './search-path';
import { tempFolder } from './test-support';

describe('cleanSearchPath', () => {
  it('drops empty, relative and workspace entries, and a link in the workspace to a folder outside it, which a call can swap', async () => {
    await using root = await tempFolder();
    const workspace = path.join(root.path, 'ws');
    const outside = path.join(root.path, 'tools');
    await mkdir(path.join(workspace, 'bin'), { recursive: true });
    await mkdir(outside);
    // Leads outside now; a call may replace the link with a folder holding its own `git`.
    await symlink(outside, path.join(workspace, 'linked-bin'));
    // Written outside, leading into the workspace.
    await symlink(path.join(workspace, 'bin'), path.join(root.path, 'into-ws'));
    const entries = ['', '.', 'node_modules/.bin', path.join(workspace, 'bin'), path.join(workspace, 'linked-bin'), path.join(root.path, 'into-ws'), outside, '/usr/bin'];
    const cleaned = cleanSearchPath(entries.join(path.delimiter), workspace);
    expect(cleaned.path).toBe([outside, '/usr/bin'].join(path.delimiter));
    expect(cleaned.dropped).toStrictEqual(['', '.', 'node_modules/.bin', path.join(workspace, 'bin'), path.join(workspace, 'linked-bin'), path.join(root.path, 'into-ws')]);
  });
});
