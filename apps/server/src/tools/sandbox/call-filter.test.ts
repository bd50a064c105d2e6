import { describe, expect, it } from 'vitest';
import { callFilter } from './call-filter';

describe('callFilter', () => {
  it.each(['x64', 'arm64'])('assembles for %s: every jump lands on an instruction of the program, and it ends by returning', (arch) => {
    const filter = callFilter(arch)!;
    const count = filter.length / 8;
    for (let index = 0; index < count; index++) {
      const [code, jt, jf] = [filter.readUInt16LE(index * 8), filter.readUInt8(index * 8 + 2), filter.readUInt8(index * 8 + 3)];
      // BPF_JMP | BPF_JEQ | BPF_K and BPF_JMP | BPF_JSET | BPF_K: the only jumps the filter has.
      if (code === 0x15 || code === 0x45) expect(index + 1 + Math.max(jt, jf)).toBeLessThan(count);
      else expect([jt, jf]).toStrictEqual([0, 0]);
    }
    // BPF_RET | BPF_K
    expect(filter.readUInt16LE((count - 1) * 8)).toBe(0x06);
  });

  it.each([
    ['x86-64', 0xc000003e, 206],
    ['x32 (x86-64 with bit 30)', 0xc000003e, 0x40000000 | 543],
    ['i386', 0x40000003, 245],
  ])('refuses io_setup through %s with EPERM, and lets read through', (_abi, arch, ioSetup) => {
    const filter = callFilter('x64')!;
    expect(runFilter(filter, arch, ioSetup)).toBe(0x00050000 | 1);
    expect(runFilter(filter, arch, 0 | (ioSetup & 0x40000000))).toBe(0x7fff0000);
  });

  it('refuses io_setup through aarch64 and arm with EPERM', () => {
    const filter = callFilter('arm64')!;
    expect(runFilter(filter, 0xc00000b7, 0)).toBe(0x00050000 | 1);
    expect(runFilter(filter, 0x40000028, 243)).toBe(0x00050000 | 1);
    // aarch64's read.
    expect(runFilter(filter, 0xc00000b7, 63)).toBe(0x7fff0000);
  });

  it('is none where the call numbers are not known here', () => {
    expect(callFilter('riscv64')).toBeUndefined();
  });
});

/**
 * Runs the classic BPF program as the kernel would on a call through `arch` numbered `nr`, its arguments all 0: only
 * the instructions callFilter uses (load word, jump if equal, jump if set, and, return). What it returns.
 */
function runFilter(filter: Buffer, arch: number, nr: number): number {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr >>> 0, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  let accumulator = 0;
  for (let index = 0; index < filter.length / 8; index++) {
    const [code, jt, jf, k] = [filter.readUInt16LE(index * 8), filter.readUInt8(index * 8 + 2), filter.readUInt8(index * 8 + 3), filter.readUInt32LE(index * 8 + 4)];
    if (code === 0x20) accumulator = data.readUInt32LE(k);
    else if (code === 0x54) accumulator = (accumulator & k) >>> 0;
    else if (code === 0x15) index += accumulator === k ? jt : jf;
    else if (code === 0x45) index += (accumulator & k) !== 0 ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`an instruction the test does not know: ${code}`);
  }
  throw new Error('the program ran off its end');
}
