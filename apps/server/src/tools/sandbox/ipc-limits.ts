import { readFileSync } from 'node:fs';

/**
 * Message queues (msgget) one call may hold. Each holds at most kernel.msgmnb bytes (16 KiB, left as the kernel has it,
 * which a call cannot raise) and as many messages: an empty one takes 64 bytes of the kernel's own memory, which no
 * process is charged for, so a full queue takes up to 1 MiB, and the kernel's default of 32,000 queues an IPC namespace
 * up to 32 GB. 32 queues: 32 MiB at most.
 */
export const MESSAGE_QUEUES = 32;

/**
 * kernel.sem, "SEMMSL SEMMNS SEMOPM SEMMNI": at most 250 semaphores a set, 32,000 in all, 32 operations a call, 128
 * sets; the kernel's defaults until Linux 3.19, which database servers' documentation still sizes against. Each
 * semaphore takes 64 bytes (2 MiB in all), and each process that undoes on exit (SEM_UNDO) 2 bytes more per semaphore
 * of each set it uses (at most 72 KiB a process). The defaults since, 32,000 sets of 32,000, allow a billion semaphores:
 * 64 GB.
 */
export const SEMAPHORES = '250 32000 32 128';

/** A sysctl written in the call's IPC namespace (and user namespace) before bubblewrap starts, and its value. */
export interface IpcSysctl {
  file: string;
  value: string;
}

/**
 * The System V IPC limits of a call's IPC namespace (see limitedNamespaceCommand): shared memory (shmget) of at most
 * `sharedMemoryBytes`, in all and per segment (kernel.shmall counts pages of `pageBytes`, default this machine's),
 * MESSAGE_QUEUES message queues, SEMAPHORES; and no IPC namespace but this one (user.max_ipc_namespaces 1, of the
 * user namespace around bubblewrap), since each new one has the kernel's defaults, which bound nothing: a segment
 * as large as the machine's memory, 32,000 queues, a billion semaphores.
 */
export function ipcSysctls(sharedMemoryBytes: number, pageBytes: number = pageSize(), folder: string = SYSCTL_FOLDER): IpcSysctl[] {
  const bytes = checkedBytes(sharedMemoryBytes);
  return [
    { file: `${folder}/kernel/shmmax`, value: String(bytes) },
    { file: `${folder}/kernel/shmall`, value: String(Math.max(1, Math.floor(bytes / pageBytes))) },
    { file: `${folder}/kernel/msgmni`, value: String(MESSAGE_QUEUES) },
    { file: `${folder}/kernel/sem`, value: SEMAPHORES },
    { file: `${folder}/user/max_ipc_namespaces`, value: '1' },
  ];
}

/** Where ipcSysctls are written: the namespace's own /proc/sys (tests name a folder that cannot be written, as a kernel refuses them). */
export const SYSCTL_FOLDER = '/proc/sys';

/**
 * Said at start-up when the namespace around bubblewrap bounds a call but cannot set its IPC limits (see
 * NamespaceProbe's `ipcUnbounded`), with the `reason` the probe found: the call then gets an IPC namespace of
 * bubblewrap's making, with the kernel's defaults.
 */
export function unboundedIpcWarning(reason: string): string {
  return (
    'Warning: tool calls’ System V shared memory, message queues and semaphores are not bounded here, so one call you allow can take ' +
    'gigabytes of memory no process is charged for while it runs. This kernel lets only the machine’s root set the limits of an IPC ' +
    'namespace (a namespace’s own root may since Linux 6.9, and 6.1.y kernels from August 2024); the inotify, /tmp and namespace bounds ' +
    `hold. The cause: ${reason}.`
  );
}

let pageBytesRead: number | undefined;

/** This machine's page size, read once from /proc/self/smaps (Node has no call for it); 4096 when it does not say. */
function pageSize(): number {
  if (pageBytesRead === undefined) {
    let kib: number | undefined;
    try {
      kib = Number(/^KernelPageSize:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/smaps', 'utf8'))?.[1]);
    } catch {
      kib = undefined;
    }
    pageBytesRead = kib !== undefined && Number.isSafeInteger(kib) && kib > 0 ? kib * 1024 : 4096;
  }
  return pageBytesRead;
}

function checkedBytes(bytes: number): number {
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw new RangeError(`sharedMemoryBytes must be a whole number from 1, not ${bytes}`);
  return bytes;
}
