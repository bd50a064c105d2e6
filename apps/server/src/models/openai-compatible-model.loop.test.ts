import { ApprovalRegistry, defineTool, runToolLoop, toolResultText, type LoopEvent } from '@airlock/core';
import { collectRun } from '@airlock/core/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeOpenAIServer } from '../../test/support';
import { OpenAICompatibleModel } from './openai-compatible-model';

function shoutTool() {
  const ran: string[] = [];
  const tool = defineTool<{ word: string }>({
    name: 'shout',
    description: 'Returns the word in capitals.',
    parameters: z.object({ word: z.string() }),
    execute: async ({ word }) => {
      ran.push(word);
      return word.toUpperCase();
    },
  });
  return { tool, ran };
}

/** Answers every tool-start that waits for a decision, the way a client would. */
/** The real loop over the real adapter, asked to shout hello with `tool`. */
function shoutRun(baseURL: string, tool: ReturnType<typeof shoutTool>['tool'], registry: ApprovalRegistry) {
  return runToolLoop({
    model: new OpenAICompatibleModel({ baseURL, model: 'fake-model' }),
    messages: [{ role: 'user', content: 'shout hello' }],
    tools: [tool],
    registry,
    sessionId: 'session-1',
  });
}

function decideWith(registry: ApprovalRegistry, decision: 'allow' | 'deny', reason?: string) {
  return (event: LoopEvent) => {
    if (event.type === 'tool-start' && event.awaitingConfirmation) {
      const result = registry.resolve(event.approvalId, decision, { sessionId: 'session-1', ...(reason === undefined ? {} : { reason }) });
      expect(result.resolved).toBe(true);
    }
  };
}

describe('runToolLoop with OpenAICompatibleModel against an OpenAI-compatible server', () => {
  it('keeps the connection to the model server from one turn to the next', async () => {
    await using fake = await startFakeOpenAIServer();
    fake.enqueue({ toolCalls: [{ id: 'call_1', name: 'shout', arguments: { word: 'hello' } }] }, { text: ['It says ', 'HELLO.'] });
    const registry = new ApprovalRegistry();
    const { tool } = shoutTool();
    const { result } = await collectRun(shoutRun(fake.url, tool, registry), decideWith(registry, 'allow'));
    expect(result.reason).toBe('done');
    expect(fake.requests).toHaveLength(2);
    expect(fake.connections).toBe(1);
  });

  it('runs an allowed native tool call and sends its result back to the model', async () => {
    await using fake = await startFakeOpenAIServer();
    fake.enqueue({ toolCalls: [{ id: 'call_1', name: 'shout', arguments: { word: 'hello' } }] }, { text: ['It says ', 'HELLO.'] });
    const registry = new ApprovalRegistry();
    const { tool, ran } = shoutTool();

    const { events, result } = await collectRun(
      shoutRun(fake.url, tool, registry),
      decideWith(registry, 'allow'),
    );

    expect(ran).toStrictEqual(['hello']);
    expect(result.reason).toBe('done');
    expect(events.filter((event) => event.type === 'tool-end')).toStrictEqual([
      { type: 'tool-end', toolCallId: 'call_1', toolName: 'shout', outcome: 'executed', result: 'HELLO', startedAt: expect.any(Number) },
    ]);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.messages).toStrictEqual([
      { role: 'user', content: 'shout hello' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'shout', arguments: '{"word":"hello"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'HELLO' },
    ]);
    expect(result.messages.at(-1)).toStrictEqual({ role: 'assistant', content: 'It says HELLO.' });
    expect(fake.pending).toBe(0);
  });

  it('does not run a denied call and tells the model the reason in the next request', async () => {
    await using fake = await startFakeOpenAIServer();
    fake.enqueue({ toolCalls: [{ id: 'call_1', name: 'shout', arguments: { word: 'hello' } }] }, { text: 'Understood.' });
    const registry = new ApprovalRegistry();
    const { tool, ran } = shoutTool();

    await collectRun(
      shoutRun(fake.url, tool, registry),
      decideWith(registry, 'deny', 'too loud'),
    );

    expect(ran).toStrictEqual([]);
    const messages = fake.requests[1]?.messages as unknown[];
    expect(messages.at(-1)).toStrictEqual({ role: 'tool', tool_call_id: 'call_1', content: toolResultText.denied('shout', 'too loud') });
  });

  it('ends the run with the model error when the server fails', async () => {
    await using fake = await startFakeOpenAIServer();
    fake.enqueue({ status: 503, errorBody: { error: { message: 'loading model' } } });

    const { result } = await collectRun(
      runToolLoop({
        model: new OpenAICompatibleModel({ baseURL: fake.url, model: 'fake-model', label: 'llama.cpp' }),
        messages: [{ role: 'user', content: 'hi' }],
        tools: [],
        registry: new ApprovalRegistry(),
        sessionId: 'session-1',
      }),
    );

    expect(result.reason).toBe('error');
    expect(result.error).toBe(`llama.cpp: the model server at ${fake.url} answered HTTP 503: loading model`);
  });

  it('ends a run whose answer was cut at the length limit with an error, the text kept and its call not run', async () => {
    await using fake = await startFakeOpenAIServer();
    fake.enqueue({ text: 'I will shout', toolCalls: [{ id: 'call_1', name: 'shout', arguments: '{"word":"hel' }], finishReason: 'length' });
    const registry = new ApprovalRegistry();
    const { tool, ran } = shoutTool();

    const { events, result } = await collectRun(shoutRun(fake.url, tool, registry));

    expect(ran).toStrictEqual([]);
    expect(events.filter((event) => event.type === 'text-delta' || event.type === 'tool-start' || event.type === 'run-end')).toStrictEqual([
      { type: 'text-delta', text: 'I will shout' },
      { type: 'run-end', runId: expect.any(String), reason: 'error', error: expect.stringMatching(/cut the answer off at its length limit .* so it is incomplete/) },
    ]);
    expect(result.messages.at(-1)).toStrictEqual({ role: 'assistant', content: 'I will shout' });
  });
});
