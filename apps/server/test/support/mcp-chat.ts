import { ChatService, MemoryStore } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel, textStep, type toolCallStep } from '@airlock/core/testing';
import { expect, vi } from 'vitest';
import { hostileServer } from '../../src/mcp/fixtures/test-servers';
import { McpManager } from '../../src/mcp/mcp-manager';

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
