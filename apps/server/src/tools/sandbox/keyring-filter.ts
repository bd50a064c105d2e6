/**
 * A seccomp filter, in the form bubblewrap's `--seccomp FD` loads, that refuses the kernel keyring's system calls
 * (add_key, request_key, keyctl) with EPERM. The keyring is not namespaced: a sandboxed call would otherwise reach
 * the keys of the session that started the server. Nothing portable gives the call a fresh session keyring instead
 * (bubblewrap has no option for it, and joining one takes a keyctl call the sandbox would need a helper for).
 */

// struct seccomp_data: int nr at offset 0, __u32 arch at offset 4.
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_AND_K = 0x54;
const BPF_RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;

interface Abi {
  /** AUDIT_ARCH_* of the ABI. */
  arch: number;
  /** add_key, request_key and keyctl in that ABI. */
  calls: readonly number[];
  /** Bits cleared from the call number before comparing: x32 calls are x86-64's with bit 30 set. */
  clear?: number;
}

const X86_64: Abi = { arch: 0xc000003e, calls: [248, 249, 250], clear: 0x40000000 };
const I386: Abi = { arch: 0x40000003, calls: [286, 287, 288] };
const AARCH64: Abi = { arch: 0xc00000b7, calls: [217, 218, 219] };
const ARM: Abi = { arch: 0x40000028, calls: [309, 310, 311] };

/** The ABIs a process can call the kernel through, by the architecture node runs on: its own and the 32-bit one. */
const ABIS_BY_ARCH = new Map<string, readonly Abi[]>([
  ['x64', [X86_64, I386]],
  ['arm64', [AARCH64, ARM]],
]);

type Instruction = [code: number, jt: number, jf: number, k: number];

/** The filter for this machine, or undefined where its call numbers are not known here (the keyring is then reachable). */
export function keyringFilter(arch: string = process.arch): Buffer | undefined {
  const abis = ABIS_BY_ARCH.get(arch);
  return abis === undefined ? undefined : assemble(abis);
}

/**
 * For each ABI: if the call comes through it, compare its number with the three and refuse on a match, else allow.
 * A call through an ABI not listed is allowed: none other exists on the machines listed.
 */
function assemble(abis: readonly Abi[]): Buffer {
  const program: Instruction[] = [];
  const denyJumps: number[] = [];
  for (const abi of abis) {
    program.push([BPF_LD_W_ABS, 0, 0, ARCH_OFFSET]);
    const archCheck = program.push([BPF_JEQ_K, 0, 0, abi.arch]) - 1;
    program.push([BPF_LD_W_ABS, 0, 0, NR_OFFSET]);
    if (abi.clear !== undefined) program.push([BPF_AND_K, 0, 0, ~abi.clear >>> 0]);
    for (const call of abi.calls) denyJumps.push(program.push([BPF_JEQ_K, 0, 0, call]) - 1);
    program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW]);
    // Not this ABI: on to the next block.
    program[archCheck]![2] = program.length - archCheck - 1;
  }
  program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW]);
  const deny = program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM]) - 1;
  for (const jump of denyJumps) program[jump]![1] = deny - jump - 1;
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
