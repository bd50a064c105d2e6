import { declaredArguments, defineTool, visibleArguments, type AnyTool, type LoopEvent } from '@airlock/core';
import { textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ChatService } from './chat-service';
import { MemoryStore } from './memory-store';
import { startScriptedProcess } from './test-support';

// A card marks the argument names a call's tool does not declare against the tool as the call was put up, which is
// what a decision covers: its MCP server may have rewritten the tool's schema since, and the tool list says the new one.

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

function purgeTool(optionNames: readonly string[]): AnyTool {
  const jsonSchema = { type: 'object', properties: { target: { type: 'string' }, options: { type: 'object', properties: Object.fromEntries(optionNames.map((name) => [name, { type: 'boolean' }])) } } };
  return defineTool({
    name: 'fs__purge',
    description: 'purges a folder',
    parameters: z.record(z.string(), z.unknown()),
    jsonSchema,
    source: 'mcp:fs',
    remoteName: 'purge',
    execute: () => Promise.resolve('purged'),
  });
}

function start(store: MemoryStore, steps: ScriptStep[], tools: () => readonly AnyTool[]) {
  return startScriptedProcess(services, store, steps, tools);
}

/** The run's tool-start, as a client re-attaching to the run reads it. */
async function replayedStart(api: Awaited<ReturnType<typeof start>>['api']): Promise<Extract<LoopEvent, { type: 'tool-start' }>> {
  const stream = (await api.chat.stream({ sessionId: 's', runId: 'r1' }))[Symbol.asyncIterator]();
  try {
    for (let next = await stream.next(); next.done !== true; next = await stream.next()) {
      const event = (next.value as unknown as [string, LoopEvent])[1];
      if (event.type === 'tool-start') return event;
    }
    throw new Error('no tool-start');
  } finally {
    await stream.return?.(undefined);
  }
}

describe('the declared arguments a tool-start carries', () => {
  it('are those of the tool as the call was put up, after its server rewrote the tool', async () => {
    const store = new MemoryStore();
    let current: readonly AnyTool[] = [purgeTool(['force'])];
    const args = { target: 'backups', options: { dry_run: true } };
    const { chat, api } = await start(store, [toolCallStep({ name: 'fs__purge', arguments: args }), textStep('done')], () => current);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'purge?' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 10_000 });

    // The server now declares dry_run: the list says so, the call's tool-start and its ledger row do not.
    current = [purgeTool(['force', 'dry_run'])];
    const listed = (await api.tools.list()).tools[0]!;
    expect(visibleArguments('fs__purge', args, { schema: listed.inputSchema }).undeclaredCount).toBe(0);

    const putUp = declaredArguments(purgeTool(['force']).jsonSchema);
    const event = await replayedStart(api);
    expect(event.tool?.declared).toStrictEqual(putUp);
    const shown = visibleArguments(event.toolName, event.arguments, { declared: event.tool?.declared });
    expect(shown.inner).toStrictEqual([{ path: 'options.dry_run', unchecked: false }]);
    expect((await api.sessions.get({ sessionId: 's' })).toolCalls.map((call) => call.tool?.declared)).toStrictEqual([putUp]);
  });

  it('come with the waiting call its Waiting list reads, after its server rewrote the tool and after a restart', async () => {
    const store = new MemoryStore();
    let current: readonly AnyTool[] = [purgeTool(['force'])];
    const before = await start(store, [toolCallStep({ name: 'fs__purge', arguments: { options: { dry_run: true } } }), textStep('done')], () => current);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'purge?' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
    current = [purgeTool(['force', 'dry_run'])];
    const putUp = declaredArguments(purgeTool(['force']).jsonSchema);
    expect((await before.api.chat.pending({ sessionId: 's' })).map((call) => call.tool?.declared)).toStrictEqual([putUp]);

    await before.chat.shutdown();
    const after = await start(store, [textStep('done')], () => current);
    expect((await after.api.chat.pending({ sessionId: 's' })).map((call) => call.tool?.declared)).toStrictEqual([putUp]);
  });
});
