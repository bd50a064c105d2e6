import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitTopAboveWorkspace } from './git-top-above';
import { tempFolder } from '../tools/test-support';

/** A Git directory in `folder` as git tells one (`HEAD`, `objects`, `refs`), with a `.git/commondir` that is a FIFO. */
async function gitDirectoryWithFifo(folder: string, fifo: 'commondir' | 'gitfile'): Promise<void> {
  if (fifo === 'gitfile') {
    execFileSync('mkfifo', [path.join(folder, '.git')]);
    return;
  }
  await mkdir(path.join(folder, '.git', 'objects'), { recursive: true });
  await mkdir(path.join(folder, '.git', 'refs'), { recursive: true });
  await writeFile(path.join(folder, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  execFileSync('mkfifo', [path.join(folder, '.git', 'commondir')]);
}

describe('gitTopAboveWorkspace', () => {
  // A FIFO that no one writes holds an open of it for reading until someone does: read on the server's thread, it held
  // every client, each later judging too. An allowed `tar -x` can put one in the workspace (found in review).
  it.each(['commondir', 'gitfile'] as const)('is not held by a FIFO in a .git of the workspace (%s): git dies on it, and the lookup goes on', async (fifo) => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'app');
    const sub = path.join(workspace, 'sub');
    await mkdir(sub, { recursive: true });
    await gitDirectoryWithFifo(sub, fifo);
    expect(gitTopAboveWorkspace(workspace)(sub)).toBeUndefined();
  });
});
