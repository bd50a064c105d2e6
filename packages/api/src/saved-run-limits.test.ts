import { ApprovalRegistry, defineTool, type AnyTool, type ToolContext } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ChatService, type RunOptions } from './chat-service';
import { ConnectionState } from './context';
import { MemoryStore } from './memory-store';
import { appRouter, createCallerFactory } from './router';
import { runEnded } from './test-support';
import { ToolSettingsService } from './tool-settings-service';

// The limits saved in Settings hold for a run whose client sends none (the terminal client, a plain API client), not
// only for the web app's runs, which copy them into their options.

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

/** A server over a fresh store, as create-services wires it; `timeouts` gets each call's timeout as the tool sees it. */
async function startProcess(timeouts: number[]) {
  const store = new MemoryStore();
  const model = new ScriptedModel([toolCallStep({ name: 'probe', arguments: {} }), textStep('done')]);
  const probe: AnyTool = defineTool({
    name: 'probe',
    description: 'probe',
    parameters: z.object({}),
    execute: async (_args: unknown, context: ToolContext) => {
      timeouts.push(context.timeoutMs);
      return 'ran';
    },
  });
  const settings = new ToolSettingsService(store);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [probe], store, settings });
  services.push(chat);
  await chat.open();
  const api = createCallerFactory(appRouter)({
    services: { chat, settings, catalog: { tools: () => [probe], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1'),
  });
  return { chat, api };
}

async function runOnce({ chat, api }: Awaited<ReturnType<typeof startProcess>>, options?: RunOptions): Promise<void> {
  const stream = (await api.chat.stream({ sessionId: 's', runId: 'r1', message: 'go', ...(options === undefined ? {} : { options }) }))[Symbol.asyncIterator]();
  await stream.next();
  await stream.return?.(undefined);
  await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
  await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
  await runEnded(chat, 's');
}

describe('the tool call timeout saved in Settings', () => {
  it('holds for a run whose client gives none, as the terminal client does', async () => {
    const timeouts: number[] = [];
    const server = await startProcess(timeouts);
    await server.api.settings.update({ toolCallTimeoutSeconds: 3 });
    await runOnce(server);
    expect(timeouts).toStrictEqual([3000]);
  });

  it("gives way to the client's own, and is not applied while nothing was saved", async () => {
    const timeouts: number[] = [];
    const given = await startProcess(timeouts);
    await given.api.settings.update({ toolCallTimeoutSeconds: 3 });
    await runOnce(given, { toolCallTimeoutMs: 7000 });
    const unsaved = await startProcess(timeouts);
    await runOnce(unsaved);
    expect(timeouts).toStrictEqual([7000, 5 * 60 * 1000]);
  });
});
