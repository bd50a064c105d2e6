import { describe, expect, test } from 'vitest';
import { createBuiltinTools } from '../index';
import { runTool, tempFolder, toolNamed } from '../test-support';
import { canStage, inotifyLimits } from './namespace-limits';
import { probeBubblewrap } from './probe-bubblewrap';
import { bubblewrapArgs } from './sandbox-policy';

const NO_SOCKET_FOLDERS = { maskedFolders: [], keptFiles: [], keptLinks: [] };
const probe = await probeBubblewrap(true);

describe('the call’s /tmp and /dev/shm, mounted under /dev/shm of the namespace around bubblewrap', () => {
  test('are not when bubblewrap binds anything from /dev/shm, which that mount hides', () => {
    const args = (workspace: string, readOnly: string[] = []) => bubblewrapArgs({ workspace, readOnly, network: true, tmpfsBytes: 1_048_576 }, NO_SOCKET_FOLDERS);
    expect(canStage(args('/home/me/project'))).toBe(true);
    expect(canStage(args('/dev/shmem/project'))).toBe(true);
    expect(canStage(args('/dev/shm/project'))).toBe(false);
    expect(canStage(args('/home/me/project', ['/dev/shm/airlock-ask-x1']))).toBe(false);
  });

  test.skipIf(!probe.available || !('unshare' in probe && probe.unshare !== undefined))('a workspace in /dev/shm still runs its calls, with /tmp bounded in bytes', async () => {
    await using workspace = await tempFolder('/dev/shm');
    const terminal = toolNamed(createBuiltinTools({ workspace: workspace.path, sandbox: 'bubblewrap', tmpfsMiB: 8 }), 'terminal');
    const result = await runTool(terminal, { command: 'echo made > made && cat made && df -k /tmp | tail -1 | tr -s " " | cut -d " " -f 2' });
    expect(result).toStrictEqual({ content: 'made\n8192\nexit code: 0', isError: false });
  });
});

describe('the inotify instances and watches one call may hold', () => {
  test('an eighth of the user’s, and of watches at least 8192 or half the user’s, so a watch-mode tool still runs on a kernel of 8192', () => {
    expect(inotifyLimits({ instances: 128, watches: 8192 })).toStrictEqual({ instances: 16, watches: 4096 });
    expect(inotifyLimits({ instances: 128, watches: 16_384 })).toStrictEqual({ instances: 16, watches: 8192 });
    expect(inotifyLimits({ instances: 128, watches: 65_536 })).toStrictEqual({ instances: 16, watches: 8192 });
    expect(inotifyLimits({ instances: 128, watches: 192_546 })).toStrictEqual({ instances: 16, watches: 24_068 });
    expect(inotifyLimits({ instances: 1024, watches: 1_048_576 })).toStrictEqual({ instances: 128, watches: 131_072 });
    expect(inotifyLimits({ instances: 1, watches: 1 })).toStrictEqual({ instances: 1, watches: 1 });
  });
});

describe('a call where the namespace around bubblewrap cannot be made', () => {
  test.skipIf(!probe.available)('runs in bubblewrap alone, its /tmp bounded in bytes and the limit on open files set', async () => {
    if (!probe.available) return;
    await using workspace = await tempFolder();
    const sandbox = { kind: 'bubblewrap', bwrap: probe.bwrap, network: true, unbounded: 'no unshare at /usr/bin/unshare or /bin/unshare' } as const;
    const terminal = toolNamed(createBuiltinTools({ workspace: workspace.path, sandbox, tmpfsMiB: 8 }), 'terminal');
    const result = await runTool(terminal, { command: 'echo made > made && cat made && df -k /tmp | tail -1 | tr -s " " | cut -d " " -f 2 && ulimit -n' });
    expect(result).toStrictEqual({ content: 'made\n8192\n1024\nexit code: 0', isError: false });
  });
});
