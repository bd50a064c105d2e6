/**
 * The seccomp filter a sandboxed call runs under, in the form bubblewrap's `--seccomp FD` loads. It refuses with EPERM:
 * - the kernel keyring's calls (add_key, request_key, keyctl). The keyring is not namespaced: a sandboxed call would
 *   otherwise reach the keys of the session that started the server. Nothing portable gives the call a fresh session
 *   keyring instead (bubblewrap has no option for it, and joining one takes a keyctl call the sandbox would need a
 *   helper for).
 * - making a file set-user-ID or set-group-ID (chmod, fchmod, fchmodat, fchmodat2, and creating one with such a mode:
 *   open, openat, creat, mknod, mknodat). The sandbox's `nosuid` holds only inside it: a `chmod 4755` copy of a shell
 *   left in the workspace would run later, outside, as the server's user (as root when the server runs as root), for
 *   anyone who can reach the workspace. openat2, whose mode is out of the filter's reach in a struct, answers ENOSYS,
 *   and C libraries fall back to openat.
 * - io_uring (io_uring_setup, io_uring_enter, io_uring_register). The kernel carries out its queued operations without
 *   the system calls they stand for, out of the filter's sight: an IORING_OP_OPENAT with O_CREAT and mode 04755 made a
 *   set-user-ID file no openat could. Refused whole, as container runtimes' default profiles do.
 * - Linux AIO's contexts (io_setup). Each reserves events of one count the whole machine shares (fs.aio-max-nr): a
 *   call that took them all left every program of every user (a database, a virtual machine) EAGAIN from io_setup
 *   while it ran. Refused, a program falls back to ordinary reads and writes, as libaio's users do where it is off.
 * - mounting (mount, umount, pivot_root and the new mount API: fsopen, fsmount, move_mount…). The call has no
 *   capability to mount in its own namespaces, but in a user namespace of its own (`unshare -rm`) it has: there it
 *   mounted a tmpfs of half the machine's memory beside its bounded /tmp, memory that no process is charged for and
 *   nothing frees until the call ends. A program that makes a user namespace without mounting (a browser's sandbox)
 *   still runs.
 */

// struct seccomp_data: int nr at offset 0, __u32 arch at offset 4, __u64 instruction_pointer, __u64 args[6] from 16.
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
/** The low 32 bits of argument `index` (little-endian): all of a mode_t or the open flags. */
const argOffset = (index: number) => 16 + 8 * index;
const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JSET_K = 0x45;
const BPF_AND_K = 0x54;
const BPF_RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const S_ISUID_OR_ISGID = 0o6000;
/** O_CREAT | __O_TMPFILE (the same on x86 and the generic ABI of arm): an open that creates, whose mode counts. */
const CREATING = 0x40 | 0x400000;

/** A call that takes a mode: refused when the mode holds S_ISUID or S_ISGID (and, with `flags`, the call creates). */
interface ModeCall {
  nr: number;
  mode: number;
  flags?: number;
}

interface Abi {
  /** AUDIT_ARCH_* of the ABI. */
  arch: number;
  /** add_key, request_key and keyctl in that ABI. */
  keyring: readonly number[];
  /** mount, umount2 (and the old umount where there is one) and pivot_root in that ABI. */
  mounts: readonly number[];
  /** io_setup in that ABI (x86-64's x32 calls give it a number of its own). */
  aioSetup: readonly number[];
  modeCalls: readonly ModeCall[];
  openat2: number;
  /** Bits cleared from the call number before comparing: x32 calls are x86-64's with bit 30 set. */
  clear?: number;
}

/** io_uring_setup, io_uring_enter and io_uring_register: one number each on every architecture. */
const IO_URING = [425, 426, 427];
/** open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr, open_tree_attr: one number each everywhere. */
const NEW_MOUNT_API = [428, 429, 430, 431, 432, 433, 442, 467];
/** fchmodat2 and openat2 have one number on every architecture; fchmodat2 takes its mode third. */
const FCHMODAT2: ModeCall = { nr: 452, mode: 2 };
const OPENAT2 = 437;

