import { describe, expect, it, vi } from 'vitest';
import { mcpToolCalls } from './support/mcp-chat';

// A real stdio MCP server lists tools whose input schemas refer to a part by where a check came from: 2020-12's
// `$dynamicRef` to a `$dynamicAnchor` and 2019-09's `$recursiveRef`. Airlock must follow one where the part it names is
// the same whichever way a check came, and must not offer a tool whose schema it cannot follow so: never leave one unchecked.

vi.setConfig({ testTimeout: 60_000 });

const calls = mcpToolCalls('docs', 'dynamic');

type Call = [name: string, given: Record<string, unknown>];

describe('an MCP tool whose input schema has a $dynamicRef or a $recursiveRef', () => {
  it.each<Call>(
    ['outline', 'nested'].flatMap((tool): Call[] => [
      [`docs__${tool}`, { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] }],
      [`docs__${tool}`, { name: 'a', children: [] }],
    ]),
  )('puts up, exactly as given, and runs a call the schema accepts: %s %j', async (name, given) => {
    await calls.putsUpAndRuns(name, given);
  });

  it.each<Call>(
    ['outline', 'nested'].flatMap((tool): Call[] => [
      [`docs__${tool}`, { name: 'a', children: [{ name: 'b', children: [{ name: 3 }] }] }],
      [`docs__${tool}`, { name: 'a', children: [{ children: [] }] }],
    ]),
  )('refuses before anyone is asked a call the schema refuses: %s %j', async (name, given) => {
    await calls.refusedBeforeAsked(name, given);
  });

  it('does not offer a tool whose dynamic reference names a part two of its documents declare, and says so in the log', async () => {
    const { tools, warnings } = await calls.listing();
    expect(tools.sort()).toStrictEqual(['docs__nested', 'docs__outline']);
    expect(warnings).toContain(
      'MCP server "docs": left out extended (its input schema has a $dynamicRef Airlock cannot follow), doubly (its input schema has a $recursiveRef Airlock cannot follow)',
    );
  });
});
