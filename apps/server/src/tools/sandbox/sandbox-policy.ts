import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/** What a sandboxed call may see of the filesystem and the network. */
export interface SandboxPolicy {
  /** The one folder the call may write to, besides its private /tmp. */
  workspace: string;
  /** Folders and files outside the workspace the call must read, at the same path (e.g. the python tool's script). Default none. */
  readOnly?: readonly string[];
  /** Folders and files that must look empty inside (data dir, token and key files). Missing ones are skipped. Default none. */
  hidden?: readonly string[];
  /** Whether the call reaches the network. */
  network: boolean;
}

type Mount = { path: string; args: string[] };

/**
 * bubblewrap arguments for a call: its own user, PID and IPC namespaces with no capabilities (pid 1 of the
 * namespace is bubblewrap's, and killing it ends every process of the call), a new session (no terminal to
 * inject input into), dies with the server, the whole system read-only, a fresh /dev, /proc and /tmp, the
 * workspace read-write, and the hidden paths masked: an empty tmpfs over a folder, /dev/null over a file.
 */
export function bubblewrapArgs(policy: SandboxPolicy): string[] {
  const mounts: Mount[] = [
    { path: policy.workspace, args: ['--bind', policy.workspace, policy.workspace] },
    ...(policy.readOnly ?? []).map((entry) => ({ path: entry, args: ['--ro-bind', entry, entry] })),
    ...(policy.hidden ?? []).flatMap(maskOf),
  ];
  // A parent is mounted before what lies inside it, so a hidden folder inside the workspace stays hidden, and a
  // workspace inside a hidden folder is still there.
  mounts.sort((a, b) => depth(a.path) - depth(b.path));
  return [
    '--die-with-parent',
    '--new-session',
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    ...(policy.network ? [] : ['--unshare-net']),
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    ...mounts.flatMap((mount) => mount.args),
  ];
}

/** The real path of a hidden entry, masked by its kind; nothing for a path that does not exist. */
function maskOf(entry: string): Mount[] {
  let real: string;
  let isFolder: boolean;
  try {
    real = realpathSync(entry);
    isFolder = statSync(real).isDirectory();
  } catch {
    return [];
  }
  if (real === path.parse(real).root) return [];
  return [{ path: real, args: isFolder ? ['--tmpfs', real] : ['--ro-bind', '/dev/null', real] }];
}

function depth(entry: string): number {
  return path.resolve(entry).split(path.sep).filter(Boolean).length;
}
