import { storedSessionSchema, type StoredSession } from '@airlock/api';
import type { Database } from 'better-sqlite3';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

/** What the one-time import of the former JSON session files did. */
export interface JsonImportReport {
  /** Files imported, relative to the data folder. */
  imported: { file: string; sessionId: string }[];
  skipped: { file: string; reason: string }[];
}

/** Largest session file read, as the former store had it. */
const MAX_FILE_BYTES = 32 * 1024 * 1024;
/** The former default data folder was `…/airlock/sessions`; the files may sit in the data folder or in that subfolder. */
const FOLDERS = ['', 'sessions'];

/**
 * Imports the session files the former one-file-per-chat store left (session and messages), each file once,
 * all in one transaction. The files stay where they are; every file looked at is recorded in `json_imports`.
 */
export interface ImportJsonSessionsOptions {
  /** The data folder; its `*.json` files and those of its `sessions/` subfolder are looked at. */
  directory: string;
  /** Recorded as each file's import time. */
  now: number;
}

export function importJsonSessions(db: Database, { directory, now }: ImportJsonSessionsOptions): JsonImportReport {
  const report: JsonImportReport = { imported: [], skipped: [] };
  const seen = db.prepare<[string], { file: string }>('SELECT file FROM json_imports WHERE file = ?');
  const files = FOLDERS.flatMap((folder) => jsonFiles(directory, folder)).filter((file) => seen.get(file) === undefined);
  if (files.length === 0) return report;

  const sessionExists = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM sessions WHERE session_id = ?');
  const insertSession = db.prepare(
    'INSERT INTO sessions (session_id, title, created_at, updated_at, confirm_tool_calls, last_run_id) VALUES (?, ?, ?, ?, 1, NULL)',
  );
  const insertMessage = db.prepare('INSERT INTO messages (session_id, seq, json, at) VALUES (?, ?, ?, ?)');
  const record = db.prepare('INSERT INTO json_imports (file, session_id, outcome, at) VALUES (?, ?, ?, ?)');

  db.transaction(() => {
    // One file at a time: a start that held every chat at once ran out of memory with many large ones.
    for (const file of files) {
      const entry = { file, ...readSession(join(directory, file)) };
      let reason = entry.reason;
      if (entry.session !== undefined && sessionExists.get(entry.session.sessionId) !== undefined) reason = 'a chat with the same id is already stored';
      if (entry.session === undefined || reason !== undefined) {
        const why = reason ?? 'unreadable';
        record.run(entry.file, entry.session?.sessionId ?? null, `skipped: ${why}`, now);
        report.skipped.push({ file: entry.file, reason: why });
        continue;
      }
      const { sessionId, title, createdAt, updatedAt, messages } = entry.session;
      insertSession.run(sessionId, title, createdAt, updatedAt);
      messages.forEach((message, index) => insertMessage.run(sessionId, index + 1, JSON.stringify(message), updatedAt));
      record.run(entry.file, sessionId, 'imported', now);
      report.imported.push({ file: entry.file, sessionId });
    }
  }).immediate();
  return report;
}

function jsonFiles(directory: string, folder: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(directory, folder));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
  return names
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => (folder === '' ? name : `${folder}/${name}`));
}

function readSession(path: string): { session?: StoredSession; reason?: string } {
  try {
    const info = statSync(path);
    if (!info.isFile()) return { reason: 'not a file' };
    // By its size, before a byte is read: read whole first, a file of a few hundred MiB filled the heap.
    if (info.size > MAX_FILE_BYTES) return { reason: `larger than ${MAX_FILE_BYTES} bytes` };
    const text = readFileSync(path, 'utf8');
    const parsed = storedSessionSchema.safeParse(JSON.parse(text));
    if (!parsed.success) return { reason: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ') };
    if (basename(path) !== fileName(parsed.data.sessionId)) return { reason: 'its name does not match the session inside' };
    return { session: parsed.data };
  } catch (error) {
    return { reason: error instanceof Error ? error.message : String(error) };
  }
}

function fileName(sessionId: string): string {
  return `${Buffer.from(sessionId, 'utf8').toString('base64url')}.json`;
}
