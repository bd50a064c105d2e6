import { randomId } from '@airlock/core';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { writeInput, type ConfinedCommand, type ConfinedProcess } from '../process-confinement';
import { pidTakenByAnother, processStartTime, signalFound } from '../process-group';
import { CALL_MARKER_VARIABLE } from '../process-group-confinement';
import { spawnWatched } from '../process-watchdog';
import { callFilter } from './call-filter';
import { pidNamespaceMembers } from './pid-namespace';
import { sandboxRunScript } from './call-run-script';
import { DEFAULT_MAX_PROCESSES, limitedWrapperScript } from './process-limit';
import { bubblewrapArgs, type SandboxPolicy } from './sandbox-policy';
import { maskMissingGitPaths, type GitPathsMask } from './missing-git-paths-mask';
import { hostLayout } from './host-layout';
import { countBudget } from './count-budget';
import { canStage, hostCounts, limitedNamespaceCommand, type CallCounts } from './namespace-limits';
import { DEFAULT_TMPFS_MIB } from './tmpfs-size';
import { closeGuards, missingGitPaths, openWorkspaceGuards } from './workspace-guards';

export interface BubblewrapSandbox {
  /** Absolute path of the bwrap executable. */
  bwrap: string;
  policy: SandboxPolicy;
  /** Processes (threads included) the call may run at once; see limitedWrapperScript. Default DEFAULT_MAX_PROCESSES. */
  maxProcesses?: number;
  /** Files each process of the call may have open at once; see limitedWrapperScript. Default DEFAULT_MAX_OPEN_FILES. */
  maxOpenFiles?: number;
  /**
   * Absolute path of `unshare`, to start bubblewrap in a user namespace that bounds the call's inotify instances and
   * watches, fanotify groups and marks, POSIX message queues and pseudo-terminals, and the files of its /tmp and
   * /dev/shm (see limitedNamespaceCommand). Default none: bubblewrap starts as it is, and they are not bounded.
   */
  unshare?: string;
  /**
   * Bytes of System V shared memory the call may hold, where bubblewrap starts in a namespace of the call's own
   * (`unshare`; see ipcSysctls). Default DEFAULT_TMPFS_MIB MiB.
   */
  sharedMemoryBytes?: number;
  /** Whether this kernel refuses the call's IPC limits (see NamespaceProbe's `ipcUnbounded`): bubblewrap then makes its IPC namespace. */
  ipcUnbounded?: boolean;
}

/** What bubblewrap reports on its info fd once the sandbox exists. */
interface SandboxInfo {
  /** Host pid of pid 1 of the sandbox's PID namespace: when it dies, the kernel kills every process of the namespace. */
  childPid: number;
  pidNamespace: number;
  /** pid 1's start time (processStartTime), read as its pid was learnt. */
  startTime?: number;
}

/** Where bubblewrap writes its info, and reads the seccomp filter from; the guards' descriptors follow. */
const INFO_FD = 3;
const SECCOMP_FD = 4;

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]));

/**
 * Runs the command in a bubblewrap sandbox (see SandboxPolicy). Its processes live in a PID namespace of their
 * own: when the command exits, or is stopped, pid 1 of the namespace exits and the kernel kills every process
 * left in it, setsid and double forks included; when this server dies, bubblewrap dies with it, and a watchdog
 * kills the namespace's pid 1 in case it had not yet asked to die with bubblewrap. The shell that starts the
 * command first limits the processes the call may run, and runs nothing when it cannot. With `unshare`, bubblewrap
 * starts in a user namespace that bounds the call's inotify instances and watches, fanotify groups and marks, POSIX
 * message queues and pseudo-terminals (its part of what calls at once may hold: see CountBudget), and the files its /tmp
 * and /dev/shm may hold (see limitedNamespaceCommand).
 */
