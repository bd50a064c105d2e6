import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel, textStep } from '@airlock/core/testing';
import { ChatService } from '@airlock/api';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileSessionStore } from './file-session-store';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir() {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-sessions-'));
  dirs.push(dir);
  return join(dir, 'sessions');
}

async function finishRun(chat: ChatService, sessionId: string, message: string) {
  const { runId } = chat.startRun({ sessionId, message });
  const events = chat.follow(sessionId, runId, 0, (_id, event) => event);
  for await (const event of events) if (event.type === 'run-end') break;
  // The run's conversation is stored as the run is wrapped up, just after run-end is sent.
  await vi.waitFor(() => expect(chat.getSession(sessionId).activeRunId).toBeNull());
}

describe('FileSessionStore', () => {
  it('keeps a conversation across a restart, and it continues with the next message', async () => {
    const directory = await tempDir();
    const first = await FileSessionStore.open({ directory });
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([textStep('first answer')]), tools: () => [], store: first.store });
    await finishRun(chat, 'chat-1', 'hello');
    await first.store.flush();

    const reopened = await FileSessionStore.open({ directory });
    expect(reopened.sessions).toMatchObject([{ sessionId: 'chat-1', title: 'hello', messages: [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'first answer' }] }]);
    const model = new ScriptedModel([textStep('second answer')]);
    const restarted = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [], store: reopened.store });
    restarted.restore(reopened.sessions);
    await finishRun(restarted, 'chat-1', 'and again');
    expect(model.requests[0]?.messages.map((m) => m.content)).toStrictEqual(['hello', 'first answer', 'and again']);
    await restarted.deleteSession('chat-1');
    await reopened.store.flush();
    expect(await readdir(directory)).toStrictEqual([]);
  });

  it('skips and reports files that are not sessions, and never turns an id into a path', async () => {
    const directory = await tempDir();
    const log = vi.fn();
    const { store } = await FileSessionStore.open({ directory, log });
    store.save({ sessionId: '..', title: 't', createdAt: 1, updatedAt: 1, messages: [] });
    await store.flush();
    expect(await readdir(directory)).toStrictEqual(['Li4.json']);
    await writeFile(join(directory, 'broken.json'), '{"sessionId": 42}');
    await writeFile(join(directory, 'bm90LWl0.json'), JSON.stringify({ sessionId: 'other', title: 't', createdAt: 1, updatedAt: 1, messages: [] }));
    const reopened = await FileSessionStore.open({ directory, log });
    expect(reopened.sessions.map((s) => s.sessionId)).toStrictEqual(['..']);
    const lines = log.mock.calls.map(([line]) => String(line)).sort();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('bm90LWl0.json: its name does not match');
    expect(lines[1]).toContain('broken.json: sessionId');
  });


});
