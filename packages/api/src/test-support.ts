import { ApprovalRegistry, defineTool, type AnyTool, type ChatModel } from '@airlock/core';
import { ScriptedModel, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { expect, vi } from 'vitest';
import { z } from 'zod';
import { ChatService, type ChatServiceOptions } from './chat-service';
import { ConnectionState } from './context';
import type { SendWindow, Waker } from './event-log';
import type { MemoryStore } from './memory-store';
import { appRouter, createCallerFactory } from './router';

/** A send window a test opens and shuts by hand (tests only). */
export class ManualWindow implements SendWindow {
  open = true;
  readonly parked = new Set<Waker>();
  park(waiter: Waker): void {
    this.parked.add(waiter);
  }
  unpark(waiter: Waker): void {
    this.parked.delete(waiter);
  }
  /** Opens it and wakes what waited; a waiter that parks again as it wakes stays parked. */
  reopen(): void {
    this.open = true;
    const parked = [...this.parked];
    this.parked.clear();
    for (const waiter of parked) waiter.wake();
  }
}

/** A tool that records each text it is run with in `ran` and echoes it (tests only). */
export function echoTool(ran: string[]): AnyTool {
  return defineTool({
    name: 'echo',
    description: 'echoes',
    parameters: z.object({ text: z.string() }),
    annotations: { executesCode: false },
    execute: async ({ text }) => {
      ran.push(text);
      return `echo: ${text}`;
    },
  });
}

/** What SQLite says when its disk is full, as a test's store that fills up fails its writes (tests only). */
export const DISK_FULL = 'database or disk is full';

/** A model turn that calls the echo tool with `text` (tests only). */
export const echoCall = (text: string) => toolCallStep({ name: 'echo', arguments: { text } });

/**
 * One chat service over `store` that leaves its runs as stored when it shuts down, as a restart does (tests only): its
 * model plays `steps`, its one tool is the echo tool recording into `ran`, and `extra` sets anything else. It is
 * pushed to `services`, for the test to shut down.
 */
export async function startEchoChat(services: ChatService[], store: MemoryStore, steps: ScriptStep[], ran: string[], extra: Partial<ChatServiceOptions> = {}): Promise<ChatService> {
  const model: ChatModel = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [echoTool(ran)], store, suspendRunsOnShutdown: true, ...extra });
  services.push(chat);
  await chat.open();
  return chat;
}

/** Waits until the chat has no going run (tests only). */
export async function runEnded(chat: ChatService, sessionId: string): Promise<void> {
  await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === sessionId)?.activeRunId).toBeNull(), { timeout: 10_000 });
}

/**
 * One server process over `store` (tests only): a chat service whose model plays `steps`, with the tools `tools()`
 * lists at each moment, and a caller of the router for one connection. The service is pushed to `services`, for the
 * test to shut down.
 */
export async function startScriptedProcess(services: ChatService[], store: MemoryStore, steps: ScriptStep[], tools: () => readonly AnyTool[]) {
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel(steps), tools, store, suspendRunsOnShutdown: true });
  services.push(chat);
  await chat.open();
  const api = createCallerFactory(appRouter)({
    services: { chat, catalog: { tools, servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1'),
  });
  return { chat, api };
}
