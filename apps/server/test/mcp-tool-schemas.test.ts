import { describe, expect, it, vi } from 'vitest';
import { mcpToolCalls } from './support/mcp-chat';

// A real stdio MCP server lists tools whose input schemas are written as servers write them: strings with a `format`,
// a `$ref` into `properties`, a subschema with its own `$id`, a required `__proto__`, and `$ref`s to nothing in the
// schema. Airlock must check a call as JSON Schema 2020-12 does before it is put up: `format` as an annotation, each
// `$ref` where it points; and must not offer a tool whose schema no one can check.

vi.setConfig({ testTimeout: 60_000 });

const calls = mcpToolCalls('docs', 'schemas');

describe('MCP tools whose input schemas are written as servers write them', () => {
  it.each([
    ['docs__invite', { email: 'user@localhost', site: 'http://[::1]:8080/', at: '2016-12-31T23:59:60Z', id: 'order-17' }],
    ['docs__invite', { email: '"first last"@example.com', at: '2026-12-04t10:00:00z' }],
    ['docs__copy', { source: { path: 'a' }, target: { path: 'b' } }],
    ['docs__tag', { label: { tag: 'urgent' } }],
  ])('puts up, exactly as given, and runs a call the schema accepts: %s %j', async (name, given) => {
    await calls.putsUpAndRuns(name, given);
  });

  it.each([
    ['docs__invite', { email: 5 }],
    ['docs__invite', { email: 'a@b', site: '' }],
    ['docs__copy', { source: { path: 'a' }, target: { path: 3 } }],
    ['docs__copy', { source: { path: 'a' }, target: {} }],
    ['docs__tag', { label: { tag: 7 } }],
    ['docs__tag', { label: { tag: 'far too long' } }],
    ['docs__keyed', { n: 1 }],
  ])('refuses before anyone is asked a call the schema refuses: %s %j', async (name, given) => {
    await calls.refusedBeforeAsked(name, given);
  });

  it('does not offer a tool whose schema refers to another document or to nothing in it, and says so in the log', async () => {
    const { tools, warnings } = await calls.listing();
    expect(tools.sort()).toStrictEqual(['docs__copy', 'docs__invite', 'docs__keyed', 'docs__tag']);
    expect(warnings).toContain(
      'MCP server "docs": left out remote (its input schema refers to "https://schemas.example.test/x.json", which is not in it), dangling (its input schema refers to "#/$defs/Missing", which is not in it)',
    );
  });
});
