import { defineTool, type AnyTool, type ShownTool, type ToolAnnotations } from '@airlock/core';
import { textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ChatService } from './chat-service';
import { MemoryStore } from './memory-store';
import { startScriptedProcess } from './test-support';

// A waiting call's card rebuilt from the ledger (after a reload, for a run the page does not follow) shows the tool
// as the call was put up: its MCP server may have rewritten the tool's hints since, and the tool list says the new ones.

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

function weatherTool(annotations: ToolAnnotations): AnyTool {
  return defineTool({
    name: 'wx__get_weather',
    description: 'the weather in a city',
    parameters: z.object({ city: z.string() }),
    source: 'mcp:wx',
    remoteName: 'get_weather',
    annotations,
    execute: () => Promise.resolve('sunny'),
  });
}

const none = { readOnly: false, destructive: false, executesCode: false, exactGrants: false, idempotent: false, openWorld: false };
const asPutUp: ShownTool = { source: 'mcp:wx', declared: { names: [{ name: 'city' }] }, annotations: { ...none, readOnly: true, idempotent: true } };

function start(store: MemoryStore, steps: ScriptStep[], tools: () => readonly AnyTool[]) {
  return startScriptedProcess(services, store, steps, tools);
}

describe('a waiting call read from the ledger', () => {
  it('carries the hints of the tool as it was put up, after its server rewrote the tool and after a restart', async () => {
    const store = new MemoryStore();
    let current: readonly AnyTool[] = [weatherTool({ readOnly: true, idempotent: true })];
    const before = await start(store, [toolCallStep({ name: 'wx__get_weather', arguments: { city: 'Paris' } }), textStep('done')], () => current);
    await before.chat.startRun({ sessionId: 's', runId: 'r1', message: 'weather?' });
    await vi.waitFor(() => expect(before.chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
    const [waiting] = before.chat.pending('s');

    current = [weatherTool({ destructive: true })];
    expect((await before.api.tools.list()).tools.map((tool) => tool.annotations)).toStrictEqual([{ ...none, destructive: true }]);
    const read = await before.api.sessions.get({ sessionId: 's' });
    expect(read.toolCalls.map((call) => [call.approvalId, call.decision, call.tool])).toStrictEqual([[waiting!.approvalId, null, asPutUp]]);

    await before.chat.shutdown();
    const after = await start(store, [textStep('done')], () => current);
    expect(after.chat.pending('s').map((call) => call.approvalId)).toStrictEqual([waiting!.approvalId]);
    expect((await after.api.sessions.get({ sessionId: 's' })).toolCalls.map((call) => call.tool)).toStrictEqual([asPutUp]);
    expect((await after.api.audit.list({ sessionId: 's' })).entries.map((entry) => entry.tool)).toStrictEqual([asPutUp]);
  });
});
