import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalRegistry } from './approval-registry';
import { loopEventSchema, MAX_SHOWN_TOOL_SOURCE_LENGTH, type LoopEvent, type ToolStartEvent } from './events';
import { runToolLoop } from './run-tool-loop';
import { collectRun, ScriptedModel, textStep, toolCallStep } from './testing';
import { defineTool, type AnyTool, type ToolAnnotations } from './tool';

const SESSION = 'shown-tool-session';

function mcpTool(annotations: ToolAnnotations, source = 'mcp:wx'): AnyTool {
  return defineTool({
    name: 'wx__get_weather',
    description: 'Reads the weather',
    parameters: z.object({ city: z.string() }),
    annotations,
    source,
    remoteName: 'get_weather',
    execute: async () => 'sunny',
  });
}

async function starts(tool: AnyTool, options: { confirm: boolean }): Promise<ToolStartEvent[]> {
  const registry = new ApprovalRegistry();
  const model = new ScriptedModel([toolCallStep({ name: tool.name, arguments: { city: 'Paris' } }), textStep('ok')]);
  const run = runToolLoop({ model, messages: [{ role: 'user', content: 'hi' }], tools: [tool], registry, sessionId: SESSION, confirmToolCalls: options.confirm });
  const { events } = await collectRun(run, (event) => {
    if (event.type === 'tool-start' && event.awaitingConfirmation) registry.resolve(event.approvalId, 'allow', { sessionId: SESSION });
  });
  return events.filter((event): event is ToolStartEvent => event.type === 'tool-start');
}

describe('the tool a tool-start shows', () => {
  it('a call put up to the person carries its tool’s source and hints as they were then', async () => {
    const [start] = await starts(mcpTool({ destructive: true, openWorld: true }), { confirm: true });
    expect(start).toMatchObject({ awaitingConfirmation: true });
    expect(start!.tool).toStrictEqual({
      source: 'mcp:wx',
      declared: { names: [{ name: 'city' }] },
      annotations: { readOnly: false, destructive: true, executesCode: false, exactGrants: false, idempotent: false, openWorld: true },
    });
  });

  it('a call that asks nobody carries them too', async () => {
    const [start] = await starts(mcpTool({ readOnly: true, idempotent: true }), { confirm: false });
    expect(start).toMatchObject({ awaitingConfirmation: false });
    expect(start!.tool?.annotations).toMatchObject({ readOnly: true, idempotent: true, destructive: false });
  });

  it('a tool’s source is cut to a bounded length', async () => {
    const [start] = await starts(mcpTool({}, `mcp:${'x'.repeat(500)}`), { confirm: true });
    expect(start!.tool?.source).toHaveLength(MAX_SHOWN_TOOL_SOURCE_LENGTH);
    expect(loopEventSchema.safeParse(start).success).toBe(true);
  });
});

describe('toolStartEventSchema', () => {
  const stored: LoopEvent = { type: 'tool-start', toolCallId: 'c1', toolName: 'wx__get_weather', arguments: { city: 'Paris' }, approvalId: 'a1', awaitingConfirmation: true, expiresAt: null };

  it('an event stored before tool-starts carried their tool still parses, without one', () => {
    const parsed = loopEventSchema.parse(stored);
    expect(parsed).toStrictEqual(stored);
    expect(parsed.type === 'tool-start' && parsed.tool).toBeUndefined();
  });

  it('the tool is booleans and a bounded source: anything else is refused', () => {
    const annotations = { readOnly: false, destructive: true, executesCode: false, exactGrants: false, idempotent: false, openWorld: false };
    expect(loopEventSchema.safeParse({ ...stored, tool: { source: 'mcp:wx', annotations } }).success).toBe(true);
    expect(loopEventSchema.safeParse({ ...stored, tool: { source: 'x'.repeat(MAX_SHOWN_TOOL_SOURCE_LENGTH + 1), annotations } }).success).toBe(false);
    expect(loopEventSchema.safeParse({ ...stored, tool: { source: 'mcp:wx', annotations: { ...annotations, destructive: 'yes' } } }).success).toBe(false);
  });
});
