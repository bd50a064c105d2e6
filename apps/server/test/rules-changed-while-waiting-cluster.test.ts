import { defineTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { link, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, waitingCalls } from './support/cluster-instance';
import { probeTestDatabase } from './support/postgres';

// With several instances: a deny rule added on one instance while a call waits on another, that cannot tell that call
// from one it denies (a read of a hard link of a file it denies), has it released only by a grant for its exact
// arguments, on its owner and in the waiting list every instance reads. "Always allow" on a sibling call, given on
// the instance that added the rule, does not release it.

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance rule added while calls wait: ${postgres.reason}`);

const cleanups = cleanupsAfterEach();

describe.skipIf(!postgres.available)('a deny rule added on one instance while calls wait on another', { timeout: 120_000 }, () => {
  it('keeps the call it cannot judge waiting past "Always allow" on a sibling, marked on every instance', async () => {
    const db = await cleanups.database();
    const folder = await mkdtemp(join(tmpdir(), 'airlock-rules-changed-cluster-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const workspace = await realpath(folder);
    await mkdir(join(workspace, 'secret'));
    await mkdir(join(workspace, 'src'));
    await writeFile(join(workspace, 'notes.txt'), 'plain\n');
    await writeFile(join(workspace, 'secret', 'key'), 'key\n');
    await link(join(workspace, 'secret', 'key'), join(workspace, 'src', 'hard'));
    const read: string[] = [];
    const tool = defineTool({
      name: 'read_file',
      description: 'reads a file',
      parameters: z.object({ path: z.string() }),
      annotations: { readOnly: true },
      execute: ({ path }) => (read.push(path), Promise.resolve(`read ${path}`)),
    });
    const model = () => new ScriptedModel([toolCallStep({ name: 'read_file', arguments: { path: 'notes.txt' } }, { name: 'read_file', arguments: { path: 'src/hard' } }), textStep('done')]);
    const a = await clusterInstance(db, cleanups, { name: 'a', model: model(), tools: () => [tool], workspace });
    const b = await clusterInstance(db, cleanups, { name: 'b', model: model(), tools: () => [tool], workspace });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const [notes, hard] = await waitingCalls(b.chat, 's', 2);
    expect([notes!.arguments, hard!.arguments, hard!.exactGrantsOnly]).toStrictEqual([{ path: 'notes.txt' }, { path: 'src/hard' }, undefined]);

    const deny = await b.rules.add({ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, scope: { kind: 'global' }, source: 'user' });
    expect(await b.chat.confirm({ sessionId: 's', approvalId: notes!.approvalId, decision: 'allow', always: true, scope: 'chat' })).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(read).toStrictEqual(['notes.txt']), { timeout: 20_000, interval: 20 });

    expect((await waitingCalls(b.chat, 's')).map((call) => [call.approvalId, call.exactGrantsOnly, call.askedBecause?.ruleId])).toStrictEqual([[hard!.approvalId, true, deny.rule.id]]);
    expect(a.chat.pending('s').map((call) => [call.approvalId, call.exactGrantsOnly])).toStrictEqual([[hard!.approvalId, true]]);
    await b.chat.confirm({ sessionId: 's', approvalId: hard!.approvalId, decision: 'deny' });
    await vi.waitFor(async () => expect((await a.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 20_000, interval: 20 });
    expect(read).toStrictEqual(['notes.txt']);
  });
});
