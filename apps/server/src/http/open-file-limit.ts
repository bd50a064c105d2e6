import { readFileSync } from 'node:fs';

/**
 * The soft limit on open files of this process (each WebSocket holds one), read from /proc on Linux.
 * Node raises the soft limit to the hard one at start-up, so this is what the server really has.
 * Undefined where it cannot be read (another system) or is unlimited.
 */
export function openFileLimit(limitsFile = '/proc/self/limits'): number | undefined {
  let text: string;
  try {
    text = readFileSync(limitsFile, 'utf8');
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\d+)\s/m.exec(text)?.[1];
  return soft === undefined ? undefined : Number(soft);
}
