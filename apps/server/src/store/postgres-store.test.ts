import { FencedError, type ClusterMessage, type LedgerChange, type LeftOutCall, type Rule } from '@airlock/api';
import { ConflictError, NotFoundError, type ChatMessage } from '@airlock/core';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { escapeIdentifier } from 'pg';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { instanceLockHolder, openTestDatabase, probeTestDatabase, TEST_DATABASE_URL, terminateBackend, withClient, type TestDatabase } from '../../test/support/postgres';
import { resolveLocalhostAsStock } from '../http/test-support';
import { postgresMigrations } from './postgres-migrations';
import { channelName, MESSAGES_PER_READ, PostgresStore, SESSION_PAGE_QUERIES, type PostgresStoreOptions } from './postgres-store';
import { StoreError } from './store-error';
import { appendAll, insertOldPostgresCall, postgresSchemaAt, run, session, startChange, statusEvent } from './test-support';

const postgres = await probeTestDatabase();
const POLL = { timeout: 20_000, interval: 20 };
/** A deadline the database's clock has not reached: the call waits (2100-01-01). */
const FAR_DEADLINE = 4_102_444_800_000;

/** A call that waits for a decision until FAR_DEADLINE. */
function waitingChange(toolCallId: string, requestedAt: number): Extract<LedgerChange, { kind: 'start' }> {
  return { ...startChange(toolCallId, requestedAt), expiresAt: FAR_DEADLINE };
}

interface OpenedStore extends PostgresStore, AsyncDisposable {}

async function openStore(database: TestDatabase, instanceId: string, options: Partial<PostgresStoreOptions> = {}): Promise<OpenedStore> {
  const store = await PostgresStore.open({ url: database.url, schema: database.schema, instanceId, log: () => {}, ...options });
  return Object.assign(store, { [Symbol.asyncDispose]: () => store.close() });
}

/** Runs each statement on the test's schema (its tables named bare) from outside the store, as damage to its rows would. */
async function damageRows(database: TestDatabase, ...statements: string[]): Promise<void> {
  await withClient(async (client) => {
    await client.query(`SET search_path TO ${escapeIdentifier(database.schema)}`);
    for (const statement of statements) await client.query(statement);
  });
}

/** Every message `store` delivers, in order. */
function record(store: PostgresStore): ClusterMessage[] {
  const messages: ClusterMessage[] = [];
  store.subscribe((message) => messages.push(message));
  return messages;
}

async function runRow(database: TestDatabase, runId: string): Promise<{ owner: string | null; fence: string; lease_until: string | null } | undefined> {
  return withClient(async (client) => {
    const { rows } = await client.query<{ owner: string | null; fence: string; lease_until: string | null }>(
      `SELECT owner, fence, lease_until FROM "${database.schema}".runs WHERE run_id = $1`,
      [runId],
    );
    return rows[0];
  });
}

/** Whether the run's lease ran out by the database's clock. */
async function leaseRanOut(database: TestDatabase, runId: string): Promise<boolean> {
  return withClient(async (client) => {
    const { rows } = await client.query<{ out: boolean }>(
      `SELECT lease_until < (extract(epoch from clock_timestamp()) * 1000)::bigint AS out FROM "${database.schema}".runs WHERE run_id = $1`,
      [runId],
    );
    return rows[0]?.out === true;
  });
}

