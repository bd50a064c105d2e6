import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { createBuiltinTools } from '../index';
import { tempFolder } from '../test-support';
import { callOpenFiles, DEFAULT_MAX_OPEN_FILES, DEFAULT_MAX_PROCESSES, hostUserId, limitedWrapperScript, ownHostUserId, ownOpenFilesHardLimit, processLimitWarning } from './process-limit';

/** The shells /bin/sh is on Linux distributions, with the flag each sets the limit on processes with. */
const SHELLS = [
  { shell: '/bin/dash', flag: '-p' },
  { shell: '/bin/bash', flag: '-u' },
] as const;

/**
 * Runs `script` as `/bin/sh -c` would in the sandbox, in `shell`, stdin closed, with `prefix` put before it (a
 * function that stands in for a builtin).
 */
function runScript(shell: string, script: string, args: string[], options: { prefix?: string; user?: { uid: number; gid: number } } = {}): Promise<{ code: number | null; output: string }> {
  const child = spawn(shell, ['-c', `${options.prefix ?? ''}${script}`, ...args], { env: {}, stdio: ['ignore', 'pipe', 'pipe'], ...options.user });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

/** The soft and hard limits on processes in /proc/<pid>/limits text. */
function processLimits(limits: string): string[] {
  return /^Max processes\s+(\S+)\s+(\S+)/m.exec(limits)?.slice(1) ?? [];
}

/** The soft and hard limits on open files in /proc/<pid>/limits text. */
function openFileLimits(limits: string): string[] {
  return /^Max open files\s+(\S+)\s+(\S+)/m.exec(limits)?.slice(1) ?? [];
}

describe.each(SHELLS)('the limit on processes, set by $shell as /bin/sh', ({ shell, flag }) => {
  const missing = !existsSync(shell);

  test.skipIf(missing)('is set, soft and hard, before the command runs', async () => {
    const result = await runScript(shell, limitedWrapperScript({ maxProcesses: 64 }), ['/bin/cat', '/proc/self/limits']);
    expect(result.code).toBe(0);
    expect(processLimits(result.output)).toStrictEqual(['64', '64']);
    expect(openFileLimits(result.output)).toStrictEqual(['1024', '1024']);
  });

  test.skipIf(missing)('sets the limit on open files it is given, soft and hard', async () => {
    const result = await runScript(shell, limitedWrapperScript({ maxProcesses: 64, maxOpenFiles: 4096 }), ['/bin/cat', '/proc/self/limits']);
    expect(result.code).toBe(0);
    expect(openFileLimits(result.output)).toStrictEqual(['4096', '4096']);
  });

  test.skipIf(missing)('when the limit on open files alone cannot be set, the command is not run and the call says why', async () => {
    await using folder = await tempFolder();
    const marker = path.join(folder.path, 'ran');
    const stub = 'ulimit() { if [ "$1" = -n ]; then return 1; fi; command ulimit "$@"; }\n';
    const result = await runScript(shell, limitedWrapperScript({ maxProcesses: 64 }), ['/usr/bin/touch', marker], { prefix: stub });
    expect(result).toStrictEqual({ code: 126, output: 'airlock: /bin/sh in the sandbox could not limit this call to 1024 open files per process, so the command was not run\n' });
    expect(existsSync(marker)).toBe(false);
  });

  test.skipIf(missing)('a lower limit already in place is kept, and the command runs', async () => {
    // The outer shell lowers the limit, then becomes the inner one, as a user's own `ulimit` would leave it. Root
    // could raise it again (as nobody in the sandbox can), so root runs this as nobody.
    const user = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
    const result = await runScript(shell, `ulimit ${flag} 20 && exec ${shell} -c "$1" /bin/cat /proc/self/limits`, ['outer', limitedWrapperScript({ maxProcesses: 64 })], user === undefined ? {} : { user });
    expect(result.code).toBe(0);
    expect(processLimits(result.output)).toStrictEqual(['20', '20']);
  });

  test.skipIf(missing).each([
    ['fails', 'ulimit() { return 1; }\n'],
    ['claims success but sets nothing', 'ulimit() { return 0; }\n'],
  ])('when ulimit %s, the command is not run and the call says why', async (_, stub) => {
    await using folder = await tempFolder();
    const marker = path.join(folder.path, 'ran');
    const result = await runScript(shell, limitedWrapperScript({ maxProcesses: 16 }), ['/usr/bin/touch', marker], { prefix: stub });
    expect(result).toStrictEqual({ code: 126, output: 'airlock: /bin/sh in the sandbox could not limit this call to 16 processes, so the command was not run\n' });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('the limit setting', () => {
  test('a value out of range, or not a whole number, is refused before anything runs', () => {
    for (const value of [0, 15, 4_194_305, 64.5, Number.NaN]) {
      expect(() => limitedWrapperScript({ maxProcesses: value })).toThrow(RangeError);
      expect(() => createBuiltinTools({ workspace: '/tmp', maxProcesses: value })).toThrow('maxProcesses must be a whole number from 16 to 4194304');
    }
    expect(DEFAULT_MAX_PROCESSES).toBe(1024);
  });

  test('the limit on open files: a value out of range, or not a whole number, is refused before anything runs', () => {
    for (const value of [0, 15, 1_048_577, 64.5, Number.NaN]) {
      expect(() => limitedWrapperScript({ maxProcesses: 64, maxOpenFiles: value })).toThrow(RangeError);
      expect(() => createBuiltinTools({ workspace: '/tmp', maxOpenFiles: value })).toThrow('maxOpenFiles must be a whole number from 16 to 1048576');
    }
    expect(DEFAULT_MAX_OPEN_FILES).toBe(1024);
  });
});

describe('the start-up warning', () => {
  test('is given for the host’s root only, naming the limit', () => {
    expect(processLimitWarning(1024, 0)).toBe(
      'Warning: Airlock runs as root, so the limit of 1024 processes per tool call does not apply (Linux does not count root’s processes against it): ' +
        'a call you allow can fork until the machine runs out of processes or memory. Run Airlock as an ordinary user.',
    );
    expect(processLimitWarning(1024, 1000)).toBeNull();
    expect(processLimitWarning(1024, undefined)).toBeNull();
  });

  test('root in a user namespace (a rootless container) is the user it maps to, whose processes are counted', () => {
    expect(hostUserId(0, '         0          0 4294967295\n')).toBe(0);
    expect(hostUserId(0, '         0       1001          1\n')).toBe(1001);
    expect(hostUserId(5, '0 1001 1\n1 100000 65536\n')).toBe(100004);
    expect(hostUserId(1000, '0 0 4294967295\n')).toBe(1000);
    expect(hostUserId(0, undefined)).toBe(0);
    expect(hostUserId(undefined, '0 0 4294967295\n')).toBeUndefined();
    expect(ownHostUserId()).toBe(hostUserId(process.getuid?.(), readFileSync('/proc/self/uid_map', 'utf8')));
  });
});

describe('the open files of a call, against the server’s own hard limit', () => {
  test('the hard limit is read from the limits file; none when unlimited or unread', async () => {
    await using folder = await tempFolder();
    const file = path.join(folder.path, 'limits');
    const limits = (soft: string, hard: string) =>
      `Limit                     Soft Limit           Hard Limit           Units     \nMax processes             94000                94000                processes \nMax open files            ${soft.padEnd(20)} ${hard.padEnd(20)} files     \n`;
    writeFileSync(file, limits('1024', '20000'));
    expect(ownOpenFilesHardLimit(file)).toBe(20_000);
    writeFileSync(file, limits('1024', 'unlimited'));
    expect(ownOpenFilesHardLimit(file)).toBeUndefined();
    expect(ownOpenFilesHardLimit(path.join(folder.path, 'absent'))).toBeUndefined();
  });

  test('a setting above it is refused when given, lowered to it and said when the default', () => {
    expect(callOpenFiles({ setting: 4096, given: true, hardLimit: 4096 })).toStrictEqual({ maxOpenFiles: 4096 });
    expect(callOpenFiles({ setting: 4096, given: true, hardLimit: undefined })).toStrictEqual({ maxOpenFiles: 4096 });
    expect(callOpenFiles({ setting: 8192, given: true, hardLimit: 4096 })).toStrictEqual({
      refusal: "8192 is above this server's own limit on open files (4096, ulimit -Hn), which no process of a tool call can go past: raise that limit where Airlock starts, or give at most 4096",
    });
    expect(callOpenFiles({ setting: 1024, given: false, hardLimit: 512 })).toMatchObject({ maxOpenFiles: 512, warning: expect.stringContaining('its calls get 512.') });
  });
});
