// A run waiting on a decision in a long chat, in a process started with --expose-gc: after full collections, is any
// message the store read for the run still reachable while the call waits, before and after a restart? Then the call
// is allowed, and the conversation the model reads next is compared with the one a run holding it would have sent.
// Prints one line of JSON; see waiting-run-memory.test.ts.
import { ChatService } from '@airlock/api';
import { ApprovalRegistry, defineTool, type ChatMessage } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { z } from 'zod';
import { SqliteStore } from './sqlite-store';

const directory = process.argv[2]!;
const echo = defineTool({ name: 'echo', description: 'echoes', parameters: z.object({ text: z.string() }), annotations: { executesCode: false }, execute: async ({ text }) => `echo: ${text}` });

/** Weak references to every message the store reads out (the arrays and each message), since the spy was set. */
function spied(store: SqliteStore): WeakRef<object>[] {
  const read: WeakRef<object>[] = [];
  const track = (messages: ChatMessage[]) => {
    read.push(new WeakRef(messages));
    for (const message of messages) read.push(new WeakRef(message));
  };
  const loadMessages = store.loadMessages.bind(store);
  const loadMessagePage = store.loadMessagePage.bind(store);
  store.loadMessages = async (sessionId) => {
    const messages = await loadMessages(sessionId);
    track(messages);
    return messages;
  };
  store.loadMessagePage = async (sessionId, query) => {
    const page = await loadMessagePage(sessionId, query);
    track(page.messages);
    return page;
  };
  return read;
}

/** Collects garbage in a later turn (a WeakRef made or read in this one holds its target until the turn ends). */
async function reachable(read: readonly WeakRef<object>[]): Promise<number> {
  await new Promise((resolve) => setImmediate(resolve));
  global.gc!();
  global.gc!();
  return read.filter((ref) => ref.deref() !== undefined).length;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

const earlier: ChatMessage[] = Array.from({ length: 300 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i} ${'x'.repeat(10_000)}` }));
{
  const store = await SqliteStore.open({ directory, log: () => {} });
  await store.createSession({ sessionId: 's', title: 'a long chat', createdAt: 1, updatedAt: 1, confirmToolCalls: true, lastRunId: null });
  for (const message of earlier) await store.appendMessage('s', message, 1);
  await store.close();
}

async function start(steps: ConstructorParameters<typeof ScriptedModel>[0]) {
  const store = await SqliteStore.open({ directory, log: () => {} });
  const read = spied(store);
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [echo], store, suspendRunsOnShutdown: true });
  await chat.open();
  return { store, read, model, chat };
}

const first = await start([toolCallStep({ name: 'echo', arguments: { text: 'hi' } })]);
await first.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
await until(() => first.chat.pending('s').length === 1);
const whileWaiting = await reachable(first.read);
const firstRequest = first.model.requests[0]!.messages;
await first.chat.shutdown();
await first.store.close();

const second = await start([textStep('done')]);
await until(() => second.chat.pending('s').length === 1);
const afterRestart = await reachable(second.read);
await second.chat.confirm({ sessionId: 's', approvalId: second.chat.pending('s')[0]!.approvalId, decision: 'allow' });
await until(() => second.chat.listSessions()[0]?.activeRunId === null);
const nextRequest = second.model.requests[0]!.messages;
await second.chat.shutdown();
await second.store.close();

const turn: ChatMessage = { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: 'echo', arguments: { text: 'hi' } }] };
const result: ChatMessage = { role: 'tool', toolCallId: 'call_0', toolName: 'echo', content: 'echo: hi' };
const same = (a: readonly ChatMessage[], b: readonly ChatMessage[]) => JSON.stringify(a) === JSON.stringify(b);
console.log(
  JSON.stringify({
    whileWaiting,
    afterRestart,
    firstRequest: same(firstRequest, [...earlier, { role: 'user', content: 'go' }]),
    nextRequest: same(nextRequest, [...earlier, { role: 'user', content: 'go' }, turn, result]),
    nextRequestLength: nextRequest.length,
  }),
);
