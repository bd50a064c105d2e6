import { describe, it, vi } from 'vitest';
import { mcpToolCalls } from './support/mcp-chat';

// A real stdio MCP server lists `tally`, whose input schema holds one keyword zod cannot express (a `not` on `label`)
// beside an integer `n` and `additionalProperties: false`, and `pick`, whose `oneOf` branches are told apart only by
// the `pattern`s Airlock leaves out. The one keyword must not leave the rest unchecked, and what Airlock leaves out
// must not make it refuse a call the schema accepts.

vi.setConfig({ testTimeout: 60_000 });

const calls = mcpToolCalls('docs', 'unions');

describe('an MCP tool whose input schema holds a keyword Airlock does not check', () => {
  it.each([
    ['docs__tally', { n: 'oops', extra: 1 }],
    ['docs__tally', { n: 2, extra: 1 }],
    ['docs__tally', { label: 'x' }],
  ])('refuses before anyone is asked a call the rest of the schema refuses: %s %j', async (name, given) => {
    await calls.refusedBeforeAsked(name, given);
  });

  it.each([
    ['docs__tally', { n: 2, label: 'apples' }],
    ['docs__pick', { choice: 'apple' }],
    ['docs__pick', { choice: 'banana' }],
  ])('puts up and runs a call the schema accepts: %s %j', async (name, given) => {
    await calls.putsUpAndRuns(name, given);
  });
});
