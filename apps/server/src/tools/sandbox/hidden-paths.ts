import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/** A hidden path as a call masks it: an empty tmpfs over a folder, /dev/null over a file. */
export interface HiddenMask {
  /** The real path (symlinks resolved). */
  path: string;
  folder: boolean;
}

/** A hidden path as first seen: where it really was, and which file or folder was there. */
interface Identity extends HiddenMask {
  dev: bigint;
  ino: bigint;
}

/** A hidden path is no longer where it was first seen: a mask at its place would leave it readable where it is now. */
export class HiddenPathMovedError extends Error {
  override readonly name = 'HiddenPathMovedError';
  constructor(
    readonly entry: string,
    readonly change: 'gone' | 'replaced',
  ) {
    super(
      `Refused: "${entry}", which tool calls must not see, has been moved or ${change === 'gone' ? 'removed' : 'replaced'} since the server ` +
        'started, so it cannot be hidden where it is now. Nothing was run: calls that run processes (terminal, python) are ' +
        'refused until it is back at its place.',
    );
  }
}

/**
 * The paths sandboxed calls must not see, each held to the file or folder first seen there (device and inode). A
 * mask is bound over a path, so if the path was renamed away (an ancestor inside the writable workspace moved), a
 * later call would mask an empty place and see the data at its new one: such a call is refused instead.
 */
export class HiddenPaths {
  readonly #entries: readonly string[];
  readonly #seen = new Map<string, Identity>();

  constructor(entries: readonly string[]) {
    this.#entries = entries;
    for (const entry of entries) {
      const identity = identify(entry);
      if (identity !== undefined) this.#seen.set(entry, identity);
    }
  }

  /** The masks of the next call. Throws HiddenPathMovedError when a path seen before is gone from its place or is another one now. */
  masks(): HiddenMask[] {
    const masks: HiddenMask[] = [];
    for (const entry of this.#entries) {
      const now = identify(entry);
      const seen = this.#seen.get(entry);
      if (seen === undefined) {
        // Missing so far (an optional file, a data folder created later): masked from the call it appears in, and held to that.
        if (now !== undefined) {
          this.#seen.set(entry, now);
          masks.push({ path: now.path, folder: now.folder });
        }
        continue;
      }
      if (now === undefined) throw new HiddenPathMovedError(entry, 'gone');
      if (now.path !== seen.path || now.dev !== seen.dev || now.ino !== seen.ino) throw new HiddenPathMovedError(entry, 'replaced');
      masks.push({ path: seen.path, folder: seen.folder });
    }
    return masks;
  }
}

/** Where a path really is and what is there; nothing for a missing path, or for `/`, which cannot be masked. */
function identify(entry: string): Identity | undefined {
  try {
    const real = realpathSync(entry);
    if (real === path.parse(real).root) return undefined;
    const stats = statSync(real, { bigint: true });
    return { path: real, folder: stats.isDirectory(), dev: stats.dev, ino: stats.ino };
  } catch {
    return undefined;
  }
}
