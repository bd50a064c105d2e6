import { ChatService, type AirlockStore } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import type Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { openSqliteStore } from '../src/create-services';
import { tempFolder } from '../src/store/test-support';
import { recordingTool } from './support/test-airlock';

/** The SQLite store's own connection: a test fills its disk and damages its rows through it. */
const databaseOf = (store: AirlockStore) => (store as unknown as { db: Database.Database }).db;

describe('a run paused by a database that takes no writes, whose stored records are found damaged as it is taken up', () => {
  it('is set aside, as a start sets such a run aside: said once in the log, ended as far as its records read, nothing run, not tried again for good', async () => {
    await using folder = await tempFolder();
    const directory = join(folder.path, 'data');
    const { tool, calls } = recordingTool();
    const serve = async (store: AirlockStore, log: (line: string) => void) => {
      const model = new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'ls' } }), textStep('done')]);
      const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [tool], store, suspendRunsOnShutdown: true, retryStoreAfterMs: 20, log });
      await chat.open();
      return chat;
    };

    // A run waits on its call when the server stops.
    const before = await openSqliteStore(directory, () => {});
    const first = await serve(before, () => {});
    await first.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(first.pending('s')).toHaveLength(1));
    await first.shutdown();
    await before.close();

    // Started again with the database taking no writes (read-only, as a disk that fails): the resumed run's first
    // write fails, and the run is paused.
    const store = await openSqliteStore(directory, () => {});
    const db = databaseOf(store);
    db.pragma('query_only = ON');
    const lines: string[] = [];
    const chat = await serve(store, (line) => lines.push(line));
    await vi.waitFor(() => expect(lines.some((line) => line.startsWith('Run r1 is paused: '))).toBe(true), { timeout: 10_000 });

    // A client follows it while it is paused.
    const follower = chat.follow('s', 'r1', 0, (_id, event) => event);
    const followed = (async () => {
      const events = [];
      for await (const event of follower) events.push(event);
      return events;
    })();

    // Its options are damaged meanwhile, and the database takes writes again.
    db.pragma('query_only = OFF');
    expect(db.prepare("UPDATE runs SET options = '{\"decisionTim' WHERE run_id = 'r1'").run().changes).toBe(1);

    await vi.waitFor(() => expect(chat.listSessions().find((session) => session.sessionId === 's')?.activeRunId).toBeNull(), { timeout: 10_000 });
    expect((await store.getRun('r1'))?.endedAt).not.toBeNull();
    expect((await store.loadEvents('r1', 0)).at(-1)).toMatchObject({ type: 'run-end', reason: 'error', error: expect.stringMatching(/^A stored record of this run is damaged \(the options of run r1: /) });
    expect((await followed).at(-1)).toStrictEqual((await store.loadEvents('r1', 0)).at(-1));
    expect(chat.pending('s')).toStrictEqual([]);
    expect(calls).toStrictEqual([]);
    const said = lines.filter((line) => line.includes('damaged'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^Run r1 of chat s was set aside: a stored record of it is damaged \(the options of run r1: /);
    await chat.shutdown();
    await store.close();
  });
});
