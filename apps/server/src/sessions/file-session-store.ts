import { storedSessionSchema, type SessionStore, type StoredSession } from '@airlock/api';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface FileSessionStoreOptions {
  /** Folder the sessions are kept in, one JSON file each; created (mode 0700) when missing. */
  directory: string;
  /** Receives a line for each file that cannot be read or written. Default `console.warn`. */
  log?: (line: string) => void;
}

/** Largest session file read back; a bigger one is skipped and reported. */
const MAX_FILE_BYTES = 32 * 1024 * 1024;

/**
 * Sessions as one JSON file each (named from the session id, so an id can never name a path).
 * Writes for one session are queued, so they land in order; each is atomic (a temp file, then rename).
 */
export class FileSessionStore implements SessionStore {
  private readonly queues = new Map<string, Promise<void>>();
  private readonly log: (line: string) => void;

  private constructor(
    private readonly directory: string,
    log: ((line: string) => void) | undefined,
  ) {
    this.log = log ?? ((line) => console.warn(line));
  }

  /** Opens the folder and reads every session in it; files that do not validate are skipped and reported. */
  static async open(options: FileSessionStoreOptions): Promise<{ store: FileSessionStore; sessions: StoredSession[] }> {
    const store = new FileSessionStore(options.directory, options.log);
    await mkdir(options.directory, { recursive: true, mode: 0o700 });
    const sessions: StoredSession[] = [];
    for (const name of await readdir(options.directory)) {
      if (!name.endsWith('.json')) continue;
      const path = join(options.directory, name);
      try {
        const text = await readFile(path, 'utf8');
        if (text.length > MAX_FILE_BYTES) throw new Error(`larger than ${MAX_FILE_BYTES} bytes`);
        const parsed = storedSessionSchema.safeParse(JSON.parse(text));
        if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
        if (fileName(parsed.data.sessionId) !== name) throw new Error('its name does not match the session inside');
        sessions.push(parsed.data);
      } catch (error) {
        store.log(`Skipped the saved session ${path}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    sessions.sort((a, b) => a.updatedAt - b.updatedAt);
    return { store, sessions };
  }

  save(session: StoredSession): void {
    const text = JSON.stringify(session);
    this.enqueue(session.sessionId, async () => {
      const path = join(this.directory, fileName(session.sessionId));
      const temp = `${path}.${process.pid}.tmp`;
      await writeFile(temp, text, { mode: 0o600 });
      await rename(temp, path);
    });
  }

  remove(sessionId: string): void {
    this.enqueue(sessionId, () => rm(join(this.directory, fileName(sessionId)), { force: true }));
  }

  /** Resolves when every queued write has landed (or failed and been reported). */
  async flush(): Promise<void> {
    await Promise.all([...this.queues.values()]);
  }

  private enqueue(sessionId: string, write: () => Promise<void>): void {
    const previous = this.queues.get(sessionId) ?? Promise.resolve();
    const next = previous
      .then(write)
      .catch((error: unknown) => this.log(`Could not save session ${sessionId}: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        if (this.queues.get(sessionId) === next) this.queues.delete(sessionId);
      });
    this.queues.set(sessionId, next);
  }
}

function fileName(sessionId: string): string {
  return `${Buffer.from(sessionId, 'utf8').toString('base64url')}.json`;
}
