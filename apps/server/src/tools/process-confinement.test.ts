import { spawn } from 'node:child_process';
import type * as ChildProcessModule from 'node:child_process';
import { describe, expect, test, vi } from 'vitest';
import { CALL_MARKER_VARIABLE, runProcess, type RunProcessOptions } from './process-runner';
import { probeBubblewrap } from './sandbox/probe-bubblewrap';
import { SANDBOX_KINDS, tempFolder } from './test-support';

// Every process this module starts is recorded, and started as usual.
vi.mock('node:child_process', async (importOriginal) => {
  const actual = await importOriginal<typeof ChildProcessModule>();
  return { ...actual, spawn: vi.fn(actual.spawn) };
});

const probe = await probeBubblewrap(true);

function sandboxFor(kind: (typeof SANDBOX_KINDS)[number], workspace: string): Partial<RunProcessOptions> {
  if (kind === 'none' || !probe.available) return {};
  return { sandbox: { bwrap: probe.bwrap, policy: { workspace, network: true } } };
}

describe.each(SANDBOX_KINDS)('a call’s watchdog (sandbox: %s)', (kind) => {
  // A server killed between the call's first process and its watchdog would leave the call running for good.
  test.skipIf(kind === 'bubblewrap' && !probe.available)('is running before the call’s first process starts, watching for the marker it carries', async () => {
    await using folder = await tempFolder();
    const options = sandboxFor(kind, folder.path);
    vi.mocked(spawn).mockClear();
    const result = await runProcess({ file: '/bin/true', args: [], cwd: folder.path, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 30_000, maxOutputBytes: 1_000, ...options });
    expect(result.exitCode).toBe(0);
    const started = vi.mocked(spawn).mock.calls.map(([file, args, spawnOptions]) => ({ file, args, env: spawnOptions?.env }));
    expect(started).toHaveLength(2);
    const [watchdog, call] = started;
    expect(watchdog?.args.slice(0, 1)).toStrictEqual(['-c']);
    expect(watchdog?.args[2]).toBe('airlock-watchdog');
    expect(call?.file).toBe(kind === 'none' ? '/bin/sh' : options.sandbox?.bwrap);
    expect(watchdog?.args[3]).toBe(`${CALL_MARKER_VARIABLE}=${call?.env?.[CALL_MARKER_VARIABLE]}`);
  });
});