export function confineToBubblewrap(command: ConfinedCommand, sandbox: BubblewrapSandbox): ConfinedProcess {
  // Before any descriptor is opened: a limit out of range throws.
  const tmpfsBytes = sandbox.policy.tmpfsBytes;
  const limits = { maxProcesses: sandbox.maxProcesses ?? DEFAULT_MAX_PROCESSES, ...(sandbox.maxOpenFiles === undefined ? {} : { maxOpenFiles: sandbox.maxOpenFiles }) };
  const script = limitedWrapperScript(limits, sandboxRunScript(tmpfsBytes === undefined ? undefined : tmpfsBytes / (1024 * 1024)));
  const filter = callFilter();
  // Opened now, at the call's start: bubblewrap mounts what they are, whatever a link put in their place meanwhile.
  const guards = openWorkspaceGuards(sandbox.policy.workspace);
  let gitMask: GitPathsMask | undefined;
  const emptySources: number[] = [];
  let watched;
  let counts: CallCounts | undefined;
  const giveBack = () => {
    if (counts !== undefined) countBudget.release(counts);
  };
  // Everything that can throw (descriptors running out included) lies in here: the guards are closed, and the mask
  // and the call's counts released, whatever happens, else maskedNow would take paths for another call's
  // mount points for good, and the budget would count what no call holds.
  try {
    counts = sandbox.unshare === undefined ? undefined : countBudget.take(hostCounts());
    gitMask = maskMissingGitPaths(missingGitPaths(sandbox.policy.workspace), guards);
    // bubblewrap copies an empty file from each of these (/dev/null, read to its end at once) onto a masked file.
    for (const masked of gitMask?.paths ?? []) if (!masked.folder) emptySources.push(openSync('/dev/null', 'r'));
    const firstGuardFd = SECCOMP_FD + 1;
    const firstEmptyFd = firstGuardFd + guards.length;
    let fileIndex = 0;
    const policy: SandboxPolicy = {
      ...sandbox.policy,
      guards: guards.map((guard, index) => ({ path: guard.path, fd: firstGuardFd + index, readOnly: guard.readOnly })),
      ...(gitMask === undefined
        ? {}
        : { emptyReadOnly: gitMask.paths.map((masked) => (masked.folder ? { path: masked.path, folder: true } : { path: masked.path, folder: false, fd: firstEmptyFd + fileIndex++ })) }),
      ...(filter === undefined ? {} : { seccompFd: SECCOMP_FD }),
    };
    const host = hostLayout();
    const namespace = sandbox.unshare === undefined || counts === undefined ? undefined : { unshare: sandbox.unshare, limits: counts };
    const ipcLimited = namespace !== undefined && sandbox.ipcUnbounded !== true;
    const limitedPolicy: SandboxPolicy = { ...policy, ...(ipcLimited ? { ipcNamespaceGiven: true } : {}), ...(namespace === undefined ? {} : { ptysGiven: true }) };
    const unstaged = bubblewrapArgs(limitedPolicy, host);
    const staged = namespace !== undefined && tmpfsBytes !== undefined && canStage(unstaged);
    const args = [...(staged ? bubblewrapArgs({ ...limitedPolicy, stagedTmpfs: true }, host) : unstaged), '--chdir', command.cwd, '--info-fd', String(INFO_FD), '--', '/bin/sh', '-c', script, command.file, ...command.args];
    const sharedMemoryBytes = sandbox.sharedMemoryBytes ?? DEFAULT_TMPFS_MIB * 1024 * 1024;
    const start =
      namespace === undefined ? { file: sandbox.bwrap, args } : limitedNamespaceCommand({ ...namespace, bwrap: sandbox.bwrap, args, ...(ipcLimited ? { sharedMemoryBytes } : {}), ...(staged ? { tmpfsBytes } : {}) });
    const marker = `${CALL_MARKER_VARIABLE}=${randomId('call', 12)}`;
    // The watchdog starts first: bubblewrap's pid 1 dies with it only once it has asked to, which may be after the
    // command started, and a server killed before it could name any pid leaves them to be found by their marker.
    watched = spawnWatched(marker, () =>
      // bubblewrap closes each of these descriptors once it has used it: the command has only 0, 1 and 2.
      spawn(start.file, start.args, {
        cwd: command.cwd,
        env: { ...sandboxEnv(command.env), [CALL_MARKER_VARIABLE]: marker.slice(CALL_MARKER_VARIABLE.length + 1) },
        detached: true,
        stdio: [command.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', 'pipe', filter === undefined ? 'ignore' : 'pipe', ...guards.map((guard) => guard.fd), ...emptySources],
      }),
    );
  } catch (error) {
    gitMask?.release();
    giveBack();
    throw error;
  } finally {
    closeGuards(guards);
    for (const fd of emptySources) closeSync(fd);
  }
  const { child, watchdog } = watched;
  const filterPipe = child.stdio[SECCOMP_FD] as Writable | null;
  if (filter !== undefined && filterPipe !== null) {
    filterPipe.on('error', () => undefined);
    filterPipe.end(filter);
  }
  writeInput(child.stdin, command.input);
  const info = readInfo(child.stdio[INFO_FD] as Readable);
  const exited = new Promise<void>((resolve) => {
    if (child.pid === undefined) resolve();
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  const running = () => child.pid !== undefined && child.exitCode === null && child.signalCode === null;
  // Read at once: the child cannot have been reaped yet, so its pid is still its own.
  const leaderStart = child.pid === undefined ? undefined : processStartTime(child.pid);
  // A pid (or group id) is signalled only while it still names the process it named: once that one ended, the pid
  // may be any new process's.
  const killAll = (known: SandboxInfo | undefined) => {
    if (known !== undefined && !pidTakenByAnother(known.childPid, known.startTime)) signalQuietly(known.childPid, 'SIGKILL');
    if (child.pid !== undefined && !pidTakenByAnother(child.pid, leaderStart)) signalQuietly(-child.pid, 'SIGKILL');
  };
  let known: SandboxInfo | undefined;
  void info.then((value) => {
    if (value === undefined) return;
    // Read as its pid is learnt, while the sandbox runs.
    known = { ...value, startTime: processStartTime(value.childPid) };
    watchdog.watchProcess(value.childPid, known.startTime);
  });

  return {
    // stdout and stderr are pipes (above), so they are never null.
    child: child as ChildProcessByStdio<Writable | null, Readable, Readable>,
    stop: async (graceMs) => {
      if (!running()) return false;
      const sandboxInfo = await Promise.race([info, exited.then(() => undefined), delay(graceMs, undefined)]);
      if (sandboxInfo !== undefined) {
        for (const member of await pidNamespaceMembers(sandboxInfo.pidNamespace)) {
          if (member.pid !== sandboxInfo.childPid) signalFound(member, 'SIGTERM');
        }
      }
      const gone = await Promise.race([exited.then(() => true), delay(graceMs, false)]);
      if (!gone) {
        killAll(known ?? sandboxInfo);
        await Promise.race([exited, delay(graceMs)]);
      }
      return true;
    },
    exitStatus: (code, signal) => {
      // bubblewrap exits with 128 + n when the command was killed by signal n, as shells report it.
      if (code !== null && code > 128 && SIGNAL_NAMES.has(code - 128)) return { code: null, signal: SIGNAL_NAMES.get(code - 128) ?? null };
      return { code, signal };
    },
    killNow: () => killAll(known),
    release: () => {
      watchdog.release();
      gitMask?.release();
      giveBack();
    },
  };
}

/** The sandbox has a private /tmp: temporary files go there, whatever the server's own TMPDIR. */
function sandboxEnv(env: Record<string, string>): Record<string, string> {
  const { TMP: _tmp, TEMP: _temp, ...rest } = env;
  return { ...rest, TMPDIR: '/tmp' };
}

async function readInfo(stream: Readable | null): Promise<SandboxInfo | undefined> {
  if (stream === null) return undefined;
  let text = '';
  stream.setEncoding('utf8');
  try {
    for await (const chunk of stream) {
      text += chunk as string;
      if (text.length > 64 * 1024) return undefined;
    }
    const parsed = JSON.parse(text) as { 'child-pid'?: unknown; 'pid-namespace'?: unknown };
    const childPid = parsed['child-pid'];
    const pidNamespace = parsed['pid-namespace'];
    return typeof childPid === 'number' && typeof pidNamespace === 'number' ? { childPid, pidNamespace } : undefined;
  } catch {
    return undefined;
  }
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone in the meantime.
  }
}
