import { readFileSync } from 'node:fs';

/** The resource limits this code reads of its own process, as /proc/self/limits names them. */
export type LimitName = 'Max open files' | 'Max msgqueue size';

/**
 * This process's soft or hard limit `name`, read from `limitsFile` (a line "<name> <soft> <hard> <units>"); undefined
 * where it cannot be read (another system) or is unlimited.
 */
export function ownLimit(name: LimitName, which: 'soft' | 'hard', limitsFile = '/proc/self/limits'): number | undefined {
  let text: string;
  try {
    text = readFileSync(limitsFile, 'utf8');
  } catch {
    return undefined;
  }
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  const [soft, hard] = line?.slice(name.length).trim().split(/\s+/) ?? [];
  const value = which === 'soft' ? soft : hard;
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}
