import { ApprovalRegistry, defineTool, type AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ChatService } from './chat-service';
import { MemoryStore } from './memory-store';
import { runEnded, startEchoChat } from './test-support';

/** A model turn that calls the echo tool with `text`, under the call id `id`. */
const echoCall = (text: string, id: string) => toolCallStep({ name: 'echo', arguments: { text }, id });

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

async function waiting(chat: ChatService, sessionId: string): Promise<string> {
  await vi.waitFor(() => expect(chat.pending(sessionId)).toHaveLength(1), { timeout: 10_000 });
  return chat.pending(sessionId)[0]!.approvalId;
}

describe('ChatService: the calls of a run resumed after a restart', () => {
  it('gives a call whose id the model used already in this run, before the restart, an id of its own: it is asked about and runs', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    // Model servers that number a turn's calls from 0 give each turn's first call the same id.
    const first = await startEchoChat(services, store, [echoCall('one', 'call_0'), echoCall('two', 'call_0')], ran);
    await first.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await first.confirm({ sessionId: 's', approvalId: await waiting(first, 's'), decision: 'allow' });
    const second = await waiting(first, 's');
    await first.shutdown();

    const restarted = await startEchoChat(services, store, [echoCall('three', 'call_0'), textStep('done')], ran);
    expect(await waiting(restarted, 's')).toBe(second);
    await restarted.confirm({ sessionId: 's', approvalId: second, decision: 'allow' });
    const third = await waiting(restarted, 's');
    expect(restarted.pending('s')[0]).toMatchObject({ arguments: { text: 'three' } });
    await restarted.confirm({ sessionId: 's', approvalId: third, decision: 'allow' });
    await runEnded(restarted, 's');
    expect(ran).toStrictEqual(['one', 'two', 'three']);
    const calls = await store.listRunToolCalls('r1');
    expect(calls.map((call) => call.outcome)).toStrictEqual(['executed', 'executed', 'executed']);
    expect(new Set(calls.map((call) => call.toolCallId)).size).toBe(3);
    expect((await store.loadEvents('r1', 0)).at(-1)).toMatchObject({ type: 'run-end', reason: 'done' });
  });


  it('counts the call an edit ran, not the proposal the person changed: the proposal made again is asked about, the edit made again is a duplicate', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const first = await startEchoChat(services, store, [echoCall('rm -rf build', 'c1'), echoCall('next', 'c2')], ran);
    await first.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await first.confirm({ sessionId: 's', approvalId: await waiting(first, 's'), decision: 'allow', arguments: { text: 'ls build' } });
    await vi.waitFor(() => expect(ran).toStrictEqual(['ls build']));
    const next = await waiting(first, 's');
    await first.shutdown();

    // The model proposes again what the person edited away, then what ran.
    const second = await startEchoChat(services, store, [echoCall('rm -rf build', 'c3'), echoCall('ls build', 'c4'), textStep('done')], ran);
    expect(await waiting(second, 's')).toBe(next);
    await second.confirm({ sessionId: 's', approvalId: next, decision: 'allow' });
    const again = await waiting(second, 's');
    expect(second.pending('s')[0]).toMatchObject({ arguments: { text: 'rm -rf build' } });
    await second.confirm({ sessionId: 's', approvalId: again, decision: 'deny' });
    await runEnded(second, 's');
    expect(ran).toStrictEqual(['ls build', 'next']);
    expect((await store.listRunToolCalls('r1')).map((call) => [call.arguments, call.outcome])).toStrictEqual([
      [{ text: 'rm -rf build' }, 'executed'],
      [{ text: 'next' }, 'executed'],
      [{ text: 'rm -rf build' }, 'denied'],
      [{ text: 'ls build' }, 'duplicate'],
    ]);
  });

  it('refuses again a call whose arguments could not be read, never announced before the restart: it is not put up, nor run, as no arguments', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const tools: AnyTool[] = [
      defineTool({ name: 'echo', description: 'echoes', parameters: z.object({ text: z.string() }), annotations: { executesCode: true }, execute: async ({ text }) => (ran.push(text), 'ok') }),
      defineTool({ name: 'list', description: 'lists', parameters: z.object({ path: z.string().optional() }), annotations: { executesCode: false }, execute: async ({ path }) => (ran.push(`list ${path ?? '.'}`), 'ok') }),
    ];
    const start = async (steps: ScriptStep[]) => {
      const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel(steps), tools: () => tools, store, suspendRunsOnShutdown: true });
      services.push(chat);
      await chat.open();
      return chat;
    };
    // The second call is refused for its arguments at its turn; the server stops while the first waits.
    const first = await start([toolCallStep({ name: 'echo', arguments: { text: 'a' }, id: 'c1' }, { name: 'list', arguments: '{"path":"secret","__proto__":{}}', id: 'c2' })]);
    await first.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const waitingFirst = await waiting(first, 's');
    await first.shutdown();

    const second = await start([textStep('done')]);
    expect(await waiting(second, 's')).toBe(waitingFirst);
    await second.confirm({ sessionId: 's', approvalId: waitingFirst, decision: 'allow' });
    await runEnded(second, 's');
    expect(ran).toStrictEqual(['a']);
    expect((await store.listRunToolCalls('r1')).map((call) => [call.toolCallId, call.outcome])).toStrictEqual([
      ['c1', 'executed'],
      ['c2', 'error'],
    ]);
  });
});