describe.skipIf(!postgres.available)(postgres.available ? 'PostgresStore' : `PostgresStore (skipped: ${postgres.reason})`, () => {
  it('a run created with an owner is leased to it with fencing token 1; nobody, itself included, claims it while the lease lives', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await using b = await openStore(database, 'b');
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');

    expect(await runRow(database, 'r')).toMatchObject({ owner: 'a', fence: '1' });
    expect(await b.claimRun('r')).toBeUndefined();
    expect(await a.claimRun('r')).toBeUndefined();
    expect(await b.listClaimableRuns()).toStrictEqual([]);
    expect(await b.claimRun('never')).toBeUndefined();

    await a.createSession(session('free'));
    await a.createRun(run('unowned', 'free'));
    expect((await b.listClaimableRuns()).map((r) => r.runId)).toStrictEqual(['unowned']);
    expect(await b.claimRun('unowned')).toBe(1);
    expect(await a.claimRun('unowned')).toBeUndefined();
    await b.endRun('unowned', 'done', 3_000, 1);
    expect(await a.claimRun('unowned')).toBeUndefined();
  });

  it('fencing: once B takes over a run whose lease ran out, A writes nothing more with its old token', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a', { leaseMs: 200 });
    await using b = await openStore(database, 'b', { leaseMs: 200 });
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    await a.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('by a'), at: 1, ledger: startChange('call-1', 10_000), fence: 1 });

    // A stops renewing; B's periodic claim succeeds once the lease has run out by the database's clock.
    await expect.poll(() => b.claimRun('r'), POLL).toBe(2);
    expect(await runRow(database, 'r')).toMatchObject({ owner: 'b', fence: '2' });
    const ledger = await b.listRunToolCalls('r');

    await expect(a.appendEvent({ runId: 'r', sessionId: 's', seq: 2, event: statusEvent('late a'), at: 2, fence: 1 })).rejects.toThrow(FencedError);
    await expect(
      a.appendEvents([
        { runId: 'r', sessionId: 's', seq: 2, event: statusEvent('late a'), at: 2, fence: 1 },
        { runId: 'r', sessionId: 's', seq: 3, event: statusEvent('late a'), at: 3, ledger: { kind: 'running', toolCallId: 'call-1', startedAt: 3 }, fence: 1 },
      ]),
    ).rejects.toThrow(FencedError);
    await expect(a.appendMessage('s', { role: 'assistant', content: 'late a' }, 2, { runId: 'r', fence: 1 })).rejects.toThrow(FencedError);
    // A message that comes with an event is under the event's fence, with a ledger change or without one.
    const lateTool = { role: 'tool' as const, toolCallId: 'call-1', toolName: 'echo', content: 'late a' };
    await expect(a.appendEvent({ runId: 'r', sessionId: 's', seq: 2, event: statusEvent('late a'), at: 2, messages: [lateTool], fence: 1 })).rejects.toThrow(FencedError);
    await expect(
      a.appendEvent({ runId: 'r', sessionId: 's', seq: 2, event: statusEvent('late a'), at: 2, messages: [lateTool], ledger: { kind: 'running', toolCallId: 'call-1', startedAt: 3 }, fence: 1 }),
    ).rejects.toThrow(FencedError);
    await expect(a.endRun('r', 'error', 4, 1)).rejects.toThrow(FencedError);
    await expect(a.appendEvent({ runId: 'gone', sessionId: 's', seq: 1, event: statusEvent('no run'), at: 2, fence: 1 })).rejects.toThrow(FencedError);

    expect(await b.loadEvents('r', 0)).toStrictEqual([statusEvent('by a')]);
    expect(await b.listRunToolCalls('r')).toStrictEqual(ledger);
    expect(await b.loadMessages('s')).toStrictEqual([]);
    expect((await b.getRun('r'))?.endedAt).toBeNull();

    await b.appendEvent({ runId: 'r', sessionId: 's', seq: 2, event: statusEvent('by b'), at: 5, fence: 2 });
    await b.appendMessage('s', { role: 'assistant', content: 'by b' }, 5, { runId: 'r', fence: 2 });
    await b.endRun('r', 'done', 6, 2);
    expect(await b.loadEvents('r', 0)).toStrictEqual([statusEvent('by a'), statusEvent('by b')]);
    expect(await b.loadMessages('s')).toStrictEqual([{ role: 'assistant', content: 'by b' }]);
    expect(await runRow(database, 'r')).toStrictEqual({ owner: null, fence: '2', lease_until: null });
  });

  it('renews the leases of the runs it holds, releases them for the others to take at once, and tells them', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a', { leaseMs: 60_000 });
    await using b = await openStore(database, 'b', { leaseMs: 60_000 });
    const heardByB = record(b);
    for (const id of ['s1', 's2', 's3']) await a.createSession(session(id));
    await a.createRun(run('r1', 's1', 1_000), 'a');
    await a.createRun(run('r2', 's2', 2_000), 'a');
    await b.createRun(run('r3', 's3', 3_000), 'b');
    const before = await runRow(database, 'r1');

    expect((await a.renewLeases()).held).toStrictEqual(new Set(['r1', 'r2']));
    expect((await b.renewLeases()).held).toStrictEqual(new Set(['r3']));
    expect(Number((await runRow(database, 'r1'))?.lease_until)).toBeGreaterThanOrEqual(Number(before?.lease_until));
    expect(await b.listClaimableRuns()).toStrictEqual([]);

    await a.releaseRuns();
    expect((await b.listClaimableRuns()).map((r) => r.runId)).toStrictEqual(['r1', 'r2']);
    await expect.poll(() => heardByB, POLL).toContainEqual({ type: 'released', instanceId: 'a' });
    expect(await b.claimRun('r1')).toBe(2);
    expect((await a.renewLeases()).held).toStrictEqual(new Set());
    expect((await b.renewLeases()).held).toStrictEqual(new Set(['r1', 'r3']));

    await b.endRun('r3', 'done', 4_000, 1);
    expect((await b.renewLeases()).held).toStrictEqual(new Set(['r1']));
    expect((await b.listClaimableRuns()).map((r) => r.runId)).toStrictEqual(['r2']);
    expect((await b.listUnfinishedRuns()).map((r) => r.runId)).toStrictEqual(['r1', 'r2']);
  });

  it('a Stop is told to every instance with its own commit, by the store that stored it, and each renewal of the owner answers its runs whose Stop is stored', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a', { leaseMs: 60_000 });
    await using b = await openStore(database, 'b', { leaseMs: 60_000 });
    const heardByA = record(a);
    for (const id of ['s1', 's2']) await a.createSession(session(id));
    await a.createRun(run('r1', 's1', 1_000), 'a');
    await a.createRun(run('r2', 's2', 2_000), 'a');
    expect(await a.renewLeases()).toStrictEqual({ held: new Set(['r1', 'r2']), stopped: new Set() });

    expect(await b.requestCancel('r1')).toBe(true);
    await expect.poll(() => heardByA, POLL).toContainEqual({ type: 'cancel', runId: 'r1', sessionId: 's1' });
    expect(await a.renewLeases()).toStrictEqual({ held: new Set(['r1', 'r2']), stopped: new Set(['r1']) });

    await a.endRun('r1', 'cancelled', 3_000, 1);
    expect(await b.requestCancel('r1')).toBe(false);
    expect(await a.renewLeases()).toStrictEqual({ held: new Set(['r2']), stopped: new Set() });
  });

  it('a second store under an id another live one holds is refused, naming the id; once the holder closes, the id is taken at once and its runs given up with a raised token', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a', { leaseMs: 60_000 });
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');

    const refused = await openStore(database, 'a', { leaseMs: 60_000 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).problem).toBe('instance-in-use');
    expect((refused as StoreError).message).toContain('instance id "a" is held by another live Airlock process');
    expect((await a.renewLeases()).held).toStrictEqual(new Set(['r']));
    expect(await runRow(database, 'r')).toMatchObject({ owner: 'a', fence: '1' });

    await a.close();
    expect(await withClient(async (client) => (await client.query<{ instance_id: string }>(`SELECT instance_id FROM "${database.schema}".instances`)).rows)).toStrictEqual([]);
    await using again = await openStore(database, 'a', { leaseMs: 60_000 });
    expect(await runRow(database, 'r')).toStrictEqual({ owner: null, fence: '2', lease_until: null });
    expect(await again.claimRun('r')).toBe(3);
    expect((await again.renewLeases()).held).toStrictEqual(new Set(['r']));
  });

  it('reads a chat longer than one read holds whole and in order, and only its own messages', async () => {
    await using database = await openTestDatabase();
    await using store = await openStore(database, 'a');
    await store.createSession(session('long'));
    await store.createSession(session('other'));
    const count = MESSAGES_PER_READ * 2 + 3;
    const written: ChatMessage[] = [];
    for (let index = 0; index < count; index++) {
      const message: ChatMessage = { role: index % 2 === 0 ? 'user' : 'assistant', content: `message ${index}` };
      written.push(message);
      await store.appendMessage('long', message, index);
      if (index % 100 === 0) await store.appendMessage('other', { role: 'user', content: `other ${index}` }, index);
    }
    expect(await store.loadMessages('long')).toStrictEqual(written);
    expect((await store.loadMessages('other')).length).toBe(Math.ceil(count / 100));
  });

  it('names the schema and the record when a row\'s text does not read as JSON, as the SQLite store names its file', async () => {
    await using database = await openTestDatabase();
    await using store = await openStore(database, 'a');
    await store.createSession(session('kept'));
    await store.appendMessage('kept', { role: 'user', content: 'hello' }, 1);
    await damageRows(database, `UPDATE messages SET json = '{"role":"us' WHERE session_id = 'kept'`);
    const error = await store.loadMessages('kept').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).problem).toBe('corrupt');
    expect((error as StoreError).message).toContain(`(schema ${database.schema}): holds a damaged record (a message of chat kept: Unterminated string in JSON at position 11)`);
    expect((await store.listSessions()).map((s) => s.sessionId)).toStrictEqual(['kept']);
  });

  it('lists an unfinished run whose options do not read, or are JSON but no options, as unreadable beside the others, and reads a decision that is none of the words as a damaged record', async () => {
    await using database = await openTestDatabase();
    await using store = await openStore(database, 'a');
    for (const id of ['s1', 's2', 's3']) await store.createSession(session(id));
    await store.createRun(run('r1', 's1', 2_000));
    await store.createRun(run('r2', 's2', 3_000));
    await store.createRun(run('r3', 's3', 4_000));
    await appendAll(store, { runId: 'r2', sessionId: 's2' }, [startChange('call-1', 4_000)]);
    await damageRows(
      database,
      `UPDATE runs SET options = '{"max' WHERE run_id = 'r1'`,
      `UPDATE runs SET options = '{"enabledTools":"terminal python"}' WHERE run_id = 'r3'`,
      `UPDATE tool_calls SET decision = 'allox', source = 'user', decided_at = 5000 WHERE run_id = 'r2'`,
    );

    const unreadable = { ...run('r1', 's1', 2_000), options: {}, unreadable: 'the options of run r1: Unterminated string in JSON at position 5' };
    const noOptions = { ...run('r3', 's3', 4_000), options: {}, unreadable: expect.stringMatching(/^the options of run r3: enabledTools: .+$/) };
    expect(await store.listUnfinishedRuns()).toStrictEqual([unreadable, run('r2', 's2', 3_000), noOptions]);
    expect(await store.listClaimableRuns()).toStrictEqual([unreadable, run('r2', 's2', 3_000), noOptions]);
    expect(await store.getRun('r3')).toStrictEqual(noOptions);
    for (const read of [() => store.listRunToolCalls('r2'), () => store.findDecision('s2', 'approval-call-1')]) {
      const error = await read().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(store.damagedRecord(error)).toMatch(/^the decision of (call call-1 of run r2|approval approval-call-1): "allox" is none of allow, deny, timeout, cancel$/);
    }
  });

  it('reads an event or a message whose JSON is no event or message (a field of the wrong type, an unknown type or role) as a damaged record, named; with leftOut, the other messages of the chat read without it, whole or a page', async () => {
    await using database = await openTestDatabase();
    await using store = await openStore(database, 'a');
    await store.createSession(session('kept'));
    await store.createRun(run('r1', 'kept'));
    await appendAll(store, { runId: 'r1', sessionId: 'kept' }, [undefined, undefined]);
    await store.appendMessage('kept', { role: 'user', content: 'hello' }, 1);
    await store.appendMessage('kept', { role: 'assistant', content: 'hi' }, 2);
    await damageRows(
      database,
      `UPDATE events SET json = '{"type":"status","text":5}' WHERE run_id = 'r1' AND seq = 1`,
      `UPDATE events SET json = '{"type":"tool-run","command":"ls"}' WHERE run_id = 'r1' AND seq = 2`,
      `UPDATE messages SET json = '{"role":"person","content":"hello"}' WHERE session_id = 'kept' AND json LIKE '%"user"%'`,
    );
    const reads: [() => Promise<unknown>, RegExp][] = [
      [() => store.loadEvents('r1', 0), /^an event of run r1: text: .+$/],
      [() => store.loadEvents('r1', 0, { events: 10, chars: 100_000 }), /^an event of run r1: text: .+$/],
      [() => store.loadEvents('r1', 1), /^an event of run r1: type: .+$/],
      [() => store.loadLastEvent('r1'), /^an event of run r1: type: .+$/],
      [() => store.loadMessages('kept'), /^a message of chat kept: role: .+$/],
      [() => store.loadMessagePage('kept', { limit: 10, maxChars: 1000 }), /^a message of chat kept: role: .+$/],
    ];
    for (const [read, record] of reads) {
      const error = await read().then(() => undefined, (thrown: unknown) => thrown);
      expect(store.damagedRecord(error)).toMatch(record);
    }
    const leftOut: string[] = [];
    expect(await store.loadMessages('kept', (damaged) => leftOut.push(damaged))).toStrictEqual([{ role: 'assistant', content: 'hi' }]);
    expect(leftOut).toStrictEqual([expect.stringMatching(/^a message of chat kept: role: .+$/)]);
    const page = await store.loadMessagePage('kept', { limit: 10, maxChars: 1000, leftOut: (damaged) => leftOut.push(damaged) });
    expect([page.messages, page.runIds, page.start]).toStrictEqual([[{ role: 'assistant', content: 'hi' }], [null], 0]);
    expect(leftOut).toHaveLength(2);
  });

  it('names a damaged rule or grant by its id and says the statement that deletes its row', async () => {
    await using database = await openTestDatabase();
    await using store = await openStore(database, 'a');
    const table = (name: string) => `${escapeIdentifier(database.schema)}.${name}`;
    await store.createSession(session('s'));
    await store.saveRule({ id: 'rule-deny', effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, source: 'user', scope: { kind: 'global' }, createdAt: '2026-12-01T00:00:00.000Z' });
    await store.saveGrant({ grantId: 'grant-1', scope: 'session', sessionId: 's', toolName: 'terminal', arguments: { command: 'ls' }, toolVersion: 'v1', createdAt: 1_000 });
    await damageRows(
      database,
      `UPDATE rules SET json = substr(json, 1, 20) WHERE rule_id = 'rule-deny'`,
      `UPDATE grants SET arguments = '{"comm' WHERE grant_id = 'grant-1'`,
    );
    for (const [read, record, sql] of [
      [() => store.listRules(), 'rule rule-deny: ', `DELETE FROM ${table('rules')} WHERE rule_id = 'rule-deny'`],
      [() => store.listGrants(), 'the arguments of grant grant-1: ', `DELETE FROM ${table('grants')} WHERE grant_id = 'grant-1'`],
    ] as const) {
      const error = await read().then(() => undefined, (thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).message).toContain(`(schema ${database.schema}): holds a damaged record (${record}`);
      expect((error as StoreError).message).toContain(`. To start without it, delete its row with ${sql} (psql, in that database), then add it again if you still want it. It was left as it is: `);
    }
  });

  it('reads arguments whose JSON is no arguments object (a grant\'s damaged into null, which would read as any call of its tool) as a damaged record, named', async () => {
    await using database = await openTestDatabase();
    await using store = await openStore(database, 'a');
    await store.createSession(session('s'));
    await store.createRun(run('r1', 's'));
    await appendAll(store, { runId: 'r1', sessionId: 's' }, [startChange('call-1', 3_000)]);
    await store.saveGrant({ grantId: 'grant-1', scope: 'session', sessionId: 's', toolName: 'terminal', arguments: { command: 'ls' }, toolVersion: 'v1', createdAt: 1_000 });
    await damageRows(
      database,
      `UPDATE grants SET arguments = 'null' WHERE grant_id = 'grant-1'`,
      `UPDATE tool_calls SET arguments = '"rm -rf ~"' WHERE tool_call_id = 'call-1'`,
    );
    const reads: [() => Promise<unknown>, RegExp][] = [
      [() => store.listGrants(), /^the arguments of grant grant-1: the record: .+$/],
      [() => store.listRunToolCalls('r1'), /^the arguments of call call-1 of run r1: the record: .+$/],
    ];
    for (const [read, record] of reads) {
      const error = await read().then(() => undefined, (thrown: unknown) => thrown);
      expect(store.damagedRecord(error)).toMatch(record);
    }
  });

  it('a page of the audit leaves out a ledger row that does not read and names it in leftOut, the others listed', async () => {
    await using database = await openTestDatabase();
    await using store = await openStore(database, 'a');
    await store.createSession(session('s'));
    await store.createRun(run('r1', 's'));
    await appendAll(store, { runId: 'r1', sessionId: 's' }, [startChange('call-1', 3_000), startChange('call-2', 3_001)]);
    await damageRows(database, `UPDATE tool_calls SET decision = 'allox' WHERE tool_call_id = 'call-1'`);
    const page = await store.listAudit({ sessionId: 's' });
    expect([page.entries.map((entry) => entry.toolCallId), page.leftOut, page.nextCursor]).toStrictEqual([['call-2'], ['the decision of call call-1 of run r1: "allox" is none of allow, deny, timeout, cancel'], null]);
  });

  it('a page of a chat with leftOut leaves out a call row that does not read and names it with its run and call, the messages and other rows read', async () => {
    await using database = await openTestDatabase();
    await using store = await openStore(database, 'a');
    await store.createSession(session('s'));
    await store.createRun(run('r1', 's'));
    await appendAll(store, { runId: 'r1', sessionId: 's' }, [startChange('call-1', 3_000), startChange('call-2', 3_001)]);
    const turn: ChatMessage = { role: 'assistant', content: '', toolCalls: ['call-1', 'call-2'].map((id) => ({ id, name: 'terminal', arguments: { command: 'ls' } })) };
    await store.appendMessage('s', turn, 4_000, { runId: 'r1' });
    await damageRows(database, `UPDATE tool_calls SET decision = 'allox' WHERE tool_call_id = 'call-1'`);

    const leftOut: [string, LeftOutCall | undefined][] = [];
    const page = await store.loadMessagePage('s', { limit: 10, maxChars: 10_000, leftOut: (record, call) => leftOut.push([record, call]) });
    expect([page.messages, page.runIds, page.toolCalls.map((call) => call.toolCallId)]).toStrictEqual([[turn], ['r1'], ['call-2']]);
    expect(leftOut).toStrictEqual([['the decision of call call-1 of run r1: "allox" is none of allow, deny, timeout, cancel', { runId: 'r1', toolCallId: 'call-1' }]]);
  });

  it('reads a rule that is JSON but no rule as a damaged record unless it is an allow rule: a deny rule left out would let through what it refuses', async () => {
    await using database = await openTestDatabase();
    await using store = await openStore(database, 'a');
    const deny: Rule = { id: 'rule-deny', effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, source: 'user', scope: { kind: 'global' }, createdAt: '2026-12-01T00:00:00.000Z' };
    await store.saveRule(deny);
    await store.saveRule({ ...deny, id: 'rule-allow', effect: 'allow', match: { kind: 'command-prefix', tokens: ['ls'], exact: false } });
    await damageRows(database, `UPDATE rules SET json = jsonb_set(json::jsonb, '{tool}', '5')::text WHERE rule_id = 'rule-allow'`);
    expect((await store.listRules()).map((stored) => stored.rule.id)).toStrictEqual(['rule-deny', 'rule-allow']);
    await damageRows(database, `UPDATE rules SET json = jsonb_set(json::jsonb, '{effect}', '"dent"')::text WHERE rule_id = 'rule-deny'`);
    const error = await store.listRules().then(() => undefined, (thrown: unknown) => thrown);
    expect(store.damagedRecord(error)).toMatch(/^rule rule-deny: effect: .+$/);
  });

  it('a holder whose lock connection was cut takes its lock again and keeps its id: a second store under it is refused, and the holder renews its runs', async () => {
    await using database = await openTestDatabase();
    const logged: string[] = [];
    await using a = await openStore(database, 'a', { leaseMs: 60_000, log: (line) => logged.push(line) });
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    const cut = await instanceLockHolder(database.schema, 'a');
    expect(cut).toBeDefined();

    expect(await terminateBackend(cut!)).toBe(true);
    // Held again on another connection: the old one's lock gone first, the new one's taken after (no holder between).
    await expect
      .poll(async () => {
        const holder = await instanceLockHolder(database.schema, 'a');
        return holder !== undefined && holder !== cut && logged.includes('The lock of instance id "a" is held again.');
      }, POLL)
      .toBe(true);

    const refused = await openStore(database, 'a', { leaseMs: 60_000 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).problem).toBe('instance-in-use');
    expect((refused as StoreError).message).toContain('instance id "a" is held by another live Airlock process');
    expect((await a.renewLeases()).held).toStrictEqual(new Set(['r']));
    expect(await runRow(database, 'r')).toMatchObject({ owner: 'a', fence: '1' });
  });

  it('an id whose lock is free but whose heartbeat is recent (its holder lost its lock connection) is taken only if the heartbeat stays still: refused, naming the id, once it moves', async () => {
    await using database = await openTestDatabase();
    await (await openStore(database, 'setup')).close();
    // A holder alive but without its lock: its connection dropped and it has not taken the lock again yet.
    const holder = (incarnation: string) =>
      withClient((client) =>
        client.query(
          `INSERT INTO "${database.schema}".instances (instance_id, incarnation, started_at, alive_until)
           VALUES ('a', $1, 1, (extract(epoch from clock_timestamp()) * 1000)::bigint + 60000)
           ON CONFLICT (instance_id) DO UPDATE SET incarnation = excluded.incarnation, alive_until = excluded.alive_until`,
          [incarnation],
        ),
      );
    await holder('live');
    const logged: string[] = [];
    const opening = openStore(database, 'a', { leaseMs: 60_000, log: (line) => logged.push(line) }).catch((error: unknown) => error);
    await expect.poll(() => logged.some((line) => line.startsWith('Instance id "a" is free of its lock but its holder\'s heartbeat is recent')), POLL).toBe(true);
    // The holder renews, as a live one does every third of a lease.
    await withClient((client) => client.query(`UPDATE "${database.schema}".instances SET alive_until = alive_until + 1 WHERE instance_id = 'a'`));
    const refused = await opening;
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).problem).toBe('instance-in-use');
    expect((refused as StoreError).message).toContain('instance id "a" is held by another live Airlock process');
    expect((refused as StoreError).message).toContain('it renewed its hold while this one waited');
    expect(await instanceLockHolder(database.schema, 'a')).toBeUndefined();

    // A holder that died (nothing renews): taken once the heartbeat stayed still, its runs given up with a raised token.
    await holder('dead');
    await withClient(async (client) => {
      await client.query(`INSERT INTO "${database.schema}".sessions (session_id, title, created_at, updated_at, confirm_tool_calls) VALUES ('s', 't', 1, 1, true)`);
      await client.query(
        `INSERT INTO "${database.schema}".runs (run_id, session_id, options, started_at, owner, owner_incarnation, fence, lease_until) VALUES ('r', 's', '{}', 1, 'a', 'dead', 1, 9000000000000)`,
      );
    });
    await using taken = await openStore(database, 'a', { leaseMs: 600 });
    expect(await runRow(database, 'r')).toStrictEqual({ owner: null, fence: '2', lease_until: null });
    expect(await taken.claimRun('r')).toBe(3);
    expect(await instanceLockHolder(database.schema, 'a')).toBeDefined();
  });

  it('a store that stalled past its lease, its id then taken by another, renews, claims, releases and writes nothing of the new one’s', async () => {
    await using database = await openTestDatabase();
    await using old = await openStore(database, 'a', { leaseMs: 300 });
    await old.createSession(session('s'));
    await old.createSession(session('later'));
    await old.createRun(run('r', 's'), 'a');
    // The old one renews nothing from here on, as a paused process: its hold on the id runs out no later than its run's lease.
    await expect.poll(() => leaseRanOut(database, 'r'), POLL).toBe(true);
    await using fresh = await openStore(database, 'a', { leaseMs: 60_000 });
    expect(await fresh.claimRun('r')).toBeGreaterThan(1);
    const held = await runRow(database, 'r');
    const oldLock = await instanceLockHolder(database.schema, 'a');
    expect(oldLock).toBeDefined();

    expect((await old.renewLeases()).held).toStrictEqual(new Set());
    // Its id's lock goes with it, for the new holder to take.
    expect(await instanceLockHolder(database.schema, 'a')).not.toBe(oldLock);
    expect(await old.claimRun('r')).toBeUndefined();
    expect(await old.releaseRun('r', 1)).toBe(false);
    await old.releaseRuns();
    await expect(old.createRun(run('r2', 'later'), 'a')).rejects.toThrow(FencedError);
    await expect(old.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('late old'), at: 1, fence: 1 })).rejects.toThrow(FencedError);
    expect(await runRow(database, 'r')).toStrictEqual(held);
    expect((await fresh.renewLeases()).held).toStrictEqual(new Set(['r']));
    expect(await fresh.listClaimableRuns()).toStrictEqual([]);
  });

  it('migration 8 on a schema at version 7: runs owned before it, with no incarnation, are given up when their id is next taken; the others stay owned', async () => {
    await using database = await openTestDatabase();
    await postgresSchemaAt(database, 7);
    await withClient(async (client) => {
      await client.query(`INSERT INTO "${database.schema}".sessions (session_id, title, created_at, updated_at, confirm_tool_calls) VALUES ('s1', 't', 1, 1, true), ('s2', 't', 1, 1, true)`);
      await client.query(
        `INSERT INTO "${database.schema}".runs (run_id, session_id, options, started_at, owner, fence, lease_until) VALUES ('mine', 's1', '{}', 1, 'a', 4, 9000000000000), ('theirs', 's2', '{}', 1, 'b', 1, 9000000000000)`,
      );
    });
    await using a = await openStore(database, 'a');
    expect(await runRow(database, 'mine')).toStrictEqual({ owner: null, fence: '5', lease_until: null });
    expect(await runRow(database, 'theirs')).toMatchObject({ owner: 'b', fence: '1' });
    expect(await a.claimRun('mine')).toBe(6);
    expect(await a.claimRun('theirs')).toBeUndefined();
  });

  it('migration 12 on a schema at version 11: an unfinished run no instance holds is claimable at once, held off by none', async () => {
    await using database = await openTestDatabase();
    await postgresSchemaAt(database, 11);
    await withClient(async (client) => {
      await client.query(`INSERT INTO "${database.schema}".sessions (session_id, title, created_at, updated_at, confirm_tool_calls) VALUES ('s1', 't', 1, 1, true)`);
      await client.query(`INSERT INTO "${database.schema}".runs (run_id, session_id, options, started_at, owner, fence, lease_until) VALUES ('given-up', 's1', '{}', 1, NULL, 3, NULL)`);
    });
    await using a = await openStore(database, 'a');
    expect((await a.listClaimableRuns()).map((stored) => stored.runId)).toStrictEqual(['given-up']);
    expect(await a.claimRun('given-up')).toBe(4);
  });

  it('migration 13 on a schema at version 12: a rule’s deny claimed before it reads as not from the workspace’s rules file; a claim from now on keeps where its rule came from', async () => {
    await using database = await openTestDatabase();
    await postgresSchemaAt(database, 12);
    await withClient(async (client) => {
      await client.query(`INSERT INTO "${database.schema}".sessions (session_id, title, created_at, updated_at, confirm_tool_calls) VALUES ('s', 't', 1, 1, true)`);
      await client.query(`INSERT INTO "${database.schema}".runs (run_id, session_id, options, started_at, owner, fence, lease_until) VALUES ('r', 's', '{}', 1, NULL, 1, NULL)`);
    });
    const text = 'Deny commands starting with `curl` everywhere';
    await insertOldPostgresCall(database.schema, { decision: 'deny', source: 'rule', reason: 'no network', decided_by_rule: 'rule_1', decided_by_rule_text: text, decided_at: 11_000 });
    await using a = await openStore(database, 'a');
    const fence = await a.claimRun('r');
    await a.appendEvents([
      { runId: 'r', sessionId: 's', seq: 1, event: statusEvent('1'), at: 1, ledger: waitingChange('call-2', 10_001), fence },
      { runId: 'r', sessionId: 's', seq: 2, event: statusEvent('2'), at: 2, ledger: waitingChange('call-3', 10_002), fence },
    ]);
    const byRule = (toolCallId: string, fromWorkspaceFile: boolean) =>
      a.claimDecision({ sessionId: 's', approvalId: `approval-${toolCallId}`, decision: 'deny', source: 'rule', reason: 'no network', rule: { ruleId: 'rule_2', text, fromWorkspaceFile }, decidedAt: 12_000, fence });
    expect(await byRule('call-2', true)).toMatchObject({ status: 'resolved' });
    expect(await byRule('call-3', false)).toMatchObject({ status: 'resolved' });

    const calls = await a.listRunToolCalls('r');
    expect(calls.map((call) => [call.toolCallId, call.decidedByRule, call.decidedByRuleFromWorkspaceFile])).toStrictEqual([
      ['call-1', 'rule_1', undefined],
      ['call-2', 'rule_2', true],
      ['call-3', 'rule_2', undefined],
    ]);
  });

  it('reads a page of chats along an index from where the last page ended, in byte order whatever the collation: no sort of every row', async () => {
    await using database = await openTestDatabase();
    await using store = await openStore(database, 'pages');
    for (let index = 0; index < 20; index++) await store.createSession(session(`${index % 2 === 0 ? 'S' : 's'}-${index}`, 1_000 + (index % 3)));
    const plans = await withClient(async (client) => {
      await client.query(`SET search_path TO ${escapeIdentifier(database.schema)}`);
      // On a table this small a sequential scan costs less: take it out, and a sort remains only if the index cannot give the order.
      await client.query('SET enable_seqscan = off');
      const plan = async (sql: string, values: unknown[]) => {
        await client.query(`PREPARE page AS ${sql}`);
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE page(${values.map((value) => (typeof value === 'string' ? `'${value}'` : String(value))).join(', ')})`);
        await client.query('DEALLOCATE page');
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      };
      return [await plan(SESSION_PAGE_QUERIES.first, [10]), await plan(SESSION_PAGE_QUERIES.after, [10, 1_001, 's-7'])];
    });
    for (const plan of plans) {
      expect(plan).toContain('Index Scan Backward using sessions_by_activity');
      expect(plan).not.toMatch(/Sort|Seq Scan/);
    }
    expect((await store.listSessionPage({ limit: 3, after: { updatedAt: 1_001, sessionId: 's-7' } })).map((s) => s.sessionId)).toStrictEqual(['s-19', 's-13', 's-1']);
  });

  it('keeps one unfinished run per session: a second is refused as session-busy until the first ends', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await using b = await openStore(database, 'b');
    await a.createSession(session('s'));
    await a.createRun(run('first', 's'), 'a');

    const refused = await b.createRun(run('second', 's'), 'b').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as ConflictError).reason).toBe('session-busy');
    await expect(b.createRun(run('second', 's'))).rejects.toThrow(ConflictError);
    expect(await b.hasRun('second')).toBe(false);

    await a.endRun('first', 'done', 3_000, 1);
    await b.createRun(run('second', 's'), 'b');
    expect((await a.listUnfinishedRuns()).map((r) => r.runId)).toStrictEqual(['second']);
  });

  it('tells an unreachable database from a refused statement, and gives up one run it holds with its token', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a-unavailable');
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a-unavailable');
    const refused = await a.createRun(run('r', 's'), 'a-unavailable').catch((error: unknown) => error);
    expect(a.isUnavailable(refused)).toBe(false);
    // What the driver reports when the database restarts under a query, refuses connections, or drops one.
    expect(a.isUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(a.isUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(a.isUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);

    expect(await a.releaseRun('r', 2)).toBe(false);
    expect(await runRow(database, 'r')).toMatchObject({ owner: 'a-unavailable' });
    expect(await a.releaseRun('r', 1)).toBe(true);
    expect(await runRow(database, 'r')).toMatchObject({ owner: null, lease_until: null });
    expect((await a.listClaimableRuns()).map((claimable) => claimable.runId)).toStrictEqual(['r']);
  });

  it('holds off every instance from a run given up again soon after one gave it up because it could not keep it, longer each time, and forgets it once kept', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a-held-off');
    await using b = await openStore(database, 'b-held-off');
    const holdOff = { firstMs: 60_000, maxMs: 100_000 };
    const claimable = async () => [(await a.listClaimableRuns()).map((stored) => stored.runId), (await b.listClaimableRuns()).map((stored) => stored.runId)];
    /** Moves the run's last give-up back, as the database's clock would pass. */
    const past = (ms: number) => withClient((client) => client.query(`UPDATE "${database.schema}".runs SET given_up_at = given_up_at - $1 WHERE run_id = 'r'`, [ms]));
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a-held-off');

    // A first give-up: any instance takes the run at once.
    expect(await a.releaseRun('r', 1, holdOff)).toBe(true);
    expect(await claimable()).toStrictEqual([['r'], ['r']]);
    expect(await b.claimRun('r')).toBe(2);
    // Given up again soon after: no instance claims it for firstMs, the one that never gave it up neither.
    expect(await b.releaseRun('r', 2, holdOff)).toBe(true);
    expect(await claimable()).toStrictEqual([[], []]);
    expect(await a.claimRun('r')).toBeUndefined();
    await past(60_000);
    expect(await claimable()).toStrictEqual([['r'], ['r']]);
    // And again: twice as long, up to maxMs.
    expect(await a.claimRun('r')).toBe(3);
    expect(await a.releaseRun('r', 3, holdOff)).toBe(true);
    await past(60_000);
    expect(await claimable()).toStrictEqual([[], []]);
    await past(40_000);
    expect(await claimable()).toStrictEqual([['r'], ['r']]);
    // Kept maxMs past the end of its hold-off, it is forgotten: the next give-up is a first one.
    expect(await b.claimRun('r')).toBe(4);
    await past(100_000);
    expect(await b.releaseRun('r', 4, holdOff)).toBe(true);
    expect(await claimable()).toStrictEqual([['r'], ['r']]);
  });

  // 3,000 round trips to the database: on a loaded machine they take minutes.
  it('claimDecision: of two instances deciding one call at once, exactly one wins, 1,000 times over', { timeout: 600_000 }, async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await using b = await openStore(database, 'b');
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    const rounds = 1000;
    const winners: string[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const toolCallId = `call-${round}`;
      await a.appendEvent({ runId: 'r', sessionId: 's', seq: round + 1, event: statusEvent(`call ${round}`), at: round, ledger: waitingChange(toolCallId, 10_000 + round), fence: 1 });
      const claim = (store: PostgresStore, decision: 'allow' | 'deny') =>
        store.claimDecision({
          sessionId: 's',
          approvalId: `approval-${toolCallId}`,
          decision,
          source: 'user',
          decidedAt: 20_000 + round,
          by: { connectionId: `conn-${store.instanceId}`, clientLabel: store.instanceId },
        });
      const aFirst = Math.random() < 0.5;
      const [fromA, fromB] = aFirst ? await Promise.all([claim(a, 'allow'), claim(b, 'deny')]) : (await Promise.all([claim(b, 'deny'), claim(a, 'allow')])).reverse();
      const outcomes = [fromA!, fromB!];
      const resolved = outcomes.filter((outcome) => outcome.status === 'resolved');
      expect(resolved).toHaveLength(1);
      const winner = fromA!.status === 'resolved' ? 'a' : 'b';
      const loser = winner === 'a' ? fromB! : fromA!;
      expect(loser).toStrictEqual({ status: 'already-decided', decision: winner === 'a' ? 'allow' : 'deny', source: 'user', reason: null, grantId: null });
      winners.push(winner);
    }
    const ledger = await a.listRunToolCalls('r');
    expect(ledger.map((row) => [row.decision, row.connectionId, row.clientLabel])).toStrictEqual(
      winners.map((winner) => (winner === 'a' ? ['allow', 'conn-a', 'a'] : ['deny', 'conn-b', 'b'])),
    );
    expect(await a.listPendingApprovals('s')).toStrictEqual([]);
  });

  it('claimDecision answers the waiting call, then already-decided; not-found for another session, no approval, or an ended run', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await a.createSession(session('s'));
    await a.createSession(session('other'));
    await a.createRun(run('r', 's'), 'a');
    await a.createRun(run('ended', 'other'), 'a');
    const start = waitingChange('call-1', 10_000);
    const silent: LedgerChange = { ...waitingChange('call-2', 10_100), approvalId: '' };
    await a.appendEvents([
      { runId: 'r', sessionId: 's', seq: 1, event: statusEvent('1'), at: 1, ledger: start, fence: 1 },
      { runId: 'r', sessionId: 's', seq: 2, event: statusEvent('2'), at: 2, ledger: silent, fence: 1 },
      { runId: 'ended', sessionId: 'other', seq: 1, event: statusEvent('3'), at: 3, ledger: startChange('call-3', 10_200), fence: 1 },
    ]);
    await a.endRun('ended', 'cancelled', 4, 1);
    const waiting = {
      approvalId: 'approval-call-1',
      sessionId: 's',
      runId: 'r',
      toolCallId: 'call-1',
      toolName: 'terminal',
      arguments: { command: 'echo call-1' },
      requestedAt: 10_000,
      expiresAt: FAR_DEADLINE,
    };

    expect(await a.listPendingApprovals('s')).toStrictEqual([waiting]);
    expect(await a.listPendingApprovals('other')).toStrictEqual([]);
    expect(await a.getPendingApproval('s', 'approval-call-1')).toStrictEqual({ ...waiting, executesCode: true, toolVersion: 'v1' });
    expect(await a.getPendingApproval('other', 'approval-call-1')).toBeUndefined();
    expect(await a.getPendingApproval('other', 'approval-call-3')).toBeUndefined();

    const input = { sessionId: 's', approvalId: 'approval-call-1', decision: 'allow' as const, source: 'grant' as const, grantId: 'g-1', decidedAt: 11_000 };
    // A grant's release writes nothing while its grant is not there (revoked), and says so; the call still waits.
    expect(await a.claimDecision(input)).toStrictEqual({ status: 'grant-gone' });
    expect(await a.listPendingApprovals('s')).toStrictEqual([waiting]);
    await a.saveGrant({ grantId: 'g-1', scope: 'session', sessionId: 's', toolName: 'terminal', arguments: null, toolVersion: 'v1', createdAt: 10_500 });
    expect(await a.claimDecision({ ...input, sessionId: 'other' })).toStrictEqual({ status: 'not-found' });
    expect(await a.claimDecision({ ...input, approvalId: '' })).toStrictEqual({ status: 'not-found' });
    expect(await a.claimDecision({ ...input, approvalId: 'never' })).toStrictEqual({ status: 'not-found' });
    expect(await a.claimDecision({ ...input, sessionId: 'other', approvalId: 'approval-call-3' })).toStrictEqual({ status: 'not-found' });
    expect(await a.claimDecision(input)).toStrictEqual({ status: 'resolved', call: { ...waiting, executesCode: true, toolVersion: 'v1' } });
    expect(await a.claimDecision({ ...input, decision: 'deny', source: 'user', reason: 'no' })).toStrictEqual({
      status: 'already-decided',
      decision: 'allow',
      source: 'grant',
      reason: null,
      grantId: 'g-1',
    });
    expect(await a.listPendingApprovals('s')).toStrictEqual([]);
    expect(await a.getPendingApproval('s', 'approval-call-1')).toBeUndefined();
  });

  it('a chat deleted while an "Always allow" claims one of its calls keeps no grant: the claim goes in first and its grant is deleted with the chat, or finds the chat gone', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    await a.appendEvents([{ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('1'), at: 1, ledger: waitingChange('call-1', 10_000), fence: 1 }]);
    const grant = { grantId: 'g-1', scope: 'session' as const, sessionId: 's', toolName: 'terminal', arguments: { command: 'echo call-1' }, toolVersion: 'v1', createdAt: 11_000 };
    // The claim's transaction held between its decision and its grant, as a slow round trip to the database would.
    await deletedWhileGrantWaits(database, a, 's', () => a.claimDecision({ sessionId: 's', approvalId: 'approval-call-1', decision: 'allow', source: 'user', decidedAt: 11_000, grant }));
    expect((await a.listGrants()).filter((kept) => kept.sessionId === 's')).toStrictEqual([]);
    // The next start (another store) reads no grant for a chat of that name made again.
    await using b = await openStore(database, 'b');
    expect((await b.listGrants()).filter((kept) => kept.sessionId === 's')).toStrictEqual([]);
  });

  it('a grant saved after its claim (the call not seen before it) keeps no grant of a chat deleted meanwhile: saved first, it goes with the chat; saved after, it is refused', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    const grant = { grantId: 'g-1', scope: 'session' as const, sessionId: 's', toolName: 'terminal', arguments: { command: 'echo call-1' }, toolVersion: 'v1', createdAt: 11_000 };
    // The save held between its start and its commit, as a slow round trip to the database would.
    await deletedWhileGrantWaits(database, a, 's', () => a.saveGrant(grant));
    expect((await a.listGrants()).filter((kept) => kept.sessionId === 's')).toStrictEqual([]);
    // A chat already gone takes no grant.
    await expect(a.saveGrant({ ...grant, grantId: 'g-2' })).rejects.toThrow(NotFoundError);
    await using b = await openStore(database, 'b');
    expect((await b.listGrants()).filter((kept) => kept.sessionId === 's')).toStrictEqual([]);
  });

  it('keeps a call’s deadline on the database’s clock, given and read on each instance’s own: one two hours behind and one an hour ahead see the same minute left, and a warning says the clock is off', async () => {
    await using database = await openTestDatabase();
    const said: string[] = [];
    const behind = () => Date.now() - 2 * 60 * 60 * 1000;
    const ahead = () => Date.now() + 60 * 60 * 1000;
    await using a = await openStore(database, 'a', { now: behind, log: (line) => said.push(line) });
    await using b = await openStore(database, 'b', { now: ahead });
    expect(said).toStrictEqual([expect.stringMatching(/^This instance's clock is 7200\.\d s behind the database's: /)]);
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    const expiresAt = behind() + 60_000;
    await a.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('1'), at: 1, ledger: { ...startChange('call-1', 10_000), expiresAt }, fence: 1 });

    const [stored] = await withClient(async (client) => (await client.query<{ left: string }>(`SELECT expires_at - (extract(epoch from clock_timestamp()) * 1000)::bigint AS left FROM ${escapeIdentifier(database.schema)}.tool_calls`)).rows);
    expect(Number(stored!.left) > 0 && Number(stored!.left) <= 60_000).toBe(true);
    // Read back on the writer's clock as given; on the other's, as much of the minute left.
    expect((await a.listRunToolCalls('r')).map((call) => call.expiresAt)).toStrictEqual([expiresAt]);
    const [listed] = await b.listPendingApprovals('s');
    const left = listed!.expiresAt! - ahead();
    expect(left > 0 && left <= 60_000).toBe(true);
    expect(await b.claimDecision({ sessionId: 's', approvalId: 'approval-call-1', decision: 'allow', source: 'user', decidedAt: 11_000 })).toMatchObject({ status: 'resolved' });
  });

  it('a call past its deadline by the database’s clock, or of a stopped run, waits no more: a person’s decision is refused, the timeout recorded then (the answer is what the ledger holds); the cancel of a stopped run is its owner’s to write', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await using b = await openStore(database, 'b');
    await a.createSession(session('s'));
    await a.createSession(session('stopped'));
    await a.createRun(run('r', 's'), 'a');
    await a.createRun(run('q', 'stopped'), 'a');
    await a.appendEvents([
      { runId: 'r', sessionId: 's', seq: 1, event: statusEvent('1'), at: 1, ledger: { ...startChange('late', 10_000), expiresAt: 70_000 }, fence: 1 },
      { runId: 'r', sessionId: 's', seq: 2, event: statusEvent('2'), at: 2, ledger: waitingChange('waits', 10_001), fence: 1 },
      { runId: 'q', sessionId: 'stopped', seq: 1, event: statusEvent('3'), at: 3, ledger: waitingChange('stop', 10_002), fence: 1 },
    ]);
    expect(await b.requestCancel('q')).toBe(true);
    // An owner that lost the run writes nothing, and is not told a decision is coming.
    expect(await a.claimDecision({ sessionId: 's', approvalId: 'approval-late', decision: 'timeout', source: 'system', decidedAt: 80_000, fence: 2 })).toStrictEqual({ status: 'not-found' });
    expect((await b.listRunToolCalls('r')).map((row) => row.decision)).toStrictEqual([null, null]);

    expect((await b.listPendingApprovals('s')).map((p) => p.approvalId)).toStrictEqual(['approval-waits']);
    expect(await b.listPendingApprovals('stopped')).toStrictEqual([]);
    expect(await b.getPendingApproval('s', 'approval-late')).toBeUndefined();
    expect(await b.getPendingApproval('stopped', 'approval-stop')).toBeUndefined();
    const timedOut = { status: 'already-decided', decision: 'timeout', source: 'system', reason: null, grantId: null };
    const cancelled = { status: 'already-decided', decision: 'cancel', source: 'user', reason: null, grantId: null, runStopped: true };
    const person = { decidedAt: 80_000, source: 'user' as const };
    expect(await b.claimDecision({ ...person, sessionId: 's', approvalId: 'approval-late', decision: 'allow' })).toStrictEqual(timedOut);
    expect((await a.listRunToolCalls('r'))[0]).toMatchObject({ approvalId: 'approval-late', decision: 'timeout', source: 'system', decidedAt: 80_000, clientLabel: null });
    expect(await b.claimDecision({ ...person, sessionId: 's', approvalId: 'approval-late', decision: 'deny' })).toStrictEqual(timedOut);
    expect(await a.claimDecision({ sessionId: 's', approvalId: 'approval-late', decision: 'allow', source: 'grant', grantId: 'g', decidedAt: 80_000, fence: 1 })).toStrictEqual(timedOut);
    expect(await b.claimDecision({ ...person, sessionId: 'stopped', approvalId: 'approval-stop', decision: 'allow' })).toStrictEqual(cancelled);
    expect(await b.claimDecision({ ...person, sessionId: 's', approvalId: 'approval-waits', decision: 'allow' })).toMatchObject({ status: 'resolved' });

    // The owner's own timeout finds it recorded; the Stop's cancel is its to write.
    expect(await a.claimDecision({ sessionId: 's', approvalId: 'approval-late', decision: 'timeout', source: 'system', decidedAt: 80_000, fence: 1 })).toStrictEqual(timedOut);
    expect(await a.claimDecision({ sessionId: 'stopped', approvalId: 'approval-stop', decision: 'cancel', source: 'user', decidedAt: 80_000, fence: 1 })).toMatchObject({ status: 'resolved' });
    expect((await b.listRunToolCalls('r')).map((row) => [row.approvalId, row.decision, row.source])).toStrictEqual([
      ['approval-late', 'timeout', 'system'],
      ['approval-waits', 'allow', 'user'],
    ]);
    expect((await b.listRunToolCalls('q')).map((row) => [row.approvalId, row.decision, row.source])).toStrictEqual([['approval-stop', 'cancel', 'user']]);
  });

  it('an owner’s timeout of a call whose run a person stopped is not written: it is answered as the Stop’s cancel, the run stopped, past the call’s deadline too; a call an allow decided before the Stop is answered that allow, the run stopped', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await using b = await openStore(database, 'b');
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    await a.appendEvents([
      { runId: 'r', sessionId: 's', seq: 1, event: statusEvent('1'), at: 1, ledger: waitingChange('waits', 10_000), fence: 1 },
      { runId: 'r', sessionId: 's', seq: 2, event: statusEvent('2'), at: 2, ledger: { ...startChange('late', 10_001), expiresAt: 70_000 }, fence: 1 },
      { runId: 'r', sessionId: 's', seq: 3, event: statusEvent('3'), at: 3, ledger: waitingChange('allowed', 10_002), fence: 1 },
    ]);
    expect(await b.claimDecision({ sessionId: 's', approvalId: 'approval-allowed', decision: 'allow', source: 'user', decidedAt: 11_000 })).toMatchObject({ status: 'resolved' });
    expect(await b.requestCancel('r')).toBe(true);

    const timeout = (approvalId: string) => a.claimDecision({ sessionId: 's', approvalId, decision: 'timeout', source: 'system', decidedAt: 80_000, fence: 1 });
    const stopped = { status: 'already-decided', decision: 'cancel', source: 'user', reason: null, grantId: null, runStopped: true };
    expect(await timeout('approval-waits')).toStrictEqual(stopped);
    expect(await timeout('approval-late')).toStrictEqual(stopped);
    expect(await timeout('approval-allowed')).toStrictEqual({ status: 'already-decided', decision: 'allow', source: 'user', reason: null, grantId: null, runStopped: true });
    // A person's allow now is refused as that cancel too; the owner's cancel goes in.
    expect(await b.claimDecision({ sessionId: 's', approvalId: 'approval-waits', decision: 'allow', source: 'user', decidedAt: 80_000 })).toStrictEqual(stopped);
    expect(await a.claimDecision({ sessionId: 's', approvalId: 'approval-waits', decision: 'cancel', source: 'user', decidedAt: 80_000, fence: 1 })).toMatchObject({ status: 'resolved' });
    expect((await b.listRunToolCalls('r')).map((row) => [row.approvalId, row.decision, row.source])).toStrictEqual([
      ['approval-waits', 'cancel', 'user'],
      ['approval-late', null, null],
      ['approval-allowed', 'allow', 'user'],
    ]);
  });

  it.each([
    { how: 'alone', decided: false },
    { how: 'with its decision', decided: true },
  ])('a write that marks a call running, $how, sent while a Stop of its run is under way waits for the Stop, and is refused once it is stored', async ({ decided }) => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    const at = (seq: number, ledger: LedgerChange) => ({ runId: 'r', sessionId: 's', seq, event: statusEvent(String(seq)), at: seq, ledger, fence: 1 });
    await a.appendEvent(at(1, startChange('call-1', 10_000)));
    const allowed = at(2, { kind: 'decision', toolCallId: 'call-1', decision: 'allow', source: 'user', decidedAt: 11_000 });
    if (!decided) await a.appendEvent(allowed);
    const running = at(3, { kind: 'running', toolCallId: 'call-1', startedAt: 11_100 });
    await withClient(async (stopping) => {
      await stopping.query('BEGIN');
      await stopping.query(`UPDATE "${database.schema}".runs SET cancel_requested = true WHERE run_id = 'r'`);
      const { rows } = await stopping.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const write = decided ? a.appendEvents([allowed, running]) : a.appendEvent(running);
      write.catch(() => undefined);
      await vi.waitFor(async () => {
        const blocked = await stopping.query('SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [rows[0]!.pid]);
        expect(blocked.rowCount).toBe(1);
      }, POLL);
      await stopping.query('COMMIT');
      await expect(write).rejects.toMatchObject({ name: 'RunStoppedError', runId: 'r', toolCallId: 'call-1' });
    });
    expect((await a.listRunToolCalls('r')).map((row) => [row.decision, row.startedAt])).toStrictEqual([[decided ? null : 'allow', null]]);
  });

  it('an owner’s claim held on the call’s row while another instance takes the run over lands before the takeover or not at all, never on a call the taker read undecided', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a', { leaseMs: 50 });
    await using b = await openStore(database, 'b');
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    await a.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('1'), at: 1, ledger: waitingChange('call-1', 10_000), fence: 1 });
    await vi.waitFor(async () => expect(await leaseRanOut(database, 'r')).toBe(true), POLL);
    await withClient(async (holder) => {
      // Another transaction holds the call's row (a person's claim whose deadline then passes): A's timeout waits on it.
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${database.schema}".tool_calls WHERE approval_id = 'approval-call-1' FOR UPDATE`);
      const blockedBy = async (pid: number) =>
        (await holder.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid])).rows.map((row) => row.pid);
      const { rows } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const claim = a.claimDecision({ sessionId: 's', approvalId: 'approval-call-1', decision: 'timeout', source: 'system', decidedAt: 80_000, fence: 1 });
      const [owner] = await vi.waitFor(async () => {
        const waiting = await blockedBy(rows[0]!.pid);
        expect(waiting).toHaveLength(1);
        return waiting;
      }, POLL);
      // B takes the run over meanwhile, and reads the call as a resume does.
      let taken = false;
      const takeover = b.claimRun('r').then(async (fence) => {
        taken = true;
        return { fence, read: (await b.listRunToolCalls('r')).map((call) => call.decision) };
      });
      await vi.waitFor(async () => expect(taken || (await blockedBy(owner!)).length === 1).toBe(true), POLL);
      await holder.query('ROLLBACK');
      const [claimed, { fence, read }] = await Promise.all([claim, takeover]);
      // A's claim took the run first, so the takeover waited for it, and the taker reads the timeout, to act on it.
      expect([claimed.status, fence, read]).toStrictEqual(['resolved', 2, ['timeout']]);
    });
  });

  it("a decision written with a run's event after a claim leaves the claimed decision as it is", async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await using b = await openStore(database, 'b');
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    await a.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('1'), at: 1, ledger: waitingChange('call-1', 10_000), fence: 1 });
    const claim = await b.claimDecision({
      sessionId: 's',
      approvalId: 'approval-call-1',
      decision: 'deny',
      source: 'user',
      reason: 'not now',
      decidedAt: 11_000,
      by: { connectionId: 'conn-b', clientLabel: 'web' },
    });
    expect(claim.status).toBe('resolved');

    await a.appendEvent({
      runId: 'r',
      sessionId: 's',
      seq: 2,
      event: statusEvent('2'),
      at: 2,
      ledger: { kind: 'decision', toolCallId: 'call-1', decision: 'timeout', source: 'user', decidedAt: 12_000, by: { connectionId: 'conn-a', clientLabel: 'cli' } },
      fence: 1,
    });

    expect(await a.loadEvents('r', 1)).toStrictEqual([statusEvent('2')]);
    expect(await a.listRunToolCalls('r')).toMatchObject([{ decision: 'deny', source: 'user', reason: 'not now', decidedAt: 11_000, connectionId: 'conn-b', clientLabel: 'web' }]);
    await expect(
      a.appendEvent({ runId: 'r', sessionId: 's', seq: 3, event: statusEvent('3'), at: 3, ledger: { kind: 'decision', toolCallId: 'nope', decision: 'deny', source: 'user', decidedAt: 1 } }),
    ).rejects.toThrow();
    expect(await a.loadEvents('r', 2)).toStrictEqual([]);
  });

  it('a claimed allow that a deny rule then refused is recorded as the rule’s deny, naming the rule', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await using b = await openStore(database, 'b');
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');
    await a.appendEvents([
      { runId: 'r', sessionId: 's', seq: 1, event: statusEvent('1'), at: 1, ledger: waitingChange('call-1', 10_000), fence: 1 },
      { runId: 'r', sessionId: 's', seq: 2, event: statusEvent('2'), at: 2, ledger: waitingChange('call-2', 10_001), fence: 1 },
      { runId: 'r', sessionId: 's', seq: 3, event: statusEvent('3'), at: 3, ledger: waitingChange('call-3', 10_002), fence: 1 },
    ]);
    for (const id of ['call-1', 'call-2']) {
      const claim = await b.claimDecision({ sessionId: 's', approvalId: `approval-${id}`, decision: 'allow', source: 'user', decidedAt: 11_000, by: { connectionId: 'conn-b' } });
      expect(claim.status).toBe('resolved');
    }
    const byRule = (toolCallId: string): Extract<LedgerChange, { kind: 'decision' }> => ({
      kind: 'decision',
      toolCallId,
      decision: 'deny',
      source: 'rule',
      reason: 'Denied by a rule. Deny commands starting with `echo` everywhere',
      decidedByRule: 'rule_1',
      decidedByRuleText: 'Deny commands starting with `echo` everywhere',
      decidedAt: 12_000,
    });
    // One event with its change (one statement), and a burst of several changes (one statement each): the same.
    await a.appendEvent({ runId: 'r', sessionId: 's', seq: 4, event: statusEvent('4'), at: 4, ledger: byRule('call-1'), fence: 1 });
    await a.appendEvents([
      { runId: 'r', sessionId: 's', seq: 5, event: statusEvent('5'), at: 5, ledger: byRule('call-2'), fence: 1 },
      { runId: 'r', sessionId: 's', seq: 6, event: statusEvent('6'), at: 6, ledger: { ...byRule('call-3'), decision: 'allow', source: 'grant' }, fence: 1 },
    ]);
    const recorded = { decision: 'deny', source: 'rule', decidedByRule: 'rule_1', decidedByRuleText: 'Deny commands starting with `echo` everywhere' };
    expect(await a.listRunToolCalls('r')).toMatchObject([recorded, recorded, { decision: 'allow', source: 'grant' }]);
    // No other decision replaces a claimed one.
    await a.appendEvent({ runId: 'r', sessionId: 's', seq: 7, event: statusEvent('7'), at: 7, ledger: { ...byRule('call-1'), decision: 'timeout', source: 'system' }, fence: 1 });
    expect(await a.listRunToolCalls('r')).toMatchObject([recorded, recorded, { decision: 'allow', source: 'grant' }]);
  });

  it("delivers another instance's events in order (a batch once, with its last seq), never a fenced write's, and what is published, to every instance", async () => {
    await using database = await openTestDatabase();
    await using other = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await using b = await openStore(database, 'b');
    await using elsewhere = await openStore(other, 'c');
    const heardByB = record(b);
    const heardByA = record(a);
    const heardElsewhere = record(elsewhere);
    await a.createSession(session('s'));
    await a.createRun(run('r', 's'), 'a');

    for (const seq of [1, 2, 3]) await a.appendEvent({ runId: 'r', sessionId: 's', seq, event: statusEvent(`${seq}`), at: seq, fence: 1 });
    await expect(a.appendEvent({ runId: 'r', sessionId: 's', seq: 4, event: statusEvent('fenced'), at: 4, fence: 7 })).rejects.toThrow(FencedError);
    await a.appendEvents([4, 5, 6].map((seq) => ({ runId: 'r', sessionId: 's', seq, event: statusEvent(`${seq}`), at: seq, fence: 1 })));
    await a.publish({ type: 'cancel', runId: 'r' });
    // Malformed payloads on the channel are ignored.
    await withClient(async (client) => {
      await client.query('SELECT pg_notify($1, $2)', [a.channel, 'not json']);
      await client.query('SELECT pg_notify($1, $2)', [a.channel, '{"type":"event","runId":"r"}']);
    });
    await b.publish({ type: 'rules' });

    const expected: ClusterMessage[] = [
      { type: 'event', runId: 'r', seq: 1 },
      { type: 'event', runId: 'r', seq: 2 },
      { type: 'event', runId: 'r', seq: 3 },
      { type: 'event', runId: 'r', seq: 6 },
      { type: 'cancel', runId: 'r' },
      { type: 'rules' },
    ];
    await expect.poll(() => heardByB.length, POLL).toBe(expected.length);
    expect(heardByB).toStrictEqual(expected);
    await expect.poll(() => heardByA.length, POLL).toBe(expected.length);
    expect(heardByA).toStrictEqual(expected);
    expect(heardElsewhere).toStrictEqual([]);
  });

  it('reconnects the notification connection when it drops and tells its listeners to resync', async () => {
    await using database = await openTestDatabase();
    await using a = await openStore(database, 'a');
    await using b = await openStore(database, 'b-reconnects');
    const heardByB = record(b);

    const terminated = await withClient(async (client) => {
      const { rows } = await client.query<{ ok: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
         WHERE application_name = (SELECT 'airlock listener ' || incarnation FROM ${escapeIdentifier(database.schema)}.instances WHERE instance_id = $1) AND query LIKE 'LISTEN %'`,
        ['b-reconnects'],
      );
      return rows;
    });
    expect(terminated).toStrictEqual([{ ok: true }]);

    await expect.poll(() => heardByB, POLL).toContainEqual({ type: 'resync' });
    await a.publish({ type: 'session', sessionId: 's' });
    await expect.poll(() => heardByB, POLL).toContainEqual({ type: 'session', sessionId: 's' });
    expect(heardByB.filter((message) => message.type === 'resync')).toHaveLength(1);
  });

  it('instances starting together on a fresh schema apply the migrations once; a schema from a newer version is refused', async () => {
    await using database = await openTestDatabase();
    const stores = await Promise.all(['a', 'b', 'c'].map((id) => openStore(database, id)));
    await Promise.all(stores.map((store) => store.close()));
    const versions = await withClient(async (client) => (await client.query<{ version: number }>(`SELECT version FROM "${database.schema}".schema_migrations ORDER BY version`)).rows);
    expect(versions).toStrictEqual(postgresMigrations.map(({ version }) => ({ version })));

    await withClient((client) => client.query(`INSERT INTO "${database.schema}".schema_migrations (version, name, applied_at) VALUES (99, 'future', 0)`));
    const refused = await openStore(database, 'd').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).problem).toBe('newer-schema');
  });

  it('a schema whose record of migrations does not match its tables is refused as damaged, naming the migration, and left as it was', async () => {
    await using database = await openTestDatabase();
    await (await openStore(database, 'a')).close();
    const last = postgresMigrations.at(-1)!;
    await withClient((client) => client.query(`DELETE FROM "${database.schema}".schema_migrations WHERE version = $1`, [last.version]));
    const refused = await openStore(database, 'b').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).problem).toBe('corrupt');
    expect((refused as StoreError).message).toContain(`its schema does not match its record of migrations: migration ${last.version} (${last.name}) failed on it (`);
    const versions = await withClient(async (client) => (await client.query<{ version: number }>(`SELECT version FROM "${database.schema}".schema_migrations ORDER BY version`)).rows);
    expect(versions).toStrictEqual(postgresMigrations.slice(0, -1).map(({ version }) => ({ version })));
  });

  it("a schema holding another program's tables (and no record of Airlock's schema) is refused and left as it was", async () => {
    await using database = await openTestDatabase();
    await withClient((client) => client.query(`CREATE TABLE "${database.schema}".sessions (id integer)`));
    const refused = await openStore(database, 'a').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).problem).toBe('not-airlock');
    expect((refused as StoreError).message).toContain(`schema ${database.schema} is not Airlock's: it holds tables ("sessions")`);
    const tables = await withClient(async (client) => (await client.query<{ name: string }>('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1', [database.schema])).rows);
    expect(tables).toStrictEqual([{ name: 'sessions' }]);
  });

  it('a database that does not answer is refused with a StoreError that names it without its password', async () => {
    const url = new URL(TEST_DATABASE_URL);
    url.port = '1';
    url.password = 'secret-password';
    const refused = await PostgresStore.open({ url: url.toString(), log: () => {} }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).problem).toBe('unreachable');
    expect((refused as StoreError).message).toContain(':1/');
    expect((refused as StoreError).message).not.toContain('secret-password');
  });

  it('closes once, however often asked', async () => {
    await using database = await openTestDatabase();
    const store = await openStore(database, 'a');
    await Promise.all([store.close(), store.close()]);
    await store.close();
    await expect(store.listSessions()).rejects.toThrow();
  });
});

describe.skipIf(!postgres.available)('PostgresStore named localhost', () => {
  it('connects to the loopback address the database holds, not to a process holding the other one on its port', async (context) => {
    const url = new URL(TEST_DATABASE_URL);
    if (url.hostname !== '127.0.0.1') context.skip(`the test database is not on 127.0.0.1 (${url.hostname})`);
    const port = url.port === '' ? 5432 : Number(url.port);
    // Another process (a tool call with the network) holds [::1] on the database's port; it records who comes.
    const came: string[] = [];
    const impostor: NetServer = createNetServer((socket) => {
      came.push('connection');
      socket.destroy();
    });
    const held = await new Promise<boolean>((resolve) => {
      impostor.once('error', () => resolve(false)).listen({ port, host: '::1', ipv6Only: true }, () => resolve(true));
    });
    if (!held) context.skip('the database (or another process) holds [::1] on its port');
    // A stock Debian or Ubuntu resolver: localhost is ::1 first, then 127.0.0.1.
    const restoreResolver = resolveLocalhostAsStock();
    try {
      await using database = await openTestDatabase();
      url.hostname = 'localhost';
      await using store = await openStore({ ...database, url: url.href }, 'localhost-pin');
      expect(await store.listSessions()).toStrictEqual([]);
      expect(came).toStrictEqual([]);
    } finally {
      restoreResolver();
      await new Promise((resolve) => impostor.close(resolve));
    }
  });
});

describe('PostgresStore named localhost, with its password in .pgpass', () => {
  it('sends the password a .pgpass line for localhost holds: the name stays the connection’s, only its address is pinned', async () => {
    // A server that asks for the password in clear text and records what it gets (no database behind it).
    const received: string[] = [];
    const server = createNetServer((socket) => {
      let buffer = Buffer.alloc(0);
      let started = false;
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        if (!started && buffer.length >= 4 && buffer.length >= buffer.readInt32BE(0)) {
          buffer = buffer.subarray(buffer.readInt32BE(0));
          started = true;
          socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]));
        }
        if (started && buffer.length >= 5 && buffer.length >= 1 + buffer.readInt32BE(1)) {
          received.push(buffer.subarray(5, buffer.readInt32BE(1)).toString());
          socket.destroy();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const folder = await mkdtemp(path.join(tmpdir(), 'airlock-pgpass-'));
    const passFile = path.join(folder, 'pgpass');
    await writeFile(passFile, `localhost:${port}:db:airlock:from-pgpass\n`, { mode: 0o600 });
    const before = process.env.PGPASSFILE;
    process.env.PGPASSFILE = passFile;
    try {
      await expect(PostgresStore.open({ url: `postgres://airlock@localhost:${port}/db`, instanceId: 'pgpass', connectTimeoutMs: 5_000, log: () => {} })).rejects.toThrow();
      expect(received).toStrictEqual(['from-pgpass']);
    } finally {
      if (before === undefined) delete process.env.PGPASSFILE;
      else process.env.PGPASSFILE = before;
      await new Promise((resolve) => server.close(resolve));
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('channelName', () => {
  it('names a channel per schema, within 63 bytes', () => {
    expect(channelName('public')).toBe('airlock_events__public');
    expect(channelName('t_0123')).not.toBe(channelName('t_0124'));
    const long = channelName('ä'.repeat(40));
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(63);
    expect(long).not.toBe(channelName('ä'.repeat(41)));
  });
});

/**
 * Deletes chat `sessionId` while `write` (which writes grant `g-1`) waits on another transaction holding a grant of
 * that id uncommitted: the deletion either goes through or waits on `write`, and then the holder lets go.
 */
async function deletedWhileGrantWaits(database: TestDatabase, store: PostgresStore, sessionId: string, write: () => Promise<unknown>): Promise<void> {
  const waiters = async (client: { query: (sql: string) => Promise<{ rows: { waiting: number }[] }> }) =>
    (await client.query(`SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted`)).rows[0]!.waiting;
  await withClient(async (holder) => {
    await holder.query('BEGIN');
    await holder.query(`INSERT INTO "${database.schema}".grants (grant_id, scope_kind, scope_value, tool_name, arguments, tool_version, created_at) VALUES ('g-1', 'session', 'elsewhere', 'x', NULL, 'v1', 1)`);
    const written = write();
    await vi.waitFor(async () => expect(await waiters(holder)).toBeGreaterThan(0), POLL);
    let deleted = false;
    const deleting = store.deleteSession(sessionId).then(() => (deleted = true));
    await vi.waitFor(async () => expect(deleted || (await waiters(holder)) > 1).toBe(true), POLL);
    await holder.query('ROLLBACK');
    await Promise.all([written, deleting]);
  });
}
