import { ChatService, type AirlockStore } from '@airlock/api';
import { ApprovalRegistry, defineTool, type AnyTool } from '@airlock/core';
import { ScriptedModel, type ScriptStep } from '@airlock/core/testing';
import { z } from 'zod';
import { RuleBook } from './rule-book';

/** For tests: a `terminal` that records each command it is given instead of running it. */
export function recordingTerminal(ran: string[]): AnyTool {
  return defineTool({
    name: 'terminal',
    description: 'runs a command',
    parameters: z.object({ command: z.string() }),
    annotations: { executesCode: true },
    execute: async ({ command }) => {
      ran.push(command);
      return `ran ${command}`;
    },
  });
}

/**
 * For tests: a server's services over `store` acting in `workspace`, with its rules, a model scripted by `steps` and
 * a recording terminal. The caller shuts the chat service down.
 */
export async function chatWithRuleBook(store: AirlockStore, workspace: string, steps: ScriptStep[], ran: string[]) {
  const rules = await RuleBook.open({ store, workspace, log: () => undefined });
  const model = new ScriptedModel(steps);
  const tools = [recordingTerminal(ran)];
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, rules });
  await chat.open();
  return { chat, rules, model };
}
