import { toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ended } from './support/always-allow';
import { chatWithMcpServer, putUpOrEnded } from './support/mcp-chat';

// A real stdio MCP server lists tools that say one argument needs another: with draft-07's `dependencies`, a list of
// names (`card` needs `billing`) or a schema (`gift` needs a short `note`), with no `$schema` or draft-07's, as many
// servers still write them; and with 2020-12's `dependentRequired` and `dependentSchemas`. Airlock must check a call
// as the draft the schema is written in reads it: `dependencies` is a keyword of draft-07, not of 2020-12.

vi.setConfig({ testTimeout: 60_000 });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const chatWith = (step: ReturnType<typeof toolCallStep>) => chatWithMcpServer('docs', 'dependencies', step, cleanups);

const tools = ['ship', 'ship07', 'pack'];

type Call = [name: string, given: Record<string, unknown>];

describe('an MCP tool whose input schema says one argument needs another', () => {
  it.each<Call>([
    ...tools.flatMap((tool): Call[] => [
      [`docs__${tool}`, { card: '4111', billing: 'home' }],
      [`docs__${tool}`, { gift: true, note: 'for you' }],
      [`docs__${tool}`, { billing: 'home', note: 'no gift, so any length' }],
    ]),
    ['docs__ship2020', { card: '4111' }],
    ['docs__ship2020', { gift: true }],
  ])('puts up, exactly as given, and runs a call the schema accepts: %s %j', async (name, given) => {
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
  });

  it.each<Call>(
    tools.flatMap((tool): Call[] => [
      [`docs__${tool}`, { card: '4111' }],
      [`docs__${tool}`, { gift: true }],
      [`docs__${tool}`, { gift: true, note: 'far too long for a note' }],
    ]),
  )('refuses before anyone is asked a call the schema refuses: %s %j', async (name, given) => {
    const chat = await chatWith(toolCallStep({ name, arguments: given }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await putUpOrEnded(chat, 's');
    expect(chat.pending('s')).toStrictEqual([]);
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(call).toMatchObject({ outcome: 'error', arguments: given });
    expect(call!.result).toContain(`Error: invalid arguments for "${name}"`);
  });
});
