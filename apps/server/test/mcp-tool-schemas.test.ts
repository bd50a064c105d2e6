import { toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hostileServer } from '../src/mcp/fixtures/test-servers';
import { McpManager } from '../src/mcp/mcp-manager';
import { ended } from './support/always-allow';
import { chatWithMcpServer, putUpOrEnded } from './support/mcp-chat';

// A real stdio MCP server lists tools whose input schemas are written as servers write them: strings with a `format`,
// a `$ref` into `properties`, a subschema with its own `$id`, a required `__proto__`, and `$ref`s to nothing in the
// schema. Airlock must check a call as JSON Schema 2020-12 does before it is put up: `format` as an annotation, each
// `$ref` where it points; and must not offer a tool whose schema no one can check.

vi.setConfig({ testTimeout: 60_000 });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const chatWith = (step: ReturnType<typeof toolCallStep>) => chatWithMcpServer('docs', 'schemas', step, cleanups);

describe('MCP tools whose input schemas are written as servers write them', () => {
  it.each([
    ['docs__invite', { email: 'user@localhost', site: 'http://[::1]:8080/', at: '2016-12-31T23:59:60Z', id: 'order-17' }],
    ['docs__invite', { email: '"first last"@example.com', at: '2026-12-04t10:00:00z' }],
    ['docs__copy', { source: { path: 'a' }, target: { path: 'b' } }],
    ['docs__tag', { label: { tag: 'urgent' } }],
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

  it.each([
    ['docs__invite', { email: 5 }],
    ['docs__invite', { email: 'a@b', site: '' }],
    ['docs__copy', { source: { path: 'a' }, target: { path: 3 } }],
    ['docs__copy', { source: { path: 'a' }, target: {} }],
    ['docs__tag', { label: { tag: 7 } }],
    ['docs__tag', { label: { tag: 'far too long' } }],
    ['docs__keyed', { n: 1 }],
  ])('refuses before anyone is asked a call the schema refuses: %s %j', async (name, given) => {
    const chat = await chatWith(toolCallStep({ name, arguments: given }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await putUpOrEnded(chat, 's');
    expect(chat.pending('s')).toStrictEqual([]);
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(call).toMatchObject({ outcome: 'error', arguments: given });
    expect(call!.result).toContain(`Error: invalid arguments for "${name}"`);
  });

  it('does not offer a tool whose schema refers to another document or to nothing in it, and says so in the log', async () => {
    const warnings: string[] = [];
    const mcp = new McpManager({ servers: new Map([['docs', hostileServer('schemas')]]), logger: { info: () => undefined, warn: (line) => warnings.push(line) } });
    cleanups.push(() => mcp.close());
    await mcp.start();
    expect(mcp.tools().map((tool) => tool.name).sort()).toStrictEqual(['docs__copy', 'docs__invite', 'docs__keyed', 'docs__tag']);
    expect(warnings).toContain(
      'MCP server "docs": left out remote (its input schema refers to "https://schemas.example.test/x.json", which is not in it), dangling (its input schema refers to "#/$defs/Missing", which is not in it)',
    );
  });
});
