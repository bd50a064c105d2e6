import type * as nodeFs from 'node:fs';
import { appRouter, ChatService, ConnectionState, createCallerFactory, type LoopEvent } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { mcpReadTool, ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { SqliteStore } from './sqlite-store';
import { tempFolder } from './test-support';

/** Syncs of the write-ahead log, held while `holding` until the test lets them go. */
const disk = vi.hoisted(() => ({ holding: false, held: [] as (() => void)[] }));

vi.mock('node:fs', async (original) => {
  const fs = await original<typeof nodeFs>();
  return {
    ...fs,
    fdatasync: (fd: number, done: (error: Error | null) => void) => {
      if (disk.holding) disk.held.push(() => fs.fdatasync(fd, done));
      else fs.fdatasync(fd, done);
    },
  };
});

describe('an allow whose sync to the disk is still going', () => {
  it('runs nothing when the run is stopped meanwhile: the tool waits for the sync, and the Stop comes first', async () => {
    await using folder = await tempFolder();
    const store = await SqliteStore.open({ directory: join(folder.path, 'data'), log: () => {} });
    const ran: string[] = [];
    const model = new ScriptedModel([toolCallStep({ name: 'files__read', arguments: { path: 'notes.txt' } }), textStep('unused')]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [mcpReadTool('reads a file', ran)], store });
    await chat.open();
    const caller = createCallerFactory(appRouter)({
      services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
      connection: new ConnectionState('c1'),
    });
    try {
      const events: LoopEvent[] = [];
      const stream = (await caller.chat.stream({ sessionId: 's', runId: 'r', message: 'read my notes', options: { confirmToolCalls: true } }))[Symbol.asyncIterator]();
      const next = async () => {
        const { value } = await stream.next();
        const [, event] = value as [string, LoopEvent];
        events.push(event);
        return event;
      };
      let start: LoopEvent;
      do start = await next();
      while (start.type !== 'tool-start');
      expect(start.approvalId).not.toBe('');
      // The write-out made while the card is read is done; the allow's own sync is the one held.
      await (store as unknown as { walSync: { whenIdle(): Promise<void> } }).walSync.whenIdle();
      disk.holding = true;
      const allowed = caller.chat.confirmTool({ sessionId: 's', approvalId: start.approvalId, decision: 'allow' });
      await vi.waitFor(() => expect(disk.held).toHaveLength(1));

      const stopped = caller.chat.cancel({ sessionId: 's', runId: 'r' });
      disk.holding = false;
      for (const release of disk.held.splice(0)) release();
      expect(await stopped).toStrictEqual({ cancelled: 1 });
      expect(await allowed).toMatchObject({ resolved: true });
      let end: LoopEvent;
      do end = await next();
      while (end.type !== 'run-end');
      expect(end).toMatchObject({ type: 'run-end', reason: 'cancelled' });
      expect(events.find((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'cancelled' });
      expect(ran).toStrictEqual([]);
    } finally {
      await chat.shutdown();
      await store.close();
    }
  });
});
