import type * as NodeFs from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { expect, test, vi } from 'vitest';
import { tempFolder } from '../test-support';
import { confineToBubblewrap } from './bubblewrap-confinement';
import { maskedNow } from './missing-git-paths-mask';

/** The descriptors opened through node:fs and not closed yet, and whether opening /dev/null fails as with no descriptor left. */
const files = vi.hoisted(() => ({ open: new Set<number>(), devNullFails: false }));

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof NodeFs>();
  return {
    ...actual,
    openSync: (...args: Parameters<typeof actual.openSync>) => {
      if (files.devNullFails && args[0] === '/dev/null') throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
      const fd = actual.openSync(...args);
      files.open.add(fd);
      return fd;
    },
    closeSync: (fd: number) => {
      files.open.delete(fd);
      actual.closeSync(fd);
    },
  };
});

test('a start that runs out of descriptors while opening the empty files of its masks closes its guards and releases its masks', async () => {
  await using workspace = await tempFolder();
  // No .git/config: it is masked with an empty file, copied from /dev/null.
  await mkdir(path.join(workspace.path, '.git/hooks'), { recursive: true });
  files.open.clear();
  files.devNullFails = true;
  try {
    const start = () =>
      confineToBubblewrap({ file: 'true', args: [], cwd: workspace.path, env: {} }, { bwrap: '/nonexistent/bwrap', policy: { workspace: workspace.path, network: false } });
    expect(start).toThrow('EMFILE');
  } finally {
    files.devNullFails = false;
  }
  expect([...files.open]).toStrictEqual([]);
  expect(maskedNow(path.join(workspace.path, '.git/config'))).toBe(false);
});
