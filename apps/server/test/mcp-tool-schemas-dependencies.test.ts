import { describe, it, vi } from 'vitest';
import { mcpToolCalls } from './support/mcp-chat';

// A real stdio MCP server lists tools that say one argument needs another: with draft-07's `dependencies`, a list of
// names (`card` needs `billing`) or a schema (`gift` needs a short `note`), with no `$schema` or draft-07's, as many
// servers still write them; and with 2020-12's `dependentRequired` and `dependentSchemas`. Airlock must check a call
// as the draft the schema is written in reads it: `dependencies` is a keyword of draft-07, not of 2020-12.

vi.setConfig({ testTimeout: 60_000 });

const calls = mcpToolCalls('docs', 'dependencies');

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
    await calls.putsUpAndRuns(name, given);
  });

  it.each<Call>(
    tools.flatMap((tool): Call[] => [
      [`docs__${tool}`, { card: '4111' }],
      [`docs__${tool}`, { gift: true }],
      [`docs__${tool}`, { gift: true, note: 'far too long for a note' }],
    ]),
  )('refuses before anyone is asked a call the schema refuses: %s %j', async (name, given) => {
    await calls.refusedBeforeAsked(name, given);
  });
});