const X86_64: Abi = {
  arch: 0xc000003e,
  // 543: x32's io_setup (with bit 30, which `clear` takes off), a number of its own where the others are x86-64's;
  // any x86-64 process may call through x32 where the kernel has it (syscall.x32=y).
  aioSetup: [206, 543],
  keyring: [248, 249, 250],
  mounts: [165, 166, 155],
  // open, creat, chmod, fchmod, mknod, openat, mknodat, fchmodat
  modeCalls: [{ nr: 2, mode: 2, flags: 1 }, { nr: 85, mode: 1 }, { nr: 90, mode: 1 }, { nr: 91, mode: 1 }, { nr: 133, mode: 1 }, { nr: 257, mode: 3, flags: 2 }, { nr: 259, mode: 2 }, { nr: 268, mode: 2 }, FCHMODAT2],
  openat2: OPENAT2,
  clear: 0x40000000,
};
const I386: Abi = {
  arch: 0x40000003,
  aioSetup: [245],
  keyring: [286, 287, 288],
  mounts: [21, 22, 52, 217],
  modeCalls: [{ nr: 5, mode: 2, flags: 1 }, { nr: 8, mode: 1 }, { nr: 15, mode: 1 }, { nr: 94, mode: 1 }, { nr: 14, mode: 1 }, { nr: 295, mode: 3, flags: 2 }, { nr: 297, mode: 2 }, { nr: 306, mode: 2 }, FCHMODAT2],
  openat2: OPENAT2,
};
const AARCH64: Abi = {
  arch: 0xc00000b7,
  aioSetup: [0],
  keyring: [217, 218, 219],
  mounts: [40, 39, 41],
  // mknodat, fchmod, fchmodat, openat (the generic ABI has no open, creat, chmod or mknod)
  modeCalls: [{ nr: 33, mode: 2 }, { nr: 52, mode: 1 }, { nr: 53, mode: 2 }, { nr: 56, mode: 3, flags: 2 }, FCHMODAT2],
  openat2: OPENAT2,
};
const ARM: Abi = {
  arch: 0x40000028,
  aioSetup: [243],
  keyring: [309, 310, 311],
  mounts: [21, 52, 218],
  modeCalls: [{ nr: 5, mode: 2, flags: 1 }, { nr: 8, mode: 1 }, { nr: 15, mode: 1 }, { nr: 94, mode: 1 }, { nr: 14, mode: 1 }, { nr: 322, mode: 3, flags: 2 }, { nr: 324, mode: 2 }, { nr: 333, mode: 2 }, FCHMODAT2],
  openat2: OPENAT2,
};

/** The ABIs a process can call the kernel through, by the architecture node runs on: its own and the 32-bit one. */
const ABIS_BY_ARCH = new Map<string, readonly Abi[]>([
  ['x64', [X86_64, I386]],
  ['arm64', [AARCH64, ARM]],
]);

type Instruction = [code: number, jt: number, jf: number, k: number];

/**
 * The filter for this machine, or undefined where its call numbers are not known here (the keyring is then
 * reachable, and set-user-ID files can be made).
 */
export function callFilter(arch: string = process.arch): Buffer | undefined {
  const abis = ABIS_BY_ARCH.get(arch);
  return abis === undefined ? undefined : assemble(abis);
}

/**
 * For each ABI: if the call comes through it, compare its number with those refused and with those whose mode is
 * looked at, else allow. A call through an ABI not listed is allowed: none other exists on the machines listed. Each
 * ABI's block ends with its own returns, so every jump stays short (a jump reaches 255 instructions at most).
 */
function assemble(abis: readonly Abi[]): Buffer {
  const program: Instruction[] = [];
  for (const abi of abis) {
    /** Jumps to the block's returns, patched once those are placed: the instruction and its arm (1 true, 2 false). */
    const toAllow: [number, 1 | 2][] = [];
    const toDeny: [number, 1 | 2][] = [];
    program.push([BPF_LD_W_ABS, 0, 0, ARCH_OFFSET]);
    const archCheck = program.push([BPF_JEQ_K, 0, 0, abi.arch]) - 1;
    program.push([BPF_LD_W_ABS, 0, 0, NR_OFFSET]);
    if (abi.clear !== undefined) program.push([BPF_AND_K, 0, 0, ~abi.clear >>> 0]);
    for (const call of [...abi.keyring, ...IO_URING, ...abi.aioSetup, ...abi.mounts, ...NEW_MOUNT_API]) toDeny.push([program.push([BPF_JEQ_K, 0, 0, call]) - 1, 1]);
    const openat2 = program.push([BPF_JEQ_K, 0, 0, abi.openat2]) - 1;
    const modeJumps = abi.modeCalls.map((call) => program.push([BPF_JEQ_K, 0, 0, call.nr]) - 1);
    program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW]);
    abi.modeCalls.forEach((call, index) => {
      const jump = modeJumps[index]!;
      program[jump]![1] = program.length - jump - 1;
      if (call.flags !== undefined) {
        program.push([BPF_LD_W_ABS, 0, 0, argOffset(call.flags)]);
        // Not creating: the mode is not used.
        toAllow.push([program.push([BPF_JSET_K, 0, 0, CREATING]) - 1, 2]);
      }
      program.push([BPF_LD_W_ABS, 0, 0, argOffset(call.mode)]);
      const check = program.push([BPF_JSET_K, 0, 0, S_ISUID_OR_ISGID]) - 1;
      toDeny.push([check, 1]);
      toAllow.push([check, 2]);
    });
    const allow = program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW]) - 1;
    const deny = program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM]) - 1;
    const noSuchCall = program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS]) - 1;
    program[openat2]![1] = noSuchCall - openat2 - 1;
    for (const [jump, arm] of toAllow) program[jump]![arm] = allow - jump - 1;
    for (const [jump, arm] of toDeny) program[jump]![arm] = deny - jump - 1;
    // Not this ABI: on to the next block.
    program[archCheck]![2] = program.length - archCheck - 1;
  }
  program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW]);
  if (program.some(([, jt, jf]) => jt > 255 || jf > 255)) throw new Error('the seccomp filter has a jump out of reach');
  // struct sock_filter, in the machine's byte order: little-endian on both architectures above.
  const buffer = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], index) => {
    buffer.writeUInt16LE(code, index * 8);
    buffer.writeUInt8(jt, index * 8 + 2);
    buffer.writeUInt8(jf, index * 8 + 3);
    buffer.writeUInt32LE(k, index * 8 + 4);
  });
  return buffer;
}
