import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** Links followed and folders gone up at most in finding where one path leads: a call's own repository may name any. */
const MAX_STEPS = 256;

/**
 * Where the kernel leads `file` now: its real path when it is there; when it is not, the real path of the nearest
 * folder on the way that is, with the rest (a link left dangling is followed to where it points), as a call would
 * make it. For a rest that goes up (`missing/../x`), the first missing part: a call that makes it decides where the
 * rest leads, so that one is held. Undefined when the nearest on the way is no folder, or past `MAX_STEPS`.
 */
export function whereLeads(file: string): string | undefined {
  const rest: string[] = [];
  let at = file;
  for (let steps = 0; steps < MAX_STEPS; steps += 1) {
    const real = realOrUndefined(at);
    if (real !== undefined) {
      if (rest.length === 0) return real;
      if (lstatOrUndefined(real)?.isDirectory() !== true || lstatOrUndefined(path.join(real, rest[0]!)) !== undefined) return undefined;
      return rest.slice(1).includes('..') ? path.join(real, rest[0]!) : path.join(real, ...rest);
    }
    if (lstatOrUndefined(at)?.isSymbolicLink() === true) {
      let target;
      try {
        target = readlinkSync(at);
      } catch {
        return undefined;
      }
      at = [target.startsWith('/') ? target : `${at.slice(0, at.lastIndexOf('/') + 1)}${target}`, ...rest].join('/');
      rest.length = 0;
      continue;
    }
    const up = path.dirname(at);
    if (up === at) return undefined;
    rest.unshift(path.basename(at));
    at = up;
  }
  return undefined;
}

/** The real path of `file`; undefined where it is not there or cannot be resolved. */
export function realOrUndefined(file: string): string | undefined {
  try {
    return realpathSync.native(file);
  } catch {
    return undefined;
  }
}

/** What is at `file` itself (a link not followed); undefined where nothing is or it cannot be looked at. */
export function lstatOrUndefined(file: string) {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}
