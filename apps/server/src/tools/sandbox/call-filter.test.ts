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

  it('is none where the call numbers are not known here', () => {
    expect(callFilter('riscv64')).toBeUndefined();
  });
});
