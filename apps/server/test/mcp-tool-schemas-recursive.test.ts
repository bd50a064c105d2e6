import { toolCallStep } from '@airlock/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { mcpToolCalls, putUpOrEnded } from './support/mcp-chat';

// A real stdio MCP server lists `tree`, whose input schema is recursive: a `Node` of its `$defs` holds `children`, each
// a `$ref` to `Node`, and a `Label` whose `parts` are `Label`s. Airlock must check a call against it as deep as the call goes, with the thread's stack intact
// whatever the call, and must not offer a tool whose schema loops on itself or would take a check more ways at each level.

vi.setConfig({ testTimeout: 60_000 });

const calls = mcpToolCalls('docs', 'recursive');

/** A chain of `levels` nodes, the last named `leaf`. */
function chain(levels: number, leaf: unknown = 'leaf'): Record<string, unknown> {
  let node: Record<string, unknown> = { name: leaf };
  for (let level = 1; level < levels; level++) node = { name: `n${level}`, children: [node] };
  return node;
}

describe('an MCP tool whose input schema is recursive', () => {
  it.each([
    ['three levels', { root: { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }, { name: 'd', children: [] }] } }],
    ['a hundred levels', { root: chain(100) }],
    ['labels of labels in it', { root: { name: 'a', label: { text: 'x', parts: [{ parts: [{ text: 'y' }] }] }, children: [{ name: 'b', label: {} }] } }],
  ])('puts up, exactly as given, and runs a call the schema accepts: %s', async (_, given) => {
    await calls.putsUpAndRuns('docs__tree', given);
  });

  it.each([
    ['a name of the wrong type three levels down', { root: { name: 'a', children: [{ name: 'b', children: [{ name: 3 }] }] } }],
    ['a name too long fifty levels down', { root: chain(50, 'much too long for a name') }],
    ['a name no node declares', { root: { name: 'a', children: [{ name: 'b', colour: 'red' }] } }],
    ['a node without its name', { root: { name: 'a', children: [{ children: [] }] } }],
    ['a label of the wrong type in a label', { root: { name: 'a', children: [{ name: 'b', label: { parts: [{ text: 5 }] } }] } }],
  ])('refuses before anyone is asked a call the schema refuses: %s', async (_, given) => {
    await calls.refusedBeforeAsked('docs__tree', given);
  });

  it('refuses before anyone is asked a call nested deeper than it can check, and goes on', async () => {
    // 401 levels of arrays and objects: past what the check of this schema takes (256), within what a call may nest (512).
    const given = { root: chain(200) };
    const chat = await calls.chatWith(toolCallStep({ name: 'docs__tree', arguments: given }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await putUpOrEnded(chat, 's');
    expect(chat.pending('s')).toStrictEqual([]);
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(call).toMatchObject({ outcome: 'error' });
    expect(call!.result).toContain('Error: invalid arguments for "docs__tree"');
    expect(call!.result).toContain('nested deeper than 256 levels');
  });

  it('does not offer a tool whose schema loops on itself or refers to itself in two ways at one value, and says so in the log', async () => {
    const { tools, warnings } = await calls.listing();
    expect(tools).toStrictEqual(['docs__tree']);
    expect(warnings).toContain(
      'MCP server "docs": left out loop (its input schema refers to itself at the same value), twice (its input schema refers to itself in more than one way at one value)',
    );
  });
});
