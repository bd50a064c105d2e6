import { realpathSync, statSync } from 'node:fs';
export { isWithin as isWithinOrSame } from '../path-within';

/** The folder's real path, links followed, or undefined if it is missing or not a folder. */
export function realFolder(folder: string): string | undefined {
  try {
    const real = realpathSync.native(folder);
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}
