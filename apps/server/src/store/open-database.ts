import Database from 'better-sqlite3';
import { accessSync, chmodSync, closeSync, constants, lstatSync, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreError, type StoreProblem } from './store-error';

export interface OpenDatabaseOptions {
  /** The folder, created (mode 0700) when missing. */
  directory: string;
  /** The database file in it, created (mode 0600) when missing. */
  file: string;
  /** How long a statement waits for a lock held by another connection before failing. */
  busyTimeoutMs: number;
}

/**
 * Opens (or creates, mode 0600 in a 0700 folder) the database file, checks it before anything writes to it, and
 * takes it for this process alone: in WAL mode with an exclusive locking mode the first read locks the file until
 * close, so a second server on the same data folder fails at start instead of resuming the first one's runs.
 */
export function openDatabase({ directory, file, busyTimeoutMs }: OpenDatabaseOptions): Database.Database {
  let db: Database.Database;
  try {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new StoreError(file, 'cannot-open', `cannot be opened (${errorText(error)})`, { cause: error });
  }
  checkOwnership(directory, file);
  let created: boolean;
  try {
    created = createIfMissing(file);
    keepPrivate(file);
  } catch (error) {
    throw new StoreError(file, 'cannot-open', `cannot be opened (${errorText(error)})`, { cause: error });
  }
  // SQLite takes an empty file for a new database: a truncated airlock.db started over with no chats and no ledger,
  // without a word. A file of this start is empty only until its first write below (a start that fails before it
  // removes the file again), so an empty one found here was left by something else.
  if (!created && statSync(file).size === 0) {
    throw new StoreError(file, 'corrupt', 'is empty (0 bytes) where a database was expected, and was not taken for a new one');
  }
  try {
    db = new Database(file, { timeout: busyTimeoutMs });
  } catch (error) {
    if (created) removeIfEmpty(file);
    throw new StoreError(file, 'cannot-open', `cannot be opened (${errorText(error)})`, { cause: error });
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    const problems = db.pragma('quick_check', { simple: false }) as { quick_check: string }[];
    const report = problems.map((row) => row.quick_check);
    if (report.length !== 1 || report[0] !== 'ok') throw new StoreError(file, 'corrupt', `is damaged (quick_check: ${report.slice(0, 3).join('; ')})`);
    db.pragma('journal_mode = WAL');
    // FULL: every commit is synced to the disk before it returns, and a failed sync fails the commit. An allow (with
    // its call's start) is committed before the tool starts, and a rule or grant before it lets a call run unasked;
    // with NORMAL a commit outlived a crash of this process but not a lost write-out, an OS crash or a power cut, and
    // after one the allowed call waited again and a second allow ran it twice.
    db.pragma('synchronous = FULL');
    // SQLite's own default page cache (2 MiB) rather than the driver's 16 MiB: writes append, reads are of recent
    // rows, and the operating system caches the file anyway; held by the process, the larger cache grew with the
    // number of chats (about 1.6 KiB per waiting session at 10,000).
    db.pragma('cache_size = -2000');
    db.pragma('foreign_keys = ON');
    return db;
  } catch (error) {
    db.close();
    if (created) removeIfEmpty(file);
    throw asStoreError(file, error);
  }
}

/** Removes the file this start made if nothing was written to it: the next start makes it anew rather than refuse it. */
function removeIfEmpty(file: string): void {
  try {
    if (statSync(file).size === 0) unlinkSync(file);
  } catch {
    // Left as it is: the next start refuses it, saying how to start afresh.
  }
}

/** The SQLite errors that mean "this file cannot be used as it is", in words a person can act on. */
export function asStoreError(file: string, error: unknown): unknown {
  if (error instanceof StoreError) return error;
  const problem = problemOf(error);
  if (problem === undefined) return error;
  const details: Record<FileProblem, string> = {
    locked: 'is locked by another process',
    // A read-only folder or file, or a failing disk: the file itself may be whole, and must not read as damaged.
    'cannot-open': onReadOnlyFileSystem(file) ? `cannot be written: its file system is mounted read-only (${errorText(error)})` : `cannot be read and written (${errorText(error)})`,
    corrupt: `is not a usable database (${errorText(error)})`,
  };
  const detail = details[problem];
  return new StoreError(file, problem, detail, { cause: error });
}

/**
 * Whether the file's folder is on a file system mounted read-only: SQLite says only "disk I/O error" there, and the
 * folder's permissions, which the advice sends a person to check, are not what is wrong.
 */
function onReadOnlyFileSystem(file: string): boolean {
  try {
    accessSync(dirname(file), constants.W_OK);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EROFS';
  }
}

/** What SQLite's own errors can say of the file. */
type FileProblem = Extract<StoreProblem, 'locked' | 'corrupt' | 'cannot-open'>;

function problemOf(error: unknown): FileProblem | undefined {
  const code = error instanceof Database.SqliteError ? error.code : undefined;
  if (code === undefined) return undefined;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'locked';
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) return 'corrupt';
  // A file this user may read but not write fails at its first lock, as an I/O error.
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_PERM') || code.startsWith('SQLITE_IOERR')) return 'cannot-open';
  return undefined;
}

/**
 * The data folder and the database files must be this user's, and no one else may change the folder: whoever could
 * put their own database there (or swap this one's) would decide calls with their rules, and read every chat.
 * Not checked where the system has no user ids.
 */
function checkOwnership(directory: string, file: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const folder = statSync(directory);
  if (folder.uid !== uid) throw new StoreError(file, 'not-private', `is in a folder of another user (${directory} is owned by user ${folder.uid}, Airlock runs as ${uid})`);
  if ((folder.mode & 0o022) !== 0) throw new StoreError(file, 'not-private', `is in a folder other users may change (${directory} has mode ${(folder.mode & 0o777).toString(8)})`);
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    // A link would put the database where the folder's protections (its mode, its hiding from tools) do not reach.
    if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true) {
      throw new StoreError(file, 'not-private', `${path === file ? 'is' : `has ${path}, which is`} a symbolic link: the database must be a plain file in the data folder`);
    }
    const info = statSync(path, { throwIfNoEntry: false });
    if (info !== undefined && info.uid !== uid) throw new StoreError(file, 'not-private', `${path === file ? 'is' : `has ${path}, which is`} owned by another user (user ${info.uid}, Airlock runs as ${uid})`);
  }
}

/**
 * The database and its journal files are readable by their owner only, also when an existing file was made (or
 * copied) readable by others: SQLite gives the journal files the database's mode, and chats hold what people typed.
 * Files of another user are left alone (and then likely cannot be opened anyway).
 */
function keepPrivate(file: string): void {
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    const info = statSync(path, { throwIfNoEntry: false });
    if (info === undefined || (info.mode & 0o077) === 0 || info.uid !== process.getuid?.()) continue;
    chmodSync(path, info.mode & 0o700);
  }
}

/** Whether the file was made here (it was missing). */
function createIfMissing(file: string): boolean {
  try {
    closeSync(openSync(file, 'wx', 0o600));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
