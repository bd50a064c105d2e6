import { ApprovalRegistry, defineTool, runToolLoop, type LoopEvent } from '@airlock/core';
import { collectRun } from '@airlock/core/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OpenAICompatibleModel } from './openai-compatible-model';
import { answeringServer } from './test-support';

/** One call of `shout` whose arguments the server sends as an object (`argumentsJson`, written as is), streamed or whole. */
function answerWith(argumentsJson: string, streamed: boolean): { contentType: string; body: string } {
  const call = `{"index":0,"id":"call_1","type":"function","function":{"name":"shout","arguments":${argumentsJson}}}`;
  if (streamed) {
    const chunk = (delta: string, finish: string | null) => `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":${delta},"finish_reason":${JSON.stringify(finish)}}]}\n\n`;
    return { contentType: 'text/event-stream', body: `${chunk(`{"tool_calls":[${call}]}`, null)}${chunk('{}', 'tool_calls')}data: [DONE]\n\n` };
  }
  const message = `{"role":"assistant","content":null,"tool_calls":[${call}]}`;
  return { contentType: 'application/json', body: `{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":${message},"finish_reason":"tool_calls"}]}` };
}

/** The real loop over the real adapter; every call put up is allowed, as a person would, and each run of the tool kept. */
async function runAgainst(url: string) {
  const ran: unknown[] = [];
  const tool = defineTool<Record<string, unknown>>({
    name: 'shout',
    description: 'Returns the word in capitals.',
    parameters: z.looseObject({ word: z.string() }),
    execute: async (args) => {
      ran.push(args);
      return 'done';
    },
  });
  const registry = new ApprovalRegistry();
  const run = runToolLoop({ model: new OpenAICompatibleModel({ baseURL: url, model: 'm' }), messages: [{ role: 'user', content: 'shout hello' }], tools: [tool], registry, sessionId: 'session-1', maxToolCalls: 1 });
  const { events } = await collectRun(run, (event: LoopEvent) => {
    if (event.type === 'tool-start' && event.awaitingConfirmation) registry.resolve(event.approvalId, 'allow', { sessionId: 'session-1' });
  });
  return { ran, events };
}

describe('OpenAICompatibleModel with arguments sent as an object', () => {
  for (const streamed of [true, false]) {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      it(`refuses, named, a call whose arguments hold a key "${key}" (${streamed ? 'streamed' : 'sent whole'}), never putting it up or running it without that key`, async () => {
        const { contentType, body } = answerWith(`{"word":"hello","${key}":{"word":"rm -rf ~"}}`, streamed);
        await using server = await answeringServer(contentType, body);

        const { ran, events } = await runAgainst(server.url);

        expect(ran).toStrictEqual([]);
        expect(events.filter((event) => event.type === 'tool-start').map((event) => event.awaitingConfirmation)).toStrictEqual([false]);
        const end = events.find((event) => event.type === 'tool-end');
        expect(end).toMatchObject({ outcome: 'error' });
        expect(end?.type === 'tool-end' ? end.result : '').toContain(`it holds a key named "${key}", which is not accepted`);
      });
    }
  }
});
