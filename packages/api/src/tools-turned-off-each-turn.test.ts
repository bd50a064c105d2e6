import { ApprovalRegistry, defineTool, type AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ChatService } from './chat-service';
import { ConnectionState } from './context';
import { MemoryStore } from './memory-store';
import { appRouter, createCallerFactory } from './router';
import { runEnded } from './test-support';
import { ToolSettingsService } from './tool-settings-service';

// The tools turned off in the settings the server keeps are left out of what a run offers at each model turn, not
// only when a new run starts: a run resumed after a restart, with an MCP tool that was down when it started and has
// come back, and a run whose settings changed while it waited, offered the tool turned off.

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

const tool = (name: string): AnyTool => defineTool({ name, description: name, parameters: z.object({ n: z.number().optional() }), execute: async () => `${name} ran` });

/** One server process over `store`, as create-services wires it: a chat service and a router sharing the settings. */
async function startProcess(store: MemoryStore, steps: ScriptStep[], tools: () => readonly AnyTool[]) {
  const model = new ScriptedModel(steps);
  const settings = new ToolSettingsService(store);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools, store, suspendRunsOnShutdown: true, settings });
  services.push(chat);
  await chat.open();
  const api = createCallerFactory(appRouter)({
    services: { chat, settings, catalog: { tools, servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1'),
  });
  return { chat, api, model, offered: (turn: number) => model.requests[turn]!.tools.map((offered) => offered.name) };
}

/** Starts a run through the router, as a client that names no tools does (the terminal client). */
async function startRun(api: Awaited<ReturnType<typeof startProcess>>['api']): Promise<void> {
  const stream = (await api.chat.stream({ sessionId: 's', runId: 'r1', message: 'go' }))[Symbol.asyncIterator]();
  await stream.next();
  await stream.return?.(undefined);
}

describe('tools turned off in the settings', () => {
  it('are not offered to a resumed run once their MCP server, down when the run started, has come back', async () => {
    const store = new MemoryStore();
    const before = await startProcess(store, [toolCallStep({ name: 'echo', arguments: {} })], () => [tool('echo')]);
    await before.api.settings.update({ disabledTools: ['fs__purge'] });
    await startRun(before.api);
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
    expect(before.offered(0)).toStrictEqual(['echo']);
    await before.chat.shutdown();

    // Restarted with the MCP server up again: its tool is listed, and still turned off.
    const after = await startProcess(store, [textStep('done')], () => [tool('echo'), tool('fs__purge')]);
    const [waiting] = after.chat.pending('s');
    await after.chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'allow' });
    await runEnded(after.chat, 's');
    expect(after.offered(0)).toStrictEqual(['echo']);
  });

  it('changed while a run waits hold from its next model turn, turned off or on again', async () => {
    const store = new MemoryStore();
    const steps = [toolCallStep({ name: 'echo', arguments: { n: 1 } }), toolCallStep({ name: 'echo', arguments: { n: 2 } }), textStep('done')];
    const { chat, api, offered } = await startProcess(store, steps, () => [tool('echo'), tool('python')]);
    await startRun(api);
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
    await api.settings.update({ disabledTools: ['python'] });
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
    await api.settings.update({ disabledTools: [] });
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await runEnded(chat, 's');
    expect([offered(0), offered(1), offered(2)]).toStrictEqual([
      ['echo', 'python'],
      ['echo'],
      ['echo', 'python'],
    ]);
  });

  it('changed after a run started do not make a retry of its start a conflict: it re-attaches', async () => {
    const store = new MemoryStore();
    const { chat, api } = await startProcess(store, [toolCallStep({ name: 'echo', arguments: {} })], () => [tool('echo'), tool('python')]);
    await startRun(api);
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
    await api.settings.update({ disabledTools: ['python'] });
    // The same start again, as a client does when the connection dropped before it heard the run start.
    const again = (await api.chat.stream({ sessionId: 's', runId: 'r1', message: 'go' }))[Symbol.asyncIterator]();
    const first = await again.next();
    await again.return?.(undefined);
    expect((first.value as unknown as [string, { type: string }])[1].type).toBe('run-start');
  });

  it('refuse a call the model makes to one anyway, as a call to a tool not offered', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const python = defineTool({ name: 'python', description: 'python', parameters: z.object({}), execute: async () => (ran.push('python'), 'ran') });
    const { chat, api } = await startProcess(store, [toolCallStep({ name: 'python', arguments: {} }), textStep('done')], () => [tool('echo'), python]);
    await api.settings.update({ disabledTools: ['python'] });
    await startRun(api);
    await runEnded(chat, 's');
    const calls = (await api.sessions.get({ sessionId: 's' })).toolCalls;
    expect([ran, calls.map((call) => call.outcome)]).toStrictEqual([[], ['disabled']]);
  });

  it.each([false, true])('leave a call put up before its tool was turned off to the person: allowed, it runs (restart between: %s)', async (restart) => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const echo = () => [defineTool({ name: 'echo', description: 'echo', parameters: z.object({}), execute: async () => (ran.push('echo'), 'ran') })];
    let process = await startProcess(store, [toolCallStep({ name: 'echo', arguments: {} }), textStep('done')], echo);
    await startRun(process.api);
    await vi.waitFor(() => expect(process.chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
    await process.api.settings.update({ disabledTools: ['echo'] });
    if (restart) {
      await process.chat.shutdown();
      process = await startProcess(store, [textStep('done')], echo);
      // Decided once the resumed run has said so and parked again at its call (a decision made before takes another way).
      const resumed = process.chat;
      await vi.waitFor(() => expect(resumed.eventsShown('r1')).toBeGreaterThan(0), { timeout: 10_000 });
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await process.chat.confirm({ sessionId: 's', approvalId: process.chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await runEnded(process.chat, 's');
    // The person decided on the card that turn put up: the same outcome whether or not the server restarted.
    expect(ran).toStrictEqual(['echo']);
    expect((await process.api.sessions.get({ sessionId: 's' })).toolCalls.map((call) => [call.decision, call.outcome])).toStrictEqual([['allow', 'executed']]);
  });

  it.each([false, true])('turned off, are not run for a call of a turn never put up, with confirmation off meanwhile (restart between: %s)', async (restart) => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const tools = () => ['echo', 'python'].map((name) => defineTool({ name, description: name, parameters: z.object({}), execute: async () => (ran.push(name), 'ran') }));
    let process = await startProcess(store, [toolCallStep({ name: 'echo', arguments: {} }, { name: 'python', arguments: {} }), textStep('done')], tools);
    await process.api.settings.update({ disabledTools: ['python'] });
    await startRun(process.api);
    await vi.waitFor(() => expect(process.chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
    await process.api.sessions.update({ sessionId: 's', confirmToolCalls: false });
    if (restart) {
      await process.chat.shutdown();
      process = await startProcess(store, [textStep('done')], tools);
    }
    await process.chat.confirm({ sessionId: 's', approvalId: process.chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await runEnded(process.chat, 's');
    expect(ran).toStrictEqual(['echo']);
    expect((await process.api.sessions.get({ sessionId: 's' })).toolCalls.map((call) => [call.toolName, call.outcome])).toStrictEqual([
      ['echo', 'executed'],
      ['python', 'disabled'],
    ]);
  });
});
