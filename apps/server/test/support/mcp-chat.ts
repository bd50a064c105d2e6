import { ChatService, MemoryStore } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { afterEach, expect, vi } from 'vitest';
import { hostileServer } from '../../src/mcp/fixtures/test-servers';
import { McpManager } from '../../src/mcp/mcp-manager';
import { ended } from './always-allow';

/**
 * A chat service whose tools are one real stdio MCP server (the hostile test server in `scenario`, named `server`),
 * and whose model makes `step` and then says "done". Both are closed by `cleanups`, last first.
 */
export async function chatWithMcpServer(server: string, scenario: string, step: ReturnType<typeof toolCallStep>, cleanups: (() => Promise<void>)[]): Promise<ChatService> {
  const mcp = new McpManager({ servers: new Map([[server, hostileServer(scenario)]]), logger: { info: () => undefined, warn: () => undefined } });
  cleanups.push(() => mcp.close());
  await mcp.start();
  const model = new ScriptedModel([step, textStep('done')]);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => mcp.tools(), store: new MemoryStore() });
  cleanups.push(() => chat.shutdown());
  await chat.open();
  return chat;
}

/** Resolves once the run has put a call up for a decision or ended, whichever comes first. */
export async function putUpOrEnded(chat: ChatService, sessionId: string): Promise<void> {
  await vi.waitFor(
    () => expect(chat.pending(sessionId).length > 0 || chat.listSessions().find((s) => s.sessionId === sessionId)?.activeRunId === null).toBe(true),
    { timeout: 15_000 },
  );
}

/**
 * Calls to the tools of one real stdio MCP server (the hostile test server in `scenario`, named `server`) as the MCP
 * tool tests make them: each in a chat of its own, whose model makes the one call, closed after the test.
 */
export function mcpToolCalls(server: string, scenario: string) {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const chatWith = (step: ReturnType<typeof toolCallStep>) => chatWithMcpServer(server, scenario, step, cleanups);
  return {
    chatWith,
    /** Checks that a call to `name` with `given` is put up exactly as given, and once allowed runs, the server getting exactly it. */
    async putsUpAndRuns(name: string, given: Record<string, unknown>): Promise<void> {
      const chat = await chatWith(toolCallStep({ name, arguments: given }));
      await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
      await putUpOrEnded(chat, 's');
      const [waiting] = chat.pending('s');
      expect(waiting?.arguments).toStrictEqual(given);
      await chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'allow' });
      await ended(chat, 's');
      const [call] = (await chat.getSession('s')).toolCalls;
      expect(call).toMatchObject({ decision: 'allow', outcome: 'executed' });
      expect(JSON.parse(call!.result!)).toStrictEqual({ received: given });
    },
    /** Checks that a call to `name` with `given` is refused as invalid before anyone is asked. */
    async refusedBeforeAsked(name: string, given: Record<string, unknown>): Promise<void> {
      const chat = await chatWith(toolCallStep({ name, arguments: given }));
      await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
      await putUpOrEnded(chat, 's');
      expect(chat.pending('s')).toStrictEqual([]);
      const [call] = (await chat.getSession('s')).toolCalls;
      expect(call).toMatchObject({ outcome: 'error', arguments: given });
      expect(call!.result).toContain(`Error: invalid arguments for "${name}"`);
    },
    /** The names of the tools the server's listing offers, and what was logged as a warning. */
    async listing(): Promise<{ tools: string[]; warnings: string[] }> {
      const warnings: string[] = [];
      const mcp = new McpManager({ servers: new Map([[server, hostileServer(scenario)]]), logger: { info: () => undefined, warn: (line) => warnings.push(line) } });
      cleanups.push(() => mcp.close());
      await mcp.start();
      return { tools: mcp.tools().map((tool) => tool.name), warnings };
    },
  };
}
