import { toolResultText, type ChatMessage, type ModelPart, type ToolSpec } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { parseDemoIntent } from './demo-intent';
import { DemoModel } from './demo-model';

const spec = (name: string, properties: Record<string, unknown> = {}): ToolSpec => ({
  name,
  description: name,
  parameters: { type: 'object', properties },
});
const ALL_TOOLS = ['list_directory', 'terminal', 'read_file', 'web_fetch', 'write_file'].map((name) => spec(name));

async function run(messages: ChatMessage[], tools: readonly ToolSpec[] = ALL_TOOLS, signal = new AbortController().signal): Promise<ModelPart[]> {
  const parts: ModelPart[] = [];
  for await (const part of new DemoModel({ chunkDelayMs: 0 }).stream({ messages, tools }, signal)) parts.push(part);
  return parts;
}

const text = (parts: ModelPart[]) => parts.flatMap((part) => (part.type === 'text-delta' ? [part.text] : [])).join('');
const calls = (parts: ModelPart[]) => parts.filter((part) => part.type === 'tool-call');
const ask = (content: string): ChatMessage[] => [{ role: 'user', content }];

describe('DemoModel', () => {
  const phrases: [string, string, Record<string, string>][] = [
    ['list the files', 'list_directory', { path: '.' }],
    ['ls', 'list_directory', { path: '.' }],
    ['Please show me the files in src', 'list_directory', { path: 'src' }],
    ['run `ls -la`', 'terminal', { command: 'ls -la' }],
    ['run echo hello world', 'terminal', { command: 'echo hello world' }],
    ['read README.md', 'read_file', { path: 'README.md' }],
    ['show src/index.ts.', 'read_file', { path: 'src/index.ts' }],
    ['fetch https://example.com/page.', 'web_fetch', { url: 'https://example.com/page' }],
    ['write "hello there" to notes.txt', 'write_file', { path: 'notes.txt', content: 'hello there' }],
  ];

  it.each(phrases)('turns "%s" into a native %s call when that tool is offered', async (phrase, tool, args) => {
    const parts = await run(ask(phrase));

    expect(calls(parts)).toStrictEqual([{ type: 'tool-call', id: '', name: tool, arguments: args }]);
    expect(parts.at(-1)).toStrictEqual({ type: 'finish', reason: 'tool-calls' });
  });

  it.each(phrases)('does not call a tool for "%s" when %s is not offered, and says so', async (phrase, tool) => {
    const parts = await run(
      ask(phrase),
      ALL_TOOLS.filter((offered) => offered.name !== tool),
    );

    expect(calls(parts)).toStrictEqual([]);
    expect(text(parts)).toContain(`\`${tool}\` tool for this, but it is not enabled`);
    expect(parts.at(-1)).toStrictEqual({ type: 'finish', reason: 'stop' });
  });

  it('uses the argument name the offered write tool declares', async () => {
    const parts = await run(ask('write hi to a.txt'), [spec('write_file', { path: {}, text: {} })]);

    expect(calls(parts)).toStrictEqual([{ type: 'tool-call', id: '', name: 'write_file', arguments: { path: 'a.txt', text: 'hi' } }]);
  });

  it('streams a short reasoning delta, then the text in several small deltas', async () => {
    const parts = await run(ask('hello, who are you?'));

    expect(parts[0]).toStrictEqual({ type: 'reasoning-delta', text: expect.stringContaining('explain what the demo can do') });
    const deltas = parts.filter((part) => part.type === 'text-delta');
    expect(deltas.length).toBeGreaterThan(10);
    expect(text(parts)).toContain('I am the demo model');
    expect(text(parts)).toContain('AIRLOCK_MODEL_URL');
    expect(text(parts)).toContain('Tools enabled now: list_directory, terminal, read_file, web_fetch, write_file.');
    expect(calls(parts)).toStrictEqual([]);
  });

  const afterCall = (toolName: string, content: string): ChatMessage[] => [
    ...ask('list the files'),
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: toolName, arguments: { path: '.' } }] },
    { role: 'tool', toolCallId: 'c1', toolName, content },
  ];

  it('summarises a tool result with its first lines instead of calling again', async () => {
    const listing = Array.from({ length: 15 }, (_, index) => `file-${index + 1}.txt`).join('\n');

    const parts = await run(afterCall('list_directory', listing));

    expect(calls(parts)).toStrictEqual([]);
    expect(text(parts)).toBe(
      `\`list_directory\` returned 15 lines:\n\`\`\`\n${listing.split('\n').slice(0, 12).join('\n')}\n\`\`\`\n…and 3 more lines.`,
    );
    expect(parts.at(-1)).toStrictEqual({ type: 'finish', reason: 'stop' });
  });

  it('quotes the reason of a denied call', async () => {
    const parts = await run(afterCall('terminal', toolResultText.denied('terminal', 'not on my laptop')));

    expect(text(parts)).toBe(
      'The call to `terminal` was denied, so it did not run. The reason given: "not on my laptop". Tell me what you would like instead.',
    );
  });

  it('says when a call was denied without a reason, timed out or failed', async () => {
    expect(text(await run(afterCall('terminal', toolResultText.denied('terminal'))))).toContain('was denied, so it did not run. No reason was given.');
    expect(text(await run(afterCall('terminal', toolResultText.timedOut('terminal'))))).toBe(
      'Nobody decided on the call to `terminal` before the approval timed out, so it did not run.',
    );
    expect(text(await run(afterCall('read_file', 'Error: no such file: nope.txt\nmore detail')))).toBe(
      'The call to `read_file` did not succeed: no such file: nope.txt',
    );
  });

  it('keeps quoted output from closing its code fence', async () => {
    const parts = await run(afterCall('read_file', 'a\n```\nb'));

    expect(text(parts)).toBe('`read_file` returned 3 lines:\n````\na\n```\nb\n````');
  });

  it('stops streaming when the signal aborts', async () => {
    const controller = new AbortController();
    const parts: ModelPart[] = [];
    for await (const part of new DemoModel({ chunkDelayMs: 0 }).stream({ messages: ask('hello'), tools: [] }, controller.signal)) {
      parts.push(part);
      if (parts.length === 3) controller.abort();
    }

    expect(parts).toHaveLength(3);
  });
});

describe('parseDemoIntent', () => {
  it('leaves ordinary conversation alone', () => {
    expect(parseDemoIntent('what can you do?')).toBeUndefined();
    expect(parseDemoIntent('show me what you can do')).toBeUndefined();
    expect(parseDemoIntent('')).toBeUndefined();
    expect(parseDemoIntent(`run ${'x'.repeat(5000)}`)).toBeUndefined();
  });
});
