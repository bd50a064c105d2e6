import { appRouter, ConnectionState, createCallerFactory, type ChatService, type RuleService } from '@airlock/api';
import { toolVersion, type AnyTool } from '@airlock/core';
import { createHash } from 'node:crypto';
import { expect, vi } from 'vitest';

// What the tests of "Always allow" on an MCP tool share: an API caller of one person, the waits for a card and for a
// run's end, and the version a saved rule keeps of the tool.

/** The API as the person's client `c1` calls it, over `chat` and `rules`, with `tools()` as the catalog. */
export function apiCaller(chat: ChatService, rules: RuleService, tools: () => readonly AnyTool[]) {
  return createCallerFactory(appRouter)({
    services: { chat, rules, catalog: { tools, servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1'),
  });
}

/** The one call of the chat that waits for a decision, once it does. */
export async function waitingCall(chat: ChatService, sessionId: string) {
  // A service started again resumes its runs from the store: on a loaded machine that takes more than a second.
  await vi.waitFor(() => expect(chat.pending(sessionId)).toHaveLength(1), { timeout: 15_000 });
  return chat.pending(sessionId)[0]!;
}

/** Resolves once the chat has no run going. */
export async function ended(chat: ChatService, sessionId: string) {
  await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === sessionId)?.activeRunId).toBeNull(), { timeout: 10_000 });
}

/** The tool's version as a rule for it keeps it (`toolVersion` of an `mcp-tool` match). */
export const digest = (tool: AnyTool) => createHash('sha256').update(toolVersion(tool)).digest('hex');
