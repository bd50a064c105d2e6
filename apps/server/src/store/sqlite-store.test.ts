import Database from 'better-sqlite3';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { chmod, chown, mkdir, readdir, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ChatMessage } from '@airlock/core';
import type { LeftOutCall, Rule } from '@airlock/api';
import { describe, expect, it } from 'vitest';
import { asStoreError } from './open-database';
import { DATABASE_FILE, SESSION_PAGE_QUERIES, SqliteStore } from './sqlite-store';
import { StoreError } from './store-error';
import { appendAll, run, session, startChange, tempFolder } from './test-support';

const quiet = { log: () => {} };

function jsonFileName(sessionId: string): string {
  return `${Buffer.from(sessionId, 'utf8').toString('base64url')}.json`;
}

async function expectStoreError(opening: Promise<unknown>, problem: StoreError['problem'], file: string): Promise<StoreError> {
  const error = await opening.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(StoreError);
  const storeError = error as StoreError;
  expect(storeError.problem).toBe(problem);
  expect(storeError.file).toBe(file);
  expect(storeError.message).toContain(file);
  return storeError;
}

/** Runs each statement on the database file through better-sqlite3, as damage from outside Airlock would. */
function damageRows(file: string, ...statements: string[]): void {
  const db = new Database(file);
  try {
    for (const statement of statements) db.prepare(statement).run();
  } finally {
    db.close();
  }
}

/** Opens a store in `directory`, lets `setup` write to it and closes it; damages its rows with `statements`; opens it again. */
async function reopenDamaged(directory: string, setup: (store: SqliteStore) => Promise<unknown>, ...statements: string[]): Promise<SqliteStore & AsyncDisposable> {
  const store = await SqliteStore.open({ directory, ...quiet });
  await setup(store);
  await store.close();
  damageRows(join(directory, DATABASE_FILE), ...statements);
  const reopened = await SqliteStore.open({ directory, ...quiet });
  return Object.assign(reopened, { [Symbol.asyncDispose]: () => reopened.close() });
}

