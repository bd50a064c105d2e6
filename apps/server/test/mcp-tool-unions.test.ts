import { describe, it, vi } from 'vitest';
import { mcpToolCalls } from './support/mcp-chat';

// A real stdio MCP server lists tools whose input schema is a union of branches told apart by `kind`, each branch with
// `properties`, `required` and a `const` but no `type` of its own, as generated schemas (pydantic's discriminated
// unions, TypeScript-to-schema tools) write them. JSON Schema applies each branch to the object: the check before a
// call is put up, and again before it runs, must do the same.

vi.setConfig({ testTimeout: 60_000 });

const calls = mcpToolCalls('docs', 'unions');

describe.each(['open', 'send'])('an MCP tool whose input schema is a union of untyped branches (%s)', (tool) => {
  it.each([{ kind: 'file', path: 'notes.txt' }, { kind: 'url', url: 'https://example.test/' }])('puts up and runs a call that fits one branch: %j', async (given) => {
    await calls.putsUpAndRuns(`docs__${tool}`, given);
  });

  it.each([{ kind: 'file' }, { kind: 'url', path: 'notes.txt' }, { kind: 'ftp', path: 'notes.txt', url: 'ftp://x' }])(
    'refuses before anyone is asked a call no branch accepts: %j',
    async (given) => {
      await calls.refusedBeforeAsked(`docs__${tool}`, given);
    },
  );
});