describe('SqliteStore', () => {
  it('creates its file 0600 in a 0700 folder and keeps everything across a close and reopen', async () => {
    await using folder = await tempFolder();
    const directory = join(folder.path, 'data');
    const first = await SqliteStore.open({ directory, ...quiet });
    await first.createSession(session('s', 1_000, { lastRunId: 'r' }));
    await first.appendMessage('s', { role: 'user', content: 'hello' }, 1_001);
    await first.createRun(run('r', 's'));
    await appendAll(first, { runId: 'r', sessionId: 's' }, [startChange('call-1', 5_000), { kind: 'running', toolCallId: 'call-1', startedAt: 5_001 }]);
    await first.saveGrant({ grantId: 'g', scope: 'session', sessionId: 's', toolName: 'read_file', arguments: null, toolVersion: 'v1', createdAt: 1 });
    const before = {
      sessions: await first.listSessions(),
      messages: await first.loadMessages('s'),
      runs: await first.listUnfinishedRuns(),
      events: await first.loadEvents('r', 0),
      ledger: await first.listRunToolCalls('r'),
      grants: await first.listGrants(),
    };
    await first.close();

    expect((await stat(join(directory, DATABASE_FILE))).mode & 0o777).toBe(0o600);
    expect((await stat(directory)).mode & 0o777).toBe(0o700);
    const reopened = await SqliteStore.open({ directory, ...quiet });
    expect({
      sessions: await reopened.listSessions(),
      messages: await reopened.loadMessages('s'),
      runs: await reopened.listUnfinishedRuns(),
      events: await reopened.loadEvents('r', 0),
      ledger: await reopened.listRunToolCalls('r'),
      grants: await reopened.listGrants(),
    }).toStrictEqual(before);
    expect(before.ledger).toHaveLength(1);
    await appendAll(reopened, { runId: 'r', sessionId: 's' }, [{ kind: 'end', toolCallId: 'call-1', outcome: 'executed', result: 'done', endedAt: 5_002 }], 3);
    await reopened.appendMessage('s', { role: 'assistant', content: 'hi' }, 1_002);
    expect(await reopened.loadMessages('s')).toStrictEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi' },
    ]);
    await reopened.close();
  });

  it("refuses another program's database (tables and no record of Airlock's schema) and leaves it as it was", async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    const other = new Database(file);
    other.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')");
    other.close();
    const refused = await expectStoreError(SqliteStore.open({ directory: folder.path, ...quiet }), 'not-airlock', file);
    expect(refused.message).toContain('is not an Airlock database: it holds tables ("notes")');
    const after = new Database(file, { readonly: true });
    expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toStrictEqual(['notes']);
    after.close();
  });

  it('refuses a data folder other users may change, and leaves it as it was', async () => {
    await using folder = await tempFolder();
    const directory = join(folder.path, 'data');
    await mkdir(directory);
    await chmod(directory, 0o777);
    const refused = await expectStoreError(SqliteStore.open({ directory, ...quiet }), 'not-private', join(directory, DATABASE_FILE));
    expect(refused.message).toContain('is in a folder other users may change');
    expect(await readdir(directory)).toStrictEqual([]);
  });

  it('refuses a database file that is a symbolic link, and creates nothing where it leads', async () => {
    await using folder = await tempFolder();
    const directory = join(folder.path, 'data');
    await mkdir(directory, { mode: 0o700 });
    const target = join(folder.path, 'elsewhere.db');
    await symlink(target, join(directory, DATABASE_FILE));
    const refused = await expectStoreError(SqliteStore.open({ directory, ...quiet }), 'not-private', join(directory, DATABASE_FILE));
    expect(refused.message).toContain('is a symbolic link');
    await expect(stat(target)).rejects.toThrow('ENOENT');
  });

  it.skipIf(process.getuid?.() !== 0)('refuses a data folder or a database of another user (run as root, which can make them)', async () => {
    await using folder = await tempFolder();
    const theirs = join(folder.path, 'theirs');
    await mkdir(theirs, { mode: 0o700 });
    await chown(theirs, 65534, 65534);
    await expectStoreError(SqliteStore.open({ directory: theirs, ...quiet }), 'not-private', join(theirs, DATABASE_FILE));
    const mine = join(folder.path, 'mine');
    await mkdir(mine, { mode: 0o700 });
    await writeFile(join(mine, DATABASE_FILE), '');
    await chown(join(mine, DATABASE_FILE), 65534, 65534);
    const refused = await expectStoreError(SqliteStore.open({ directory: mine, ...quiet }), 'not-private', join(mine, DATABASE_FILE));
    expect(refused.message).toContain('is owned by another user (user 65534');
  });

  it('keeps what was written before its process was killed, and opens again once that process is gone', async () => {
    await using folder = await tempFolder();
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;
    const child = spawn(process.execPath, ['--import', tsx, fileURLToPath(new URL('./crash-writer.fixture.ts', import.meta.url)), folder.path], { stdio: 'inherit' });
    const [, signal] = (await once(child, 'exit')) as [number | null, string | null];
    expect(signal).toBe('SIGKILL');
    expect(await readdir(folder.path)).toContain(`${DATABASE_FILE}-wal`);

    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    expect(await store.getSession('s')).toMatchObject({ title: 'before the crash', lastRunId: 'r' });
    expect((await store.listUnfinishedRuns()).map((r) => r.runId)).toStrictEqual(['r']);
    expect(await store.loadEvents('r', 0)).toStrictEqual([{ type: 'status', text: 'working' }]);
    await store.close();
  });

  it('imports the former JSON session files once, from the data folder and its sessions/ subfolder, leaving them in place', async () => {
    await using folder = await tempFolder();
    const directory = folder.path;
    await mkdir(join(directory, 'sessions'));
    const valid = {
      sessionId: 'chat-1',
      title: 'hello',
      createdAt: 1_000,
      updatedAt: 2_000,
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi there' },
      ],
    };
    const inSubfolder = { ...valid, sessionId: 'chat-2', title: 'older', updatedAt: 1_500, messages: [] };
    await writeFile(join(directory, jsonFileName('chat-1')), JSON.stringify(valid));
    await writeFile(join(directory, 'sessions', jsonFileName('chat-2')), JSON.stringify(inSubfolder));
    await writeFile(join(directory, 'sessions', jsonFileName('chat-1')), JSON.stringify(valid));
    await writeFile(join(directory, 'sessions', jsonFileName('bad')), JSON.stringify({ ...valid, sessionId: 'bad', messages: [{ role: 'robot' }] }));
    await writeFile(join(directory, 'sessions', 'not-json.json'), '{ half');
    await writeFile(join(directory, 'sessions', jsonFileName('renamed')), JSON.stringify({ ...valid, sessionId: 'other' }));
    const files = await readdir(join(directory, 'sessions'));
    const lines: string[] = [];

    const store = await SqliteStore.open({ directory, log: (line) => lines.push(line) });

    expect(store.jsonImport.imported).toStrictEqual([
      { file: jsonFileName('chat-1'), sessionId: 'chat-1' },
      { file: `sessions/${jsonFileName('chat-2')}`, sessionId: 'chat-2' },
    ]);
    expect(store.jsonImport.skipped.map((entry) => entry.file).sort()).toStrictEqual(
      [jsonFileName('bad'), jsonFileName('chat-1'), jsonFileName('renamed'), 'not-json.json'].map((name) => `sessions/${name}`).sort(),
    );
    expect(store.jsonImport.skipped.find((entry) => entry.file === `sessions/${jsonFileName('chat-1')}`)?.reason).toBe('a chat with the same id is already stored');
    expect(lines.filter((line) => line.startsWith('Skipped'))).toHaveLength(4);
    expect(await store.listSessions()).toStrictEqual([
      { sessionId: 'chat-1', title: 'hello', createdAt: 1_000, updatedAt: 2_000, confirmToolCalls: true, lastRunId: null },
      { sessionId: 'chat-2', title: 'older', createdAt: 1_000, updatedAt: 1_500, confirmToolCalls: true, lastRunId: null },
    ]);
    expect(await store.loadMessages('chat-1')).toStrictEqual(valid.messages);
    await store.deleteSession('chat-2');
    await store.close();

    await writeFile(join(directory, 'sessions', jsonFileName('chat-3')), JSON.stringify({ ...valid, sessionId: 'chat-3' }));
    const reopened = await SqliteStore.open({ directory, ...quiet });
    expect(reopened.jsonImport).toStrictEqual({ imported: [{ file: `sessions/${jsonFileName('chat-3')}`, sessionId: 'chat-3' }], skipped: [] });
    expect((await reopened.listSessions()).map((s) => s.sessionId)).toStrictEqual(['chat-1', 'chat-3']);
    await reopened.close();
    expect(await readdir(join(directory, 'sessions'))).toStrictEqual([...files, jsonFileName('chat-3')].sort());
    expect(JSON.parse(await readFile(join(directory, jsonFileName('chat-1')), 'utf8'))).toStrictEqual(valid);
  });

  it('makes an existing database readable by its owner only again, its journal files included', async () => {
    await using folder = await tempFolder();
    const first = await SqliteStore.open({ directory: folder.path, ...quiet });
    await first.close();
    const file = join(folder.path, DATABASE_FILE);
    await chmod(file, 0o644);
    const reopened = await SqliteStore.open({ directory: folder.path, ...quiet });
    await reopened.createSession(session('s', 1_000));
    await reopened.appendMessage('s', { role: 'user', content: 'a secret typed into a chat' }, 1_001);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(`${file}-wal`)).mode & 0o777).toBe(0o600);
    await reopened.close();
  });

  it('names a file it may read but not write as one it cannot open, with what to check', () => {
    const error = asStoreError('/data/airlock.db', new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_LOCK'));
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).problem).toBe('cannot-open');
    expect((error as StoreError).message).toContain('may read and write it');
    expect((error as StoreError).message).toContain('cannot be read and written (disk I/O error)');
    expect((error as StoreError).message).not.toContain('not a usable database');
  });

  // Mounting a file system takes root.
  it.skipIf(process.getuid?.() !== 0)('says a database on a file system mounted read-only is there, not in its permissions, and leaves it as it was', async () => {
    await using folder = await tempFolder();
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', folder.path]);
    try {
      const directory = join(folder.path, 'data');
      await mkdir(directory, { mode: 0o700 });
      const store = await SqliteStore.open({ directory, ...quiet });
      await store.createSession(session('kept'));
      await store.close();
      const bytes = await readFile(join(directory, DATABASE_FILE));
      execFileSync('mount', ['-o', 'remount,ro', folder.path]);
      const error = await expectStoreError(SqliteStore.open({ directory, ...quiet }), 'cannot-open', join(directory, DATABASE_FILE));
      expect(error.message).toContain(': cannot be written: its file system is mounted read-only (');
      expect((await readFile(join(directory, DATABASE_FILE))).equals(bytes)).toBe(true);
    } finally {
      execFileSync('umount', [folder.path]);
    }
  });

  it('refuses a file that is not a database, naming it, and leaves it as it was', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    const content = 'these are my notes, not a database\n'.repeat(200);
    await writeFile(file, content, { mode: 0o600 });

    await expectStoreError(SqliteStore.open({ directory: folder.path, ...quiet }), 'corrupt', file);
    expect(await readFile(file, 'utf8')).toBe(content);
    expect(await readdir(folder.path)).toStrictEqual([DATABASE_FILE]);
  });

  it('refuses a damaged database that fails quick_check, and leaves it as it was', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    for (let index = 0; index < 200; index += 1) {
      await store.createSession(session(`chat-${index}`, index));
      await store.appendMessage(`chat-${index}`, { role: 'user', content: 'x'.repeat(500) }, index);
    }
    await store.close();
    const bytes = await readFile(file);
    const pageSize = bytes.readUInt16BE(16);
    expect(bytes.length / pageSize).toBeGreaterThan(10);
    bytes.fill(0xa5, 6 * pageSize, 6 * pageSize + 64);
    await writeFile(file, bytes);

    const error = await expectStoreError(SqliteStore.open({ directory: folder.path, ...quiet }), 'corrupt', file);
    expect(error.message).toContain('is damaged (quick_check:');
    expect((await readFile(file)).equals(bytes)).toBe(true);
  });

  it('names the file and the record when a row\'s text was damaged where quick_check does not read, and leaves it as it was', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    await using reopened = await reopenDamaged(
      folder.path,
      async (store) => {
        await store.createSession(session('kept'));
        await store.appendMessage('kept', { role: 'user', content: 'hello' }, 1);
      },
      "UPDATE messages SET json = '{\"role\":\"us' WHERE session_id = 'kept'",
    );
    const error = await expectStoreError(reopened.loadMessagePage('kept', { limit: 10, maxChars: 1000 }), 'corrupt', file);
    expect(error.message).toBe(
      `${file}: holds a damaged record (a message of chat kept: Unterminated string in JSON at position 11). It was left as it is: restore it from a backup, or move it aside to start with an empty store.`,
    );
    await expectStoreError(reopened.loadMessages('kept'), 'corrupt', file);
    expect((await reopened.listSessions()).map((s) => s.sessionId)).toStrictEqual(['kept']);
  });

  it('reads an event or a message whose JSON is no event or message (a field of the wrong type, an unknown type or role) as a damaged record, named; with leftOut, the other messages of the chat read without it, whole or a page, and leaves it as it was', async () => {
    await using folder = await tempFolder();
    await using reopened = await reopenDamaged(
      folder.path,
      async (store) => {
        await store.createSession(session('kept'));
        await store.createRun(run('r1', 'kept'));
        await appendAll(store, { runId: 'r1', sessionId: 'kept' }, [undefined, undefined]);
        await store.appendMessage('kept', { role: 'user', content: 'hello' }, 1);
        await store.appendMessage('kept', { role: 'assistant', content: 'hi' }, 2);
      },
      "UPDATE events SET json = '{\"type\":\"status\",\"text\":5}' WHERE run_id = 'r1' AND seq = 1",
      "UPDATE events SET json = '{\"type\":\"tool-run\",\"command\":\"ls\"}' WHERE run_id = 'r1' AND seq = 2",
      "UPDATE messages SET json = '{\"role\":\"person\",\"content\":\"hello\"}' WHERE session_id = 'kept' AND seq = 1",
    );
    const reads: [() => Promise<unknown>, RegExp][] = [
      [() => reopened.loadEvents('r1', 0), /^an event of run r1: text: .+$/],
      [() => reopened.loadEvents('r1', 0, { events: 10, chars: 100_000 }), /^an event of run r1: text: .+$/],
      [() => reopened.loadEvents('r1', 1), /^an event of run r1: type: .+$/],
      [() => reopened.loadLastEvent('r1'), /^an event of run r1: type: .+$/],
      [() => reopened.loadMessages('kept'), /^a message of chat kept: role: .+$/],
      [() => reopened.loadMessagePage('kept', { limit: 10, maxChars: 1000 }), /^a message of chat kept: role: .+$/],
    ];
    for (const [read, record] of reads) {
      const error = await read().then(() => undefined, (thrown: unknown) => thrown);
      expect(reopened.damagedRecord(error)).toMatch(record);
    }
    const leftOut: string[] = [];
    expect(await reopened.loadMessages('kept', (damaged) => leftOut.push(damaged))).toStrictEqual([{ role: 'assistant', content: 'hi' }]);
    expect(leftOut).toStrictEqual([expect.stringMatching(/^a message of chat kept: role: .+$/)]);
    const page = await reopened.loadMessagePage('kept', { limit: 10, maxChars: 1000, leftOut: (damaged) => leftOut.push(damaged) });
    expect([page.messages, page.runIds, page.start]).toStrictEqual([[{ role: 'assistant', content: 'hi' }], [null], 0]);
    expect(leftOut).toHaveLength(2);
    expect(await reopened.lastEventSeq('r1')).toBe(2);
  });

  it("reads a run's options that are JSON but no options (enabled tools as a string, a call limit past the bounds) as a damaged record, named: listed unfinished, and read alone, as unreadable beside the others", async () => {
    await using folder = await tempFolder();
    await using reopened = await reopenDamaged(
      folder.path,
      async (store) => {
        for (const id of ['s1', 's2', 's3']) await store.createSession(session(id));
        await store.createRun(run('r1', 's1', 2_000));
        await store.createRun(run('r2', 's2', 3_000));
        await store.createRun(run('r3', 's3', 4_000));
      },
      "UPDATE runs SET options = json_set(options, '$.enabledTools', 'terminal python') WHERE run_id = 'r1'",
      "UPDATE runs SET options = json_set(options, '$.maxToolCalls', 1e9) WHERE run_id = 'r2'",
    );
    const unreadable = (runId: string, sessionId: string, startedAt: number, record: RegExp) => ({ ...run(runId, sessionId, startedAt), options: {}, unreadable: expect.stringMatching(record) });
    expect(await reopened.listUnfinishedRuns()).toStrictEqual([
      unreadable('r1', 's1', 2_000, /^the options of run r1: enabledTools: .+$/),
      unreadable('r2', 's2', 3_000, /^the options of run r2: maxToolCalls: .+$/),
      run('r3', 's3', 4_000),
    ]);
    // Read alone too, the run is there, its options not: whether it ended and its chat still read.
    expect(await reopened.getRun('r1')).toStrictEqual(unreadable('r1', 's1', 2_000, /^the options of run r1: enabledTools: .+$/));
    expect(await reopened.getRun('r3')).toStrictEqual(run('r3', 's3', 4_000));
  });

  it('names a damaged rule or grant by its id and says the command that deletes its row, leaving it as it was', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    await using reopened = await reopenDamaged(
      folder.path,
      async (store) => {
        await store.createSession(session('s'));
        await store.saveRule({ id: 'rule-deny', effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, source: 'user', scope: { kind: 'global' }, createdAt: '2026-12-01T00:00:00.000Z' });
        await store.saveGrant({ grantId: 'grant-1', scope: 'session', sessionId: 's', toolName: 'terminal', arguments: { command: 'ls' }, toolVersion: 'v1', createdAt: 1_000 });
      },
      "UPDATE rules SET json = substr(json, 1, 20) WHERE rule_id = 'rule-deny'",
      "UPDATE grants SET arguments = '{\"comm' WHERE grant_id = 'grant-1'",
    );
    const rules = await expectStoreError(reopened.listRules(), 'corrupt', file);
    expect(rules.message).toMatch(/^.+: holds a damaged record \(rule rule-deny: .+\)\. To start without it, delete its row with .+, then add it again if you still want it\. It was left as it is: /);
    expect(rules.message).toContain(`. To start without it, delete its row with sqlite3 '${file}' "DELETE FROM rules WHERE rule_id = 'rule-deny'", then add it again`);
    const grants = await expectStoreError(reopened.listGrants(), 'corrupt', file);
    expect(grants.message).toContain(`holds a damaged record (the arguments of grant grant-1: `);
    expect(grants.message).toContain(`. To start without it, delete its row with sqlite3 '${file}' "DELETE FROM grants WHERE grant_id = 'grant-1'", then add it again`);
    await reopened.close();
    const kept = new Database(file, { readonly: true });
    expect(kept.prepare("SELECT json FROM rules WHERE rule_id = 'rule-deny'").pluck().get()).toHaveLength(20);
    kept.close();
  });

  it('reads arguments whose JSON is no arguments object (a grant\'s damaged into null, which would read as any call of its tool) as a damaged record, named', async () => {
    await using folder = await tempFolder();
    await using reopened = await reopenDamaged(
      folder.path,
      async (store) => {
        await store.createSession(session('s'));
        await store.createRun(run('r1', 's'));
        await appendAll(store, { runId: 'r1', sessionId: 's' }, [startChange('call-1', 3_000)]);
        await store.saveGrant({ grantId: 'grant-1', scope: 'session', sessionId: 's', toolName: 'terminal', arguments: { command: 'ls' }, toolVersion: 'v1', createdAt: 1_000 });
      },
      "UPDATE grants SET arguments = 'null' WHERE grant_id = 'grant-1'",
      "UPDATE tool_calls SET arguments = '\"rm -rf ~\"' WHERE tool_call_id = 'call-1'",
    );
    const reads: [() => Promise<unknown>, RegExp][] = [
      [() => reopened.listGrants(), /^the arguments of grant grant-1: the record: .+$/],
      [() => reopened.listRunToolCalls('r1'), /^the arguments of call call-1 of run r1: the record: .+$/],
    ];
    for (const [read, record] of reads) {
      const error = await read().then(() => undefined, (thrown: unknown) => thrown);
      expect(reopened.damagedRecord(error)).toMatch(record);
    }
  });

  it('a page of the audit leaves out a ledger row that does not read and names it in leftOut, the others listed', async () => {
    await using folder = await tempFolder();
    await using reopened = await reopenDamaged(
      folder.path,
      async (store) => {
        await store.createSession(session('s'));
        await store.createRun(run('r1', 's'));
        await appendAll(store, { runId: 'r1', sessionId: 's' }, [startChange('call-1', 3_000), startChange('call-2', 3_001)]);
      },
      "UPDATE tool_calls SET decision = 'allox' WHERE tool_call_id = 'call-1'",
    );
    const page = await reopened.listAudit({ sessionId: 's' });
    expect([page.entries.map((entry) => entry.toolCallId), page.leftOut, page.nextCursor]).toStrictEqual([['call-2'], ['the decision of call call-1 of run r1: "allox" is none of allow, deny, timeout, cancel'], null]);
  });

  it('a page of a chat with leftOut leaves out a call row that does not read and names it with its run and call, the messages and other rows read', async () => {
    await using folder = await tempFolder();
    const turn: ChatMessage = { role: 'assistant', content: '', toolCalls: ['call-1', 'call-2'].map((id) => ({ id, name: 'terminal', arguments: { command: 'ls' } })) };
    await using reopened = await reopenDamaged(
      folder.path,
      async (store) => {
        await store.createSession(session('s'));
        await store.createRun(run('r1', 's'));
        await appendAll(store, { runId: 'r1', sessionId: 's' }, [startChange('call-1', 3_000), startChange('call-2', 3_001)]);
        await store.appendMessage('s', turn, 4_000, { runId: 'r1' });
      },
      "UPDATE tool_calls SET decision = 'allox' WHERE tool_call_id = 'call-1'",
    );
    const leftOut: [string, LeftOutCall | undefined][] = [];
    const page = await reopened.loadMessagePage('s', { limit: 10, maxChars: 10_000, leftOut: (record, call) => leftOut.push([record, call]) });
    expect([page.messages, page.runIds, page.toolCalls.map((call) => call.toolCallId)]).toStrictEqual([[turn], ['r1'], ['call-2']]);
    expect(leftOut).toStrictEqual([['the decision of call call-1 of run r1: "allox" is none of allow, deny, timeout, cancel', { runId: 'r1', toolCallId: 'call-1' }]]);
  });

  it('reads a rule that is JSON but no rule as a damaged record unless it is an allow rule: a deny rule left out would let through what it refuses', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    const deny: Rule = { id: 'rule-deny', effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, source: 'user', scope: { kind: 'global' }, createdAt: '2026-12-01T00:00:00.000Z' };
    // An allow rule that is no rule is read as it is: the rule book sets it aside, letting nothing through.
    await using reopened = await reopenDamaged(
      folder.path,
      async (store) => {
        await store.saveRule(deny);
        await store.saveRule({ ...deny, id: 'rule-allow', effect: 'allow', match: { kind: 'command-prefix', tokens: ['ls'], exact: false } });
      },
      "UPDATE rules SET json = json_set(json, '$.tool', 5) WHERE rule_id = 'rule-allow'",
    );
    expect((await reopened.listRules()).map((stored) => stored.rule.id)).toStrictEqual(['rule-deny', 'rule-allow']);
    await reopened.close();
    for (const damage of ["json_set(json, '$.tool', 5)", "json_set(json, '$.effect', 'dent')", "json_remove(json, '$.match')"]) {
      damageRows(file, `UPDATE rules SET json = ${damage} WHERE rule_id = 'rule-deny'`);
      const again = await SqliteStore.open({ directory: folder.path, ...quiet });
      const error = await expectStoreError(again.listRules(), 'corrupt', file);
      expect(error.message).toMatch(/: holds a damaged record \(rule rule-deny: \S+: .+\)\. To start without it, delete its row with sqlite3 /);
      await again.close();
      const restoring = new Database(file);
      restoring.prepare("UPDATE rules SET json = ? WHERE rule_id = 'rule-deny'").run(JSON.stringify(deny));
      restoring.close();
    }
  });

  it('refuses a database truncated to 0 bytes, saying how to start afresh, and leaves it as it was', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    await store.createSession(session('kept'));
    await store.close();
    await truncate(file, 0);

    const error = await expectStoreError(SqliteStore.open({ directory: folder.path, ...quiet }), 'corrupt', file);
    expect(error.message).toBe(`${file}: is empty (0 bytes) where a database was expected, and was not taken for a new one. It was left as it is: restore it from a backup, or move it aside to start with an empty store.`);
    expect((await stat(file)).size).toBe(0);
    await rm(file);
    const fresh = await SqliteStore.open({ directory: folder.path, ...quiet });
    expect(await fresh.listSessions()).toStrictEqual([]);
    await fresh.close();
  });

  it('a first start that fails before its first write leaves no empty file, and the next start makes the store', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    // SQLite cannot make its journal there: the first write fails, the new file still empty.
    await mkdir(`${file}-journal`, { mode: 0o700 });
    await expectStoreError(SqliteStore.open({ directory: folder.path, ...quiet }), 'cannot-open', file);
    expect(await readdir(folder.path)).toStrictEqual([`${DATABASE_FILE}-journal`]);

    await rm(`${file}-journal`, { recursive: true });
    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    await store.createSession(session('new'));
    expect((await store.listSessions()).map((s) => s.sessionId)).toStrictEqual(['new']);
    await store.close();
  });

  it('refuses a database another server or connection holds, and opens it once that one lets go', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    const first = await SqliteStore.open({ directory: folder.path, ...quiet });
    await first.createSession(session('kept'));

    await expectStoreError(SqliteStore.open({ directory: folder.path, busyTimeoutMs: 50, ...quiet }), 'locked', file);
    await first.close();

    const other = new Database(file);
    other.pragma('journal_mode = DELETE');
    other.exec('BEGIN EXCLUSIVE');
    await expectStoreError(SqliteStore.open({ directory: folder.path, busyTimeoutMs: 50, ...quiet }), 'locked', file);
    other.exec('ROLLBACK');
    other.close();

    const reopened = await SqliteStore.open({ directory: folder.path, ...quiet });
    expect((await reopened.listSessions()).map((s) => s.sessionId)).toStrictEqual(['kept']);
    await reopened.close();
  });

  it('reads a page of chats along an index from where the last page ended: neither every row nor a sort of them', async () => {
    await using folder = await tempFolder();
    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    for (let index = 0; index < 50; index++) await store.createSession(session(`chat-${index}`, 1_000 + (index % 7)));
    expect((await store.listSessionPage({ limit: 3, after: { updatedAt: 1_003, sessionId: 'chat-20' } })).map((s) => s.sessionId)).toStrictEqual(['chat-17', 'chat-10', 'chat-9']);
    // The store holds its file alone: asked once it let go.
    await store.close();
    const db = new Database(join(folder.path, DATABASE_FILE), { readonly: true });
    try {
      const plan = (sql: string) =>
        db
          .prepare<Record<string, unknown>, { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
          .all({ limit: 10, updatedAt: 1_003, sessionId: 'chat-20' })
          .map((row) => row.detail);
      expect(plan(SESSION_PAGE_QUERIES.first)).toStrictEqual(['SCAN sessions USING INDEX sessions_by_activity']);
      expect(plan(SESSION_PAGE_QUERIES.after)).toStrictEqual(['SEARCH sessions USING INDEX sessions_by_activity ((updated_at,session_id)<(?,?))']);
    } finally {
      db.close();
    }
  });
});
