import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  AnswerLimitError,
  MalformedChunkError,
  MAX_STREAMED_TOOL_CALLS,
  MAX_TOOL_ARGUMENT_CHARS,
  MAX_TOOL_CALL_ID_CHARS,
  MAX_TOOL_NAME_CHARS,
  MAX_TURN_ARGUMENT_CHARS,
  MAX_TURN_TEXT_CHARS,
  OpenAIChunkReader,
  WITHHELD_REASONING,
} from './openai-chunk-reader';

const delta = (value: Record<string, unknown>, finishReason: string | null = null) => ({ choices: [{ index: 0, delta: value, finish_reason: finishReason }] });

describe('OpenAIChunkReader', () => {
  it('reads the reasoning field some servers use instead of reasoning_content, once when both are sent', () => {
    const reader = new OpenAIChunkReader();

    expect(reader.push(delta({ reasoning: 'a' }))).toStrictEqual([{ type: 'reasoning-delta', text: 'a' }]);
    expect(reader.push(delta({ reasoning: 'b', reasoning_content: 'b' }))).toStrictEqual([{ type: 'reasoning-delta', text: 'b' }]);
  });

  it('reads the reasoning under either name when the other is sent empty, and never as the answer', () => {
    const reader = new OpenAIChunkReader();

    expect(reader.push(delta({ reasoning_content: '', reasoning: 'The user wants a listing.' }))).toStrictEqual([{ type: 'reasoning-delta', text: 'The user wants a listing.' }]);
    expect(reader.push(delta({ reasoning_content: 'Run ls.', reasoning: '' }))).toStrictEqual([{ type: 'reasoning-delta', text: 'Run ls.' }]);
    expect(reader.push(delta({ reasoning_content: '', reasoning: '', content: 'Here.' }, 'stop'))).toStrictEqual([{ type: 'text-delta', text: 'Here.' }]);
    expect(reader.finish()).toStrictEqual([{ type: 'finish', reason: 'stop' }]);
  });

  it('reads thinking_blocks sent beside reasoning_content with the same thinking once, and redacted ones as the marker once a turn', () => {
    const reader = new OpenAIChunkReader();
    const block = (thinking: string, signature = '') => ({ type: 'thinking', thinking, signature });

    expect(reader.push(delta({ reasoning_content: 'a', thinking_blocks: [block('a')] }))).toStrictEqual([{ type: 'reasoning-delta', text: 'a' }]);
    expect(reader.push(delta({ reasoning: 'b', thinking_blocks: [block('b')] }))).toStrictEqual([{ type: 'reasoning-delta', text: 'b' }]);
    expect(reader.push(delta({ thinking_blocks: [block('c'), block('', 'sig'), { type: 'thinking', signature: 'sig' }] }))).toStrictEqual([{ type: 'reasoning-delta', text: 'c' }]);
    // A block holding only its signature, beside empty reasoning_content, is nothing to show.
    expect(reader.push(delta({ reasoning_content: '', thinking_blocks: [block('', 'sig')] }))).toStrictEqual([]);
    expect(reader.push(delta({ thinking_blocks: [{ type: 'redacted_thinking', data: 'secret' }] }))).toStrictEqual([{ type: 'reasoning-delta', text: WITHHELD_REASONING }]);
    expect(reader.push(delta({ thinking_blocks: [{ type: 'redacted_thinking', data: 'secret' }] }))).toStrictEqual([]);
    expect(reader.progress).toBe(4);
  });

  it('reads a function_call sent beside the same call in tool_calls once, as the tool call', () => {
    const reader = new OpenAIChunkReader();
    const call = { name: 'read_file', arguments: '{"path":"a.txt"}' };
    reader.push(delta({ function_call: call, tool_calls: [{ index: 0, id: 'c1', type: 'function', function: call }] }, 'tool_calls'));

    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a.txt"}' },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it("reads a call's whole arguments once however often a server resends them after it, not once per piece", () => {
    const reader = new OpenAIChunkReader();
    // About 100 KB of duplicate keys that read as {"command":"ls"}, then the same arguments resent 500 times.
    const held = `{${'"command":"ls",'.repeat(6_000)}"command":"ls"}`;
    reader.push(delta({ tool_calls: [{ type: 'function', function: { name: 'terminal', arguments: held } }] }));
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (let i = 0; i < 500; i++) reader.push(delta({ tool_calls: [{ function: { arguments: '{"command":"ls"}' } }] }));
      // Parsed again for each piece, the held text cost 500 × 100 KB: a megabyte of it held the server a minute.
      const parsedChars = parse.mock.calls.reduce((sum, [text]) => sum + String(text).length, 0);
      expect(parsedChars).toBeLessThan(2 * held.length + 500 * 100);
    } finally {
      parse.mockRestore();
    }
    reader.push(delta({}, 'tool_calls'));
    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: expect.any(String), name: 'terminal', arguments: held },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('keeps the first id and name when a server repeats them in every piece', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'terminal', arguments: '{"command":' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'terminal', arguments: '"ls"}' } }] }, 'tool_calls'));

    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: 'c1', name: 'terminal', arguments: '{"command":"ls"}' },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('assembles calls from servers that omit the index: a new id starts a new call', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ tool_calls: [{ id: 'c1', function: { name: 'read_file', arguments: '{"path":' } }] }));
    reader.push(delta({ tool_calls: [{ function: { arguments: '"a"}' } }] }));
    reader.push(delta({ tool_calls: [{ id: 'c2', function: { name: 'read_file', arguments: { path: 'b' } } }] }, 'stop'));

    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' },
      { type: 'tool-call', id: 'c2', name: 'read_file', arguments: { path: 'b' } },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('continues a call without an index or an id whose name a server repeats in each piece', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ tool_calls: [{ function: { name: 'terminal', arguments: '{"command":' } }] }));
    reader.push(delta({ tool_calls: [{ function: { name: 'terminal', arguments: '"ls"}' } }] }, 'tool_calls'));

    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: '', name: 'terminal', arguments: '{"command":"ls"}' },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('starts a new call at a new id sent at an index a call already holds, as servers numbering every call 0 send them', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file', arguments: '{"path":' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, function: { arguments: '"a"}' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c2', function: { name: 'write_file', arguments: '{"path":"b",' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, function: { arguments: '"text":"x"}' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c3', function: { name: 'terminal', arguments: { command: 'ls' } } }] }, 'tool_calls'));

    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' },
      { type: 'tool-call', id: 'c2', name: 'write_file', arguments: '{"path":"b","text":"x"}' },
      { type: 'tool-call', id: 'c3', name: 'terminal', arguments: { command: 'ls' } },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('starts a new call at a new id sent alone at the index of a call whose arguments are not yet whole, its name coming after', () => {
    const listing = { type: 'tool-call', id: 'c1', name: 'list_directory', arguments: '' };
    const reading = { type: 'tool-call', id: 'c2', name: 'read_file', arguments: '{"path":"a"}' };
    const finish = { type: 'finish', reason: 'tool-calls' };
    // Every call at index 0: list_directory sent with no arguments, then read_file's id alone (or over empty or blank text), then its name.
    for (const opening of [{ index: 0, id: 'c2', type: 'function' }, ...['', ' '].map((text) => ({ index: 0, id: 'c2', type: 'function', function: { arguments: text } }))]) {
      const reader = new OpenAIChunkReader();
      reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'list_directory', arguments: '' } }] }));
      const before = reader.progress;
      reader.push(delta({ tool_calls: [opening] }));
      // An id alone adds nothing yet: a server sending ids alone makes no progress.
      expect(reader.progress).toBe(before);
      reader.push(delta({ tool_calls: [{ index: 0, function: { name: 'read_file', arguments: '' } }] }));
      reader.push(delta({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }));
      reader.push(delta({ tool_calls: [{ index: 0, function: { arguments: '"a"}' } }] }, 'tool_calls'));
      expect(reader.finish()).toStrictEqual([listing, reading, finish]);
    }

    // Its name sent with the id again, after a call cut short.
    const cut = new OpenAIChunkReader();
    cut.push(delta({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'terminal', arguments: '{"command":' } }] }));
    cut.push(delta({ tool_calls: [{ index: 0, id: 'c2' }] }));
    cut.push(delta({ tool_calls: [{ index: 0, id: 'c2', function: { name: 'read_file', arguments: '{"path":"a"}' } }] }, 'tool_calls'));
    expect(cut.finish()).toStrictEqual([{ type: 'tool-call', id: 'c1', name: 'terminal', arguments: '{"command":' }, reading, finish]);

    // Without an index alike.
    const unindexed = new OpenAIChunkReader();
    unindexed.push(delta({ tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_directory', arguments: '' } }] }));
    unindexed.push(delta({ tool_calls: [{ id: 'c2', type: 'function' }] }));
    unindexed.push(delta({ tool_calls: [{ function: { name: 'read_file', arguments: '{"path":"a"}' } }] }, 'tool_calls'));
    expect(unindexed.finish()).toStrictEqual([listing, reading, finish]);
  });

  it('keeps a call whose later pieces carry another id, that id first sent over blank text, as one call', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file', arguments: '' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1-more', function: { arguments: '' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1-more', function: { arguments: '{"path":' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1-more', function: { arguments: '"a"}' } }] }, 'tool_calls'));

    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('ends the turn past the calls a turn may hold when every call at one index is opened by its id alone', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ tool_calls: [{ index: 0, id: 'k0', function: { name: 'list_directory', arguments: '' } }] }));
    for (let n = 1; n < MAX_STREAMED_TOOL_CALLS; n++) {
      reader.push(delta({ tool_calls: [{ index: 0, id: `k${n}` }] }));
      reader.push(delta({ tool_calls: [{ index: 0, function: { name: 'list_directory', arguments: '' } }] }));
    }
    expect(reader.finish()).toHaveLength(MAX_STREAMED_TOOL_CALLS + 1);

    reader.push(delta({ tool_calls: [{ index: 0, id: 'one-more' }] }));
    expect(() => reader.push(delta({ tool_calls: [{ index: 0, function: { name: 'list_directory', arguments: '' } }] }))).toThrow(
      new AnswerLimitError(`more than ${MAX_STREAMED_TOOL_CALLS} tool calls in one turn`),
    );
  });

  it('keeps an id sent alone and then replaced by another id alone to its own call, listed where its id came, the pieces with no id after it its own', () => {
    const readFile = { type: 'tool-call', id: 'a', name: 'read_file', arguments: '{"path":"x"}' };
    const terminal = { type: 'tool-call', id: 'b', name: 'terminal', arguments: '{"command":"ls"}' };
    const finish = { type: 'finish', reason: 'tool-calls' };
    const read = (pieces: Record<string, unknown>[]) => {
      const reader = new OpenAIChunkReader();
      for (const piece of pieces) reader.push(delta({ tool_calls: [piece] }));
      return reader.finish();
    };

    // a's id alone, then b's, then each call opened by its id, at index 0 or without an index.
    expect(read([{ index: 0, id: 'a' }, { index: 0, id: 'b' }, { index: 0, id: 'a', function: { name: 'read_file', arguments: '{"path":"x"}' } }, { index: 0, id: 'b', function: { name: 'terminal', arguments: '{"command":"ls"}' } }])).toStrictEqual([readFile, terminal, finish]);
    expect(read([{ id: 'a' }, { id: 'b' }, { id: 'a', function: { name: 'read_file', arguments: '{"path":"x"}' } }, { id: 'b', function: { name: 'terminal', arguments: '{"command":"ls"}' } }])).toStrictEqual([readFile, terminal, finish]);
    // Each call's name with its id, its arguments after it with no id: they are that call's, not joined to a's.
    expect(
      read([
        { index: 0, id: 'a' },
        { index: 0, id: 'b' },
        { index: 0, id: 'a', function: { name: 'read_file' } },
        { index: 0, function: { arguments: '{"path":"x"}' } },
        { index: 0, id: 'b', function: { name: 'terminal' } },
        { index: 0, function: { arguments: '{"command":"ls"}' } },
      ]),
    ).toStrictEqual([readFile, terminal, finish]);
    // b's call opened with no id, then a piece with a's id: a's own, not joined to b's open text.
    expect(read([{ index: 0, id: 'a' }, { index: 0, id: 'b' }, { index: 0, function: { name: 'read_file', arguments: '{"path":' } }, { index: 0, id: 'a', function: { arguments: '"x"}' } }])).toStrictEqual([
      { type: 'tool-call', id: 'b', name: 'read_file', arguments: '{"path":' },
      { type: 'tool-call', id: 'a', name: '', arguments: '"x"}' },
      finish,
    ]);
    // Only the latest id replaced is kept, so ids alone hold a place each: a, replaced twice, is forgotten, and its call, its own still, comes after b's.
    expect(
      read([
        ...['a', 'b', 'c'].map((id) => ({ index: 0, id })),
        ...['a', 'b', 'c'].flatMap((id) => [{ index: 0, id, function: { name: `${id}_tool` } }, { index: 0, function: { arguments: `{"${id}":1}` } }]),
      ]),
    ).toStrictEqual([
      { type: 'tool-call', id: 'b', name: 'b_tool', arguments: '{"b":1}' },
      { type: 'tool-call', id: 'a', name: 'a_tool', arguments: '{"a":1}' },
      { type: 'tool-call', id: 'c', name: 'c_tool', arguments: '{"c":1}' },
      finish,
    ]);
  });

  it('keeps an id set aside without an index, where a call opened with no id took the id that replaced it, to the pieces carrying it, each call in the order the calls came', () => {
    const read = (pieces: Record<string, unknown>[]) => {
      const reader = new OpenAIChunkReader();
      for (const piece of pieces) reader.push(delta({ tool_calls: [piece] }));
      return reader.finish();
    };
    const readFile = { type: 'tool-call', id: 'c0', name: 'read_file', arguments: '{"path":"a"}' };
    const build = { type: 'tool-call', id: 'c2', name: 'terminal', arguments: '{"command":"rm -rf build"}' };
    const finish = { type: 'finish', reason: 'tool-calls' };
    // c2's id alone, then c0's, then c0's call with no id: c2 is set aside for its own call, sent last.
    const opening = [{ id: 'c2' }, { id: 'c0' }, { function: { name: 'read_file', arguments: '{"path":"a"}' } }];
    const ls = { function: { name: 'terminal', arguments: { command: 'ls' } } };
    const own = { id: 'c2', function: { name: 'terminal', arguments: '{"command":"rm -rf build"}' } };

    // A call sent with no id, after c1's id alone or with no id before it, does not take c2's.
    expect(read([...opening, { id: 'c1' }, ls, own])).toStrictEqual([readFile, { type: 'tool-call', id: 'c1', name: 'terminal', arguments: { command: 'ls' } }, build, finish]);
    expect(read([...opening, ls, own])).toStrictEqual([readFile, { type: 'tool-call', id: '', name: 'terminal', arguments: { command: 'ls' } }, build, finish]);
    // Its own call of another tool is its own, not a name changed mid-call.
    expect(read([...opening, ls, { id: 'c2', function: { name: 'write_file', arguments: '{"path":"b"}' } }])).toStrictEqual([
      readFile,
      { type: 'tool-call', id: '', name: 'terminal', arguments: { command: 'ls' } },
      { type: 'tool-call', id: 'c2', name: 'write_file', arguments: '{"path":"b"}' },
      finish,
    ]);
  });

  it('keeps each call sent with no id, its later pieces carrying one id for every call, without an index, to its own arguments', () => {
    const read = (args: (text: string) => string | Record<string, unknown>) => {
      const reader = new OpenAIChunkReader();
      // An id alone, then c's id alone before each call, each call's name with no id and its arguments with c-more.
      const call = (name: string, text: string) => [{ id: 'c' }, { function: { name, arguments: '' } }, { id: 'c-more', function: { arguments: args(text) } }];
      const pieces = [{ id: 'x0' }, ...call('write_file', '{"path":"b"}'), ...call('read_file', '{"path":"a"}'), ...call('terminal', '{"command":"rm -rf build"}')];
      for (const piece of pieces) reader.push(delta({ tool_calls: [piece] }));
      return reader.finish().map((part) => (part.type === 'tool-call' ? [part.name, part.arguments] : part.type));
    };

    expect(read((text) => text)).toStrictEqual([
      ['write_file', '{"path":"b"}'],
      ['read_file', '{"path":"a"}'],
      ['terminal', '{"command":"rm -rf build"}'],
      'finish',
    ]);
    expect(read((text) => JSON.parse(text) as Record<string, unknown>)).toStrictEqual([
      ['write_file', { path: 'b' }],
      ['read_file', { path: 'a' }],
      ['terminal', { command: 'rm -rf build' }],
      'finish',
    ]);
  });

  it('grows the name of a call opened under an id sent alone without an index, before its arguments, from a piece with another id: no call of part of a name', () => {
    const reader = new OpenAIChunkReader();
    const pieces = [
      { function: { name: 'ter', arguments: '' } },
      { id: 'x1', function: { name: 'terminal' } },
      { id: 'x2', function: { arguments: '{"command":"ls"}' } },
      { id: 'x3' },
      { function: { name: 'termina', arguments: '' } },
      { id: 'x4', function: { name: 'terminal' } },
      { id: 'x5', function: { arguments: '{"command":"pwd"}' } },
    ];
    for (const piece of pieces) reader.push(delta({ tool_calls: [piece] }));

    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: 'x1', name: 'terminal', arguments: '{"command":"ls"}' },
      { type: 'tool-call', id: 'x3', name: 'terminal', arguments: '{"command":"pwd"}' },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('keeps arguments sent whole when a later piece of the call brings empty or blank text, as a server repeating a call sends it', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'terminal', arguments: { command: 'ls -la' } } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, function: { arguments: '' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'terminal', arguments: ' ' } }] }, 'tool_calls'));

    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: 'c1', name: 'terminal', arguments: { command: 'ls -la' } },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('keeps a piece with another id and no name in the call at its index until that call has whole arguments', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file', arguments: '' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1-more', function: { arguments: '{"path":"a"}' } }] }));
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c2', function: { arguments: '{"path":"b"}' } }] }, 'tool_calls'));

    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' },
      { type: 'tool-call', id: 'c2', name: '', arguments: '{"path":"b"}' },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('keeps a piece without an index, with another id and no name, in the last call until that call has whole arguments', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ tool_calls: [{ id: 'c1', function: { name: 'read_file', arguments: '' } }] }));
    reader.push(delta({ tool_calls: [{ id: 'c1-more', function: { arguments: '{"path":' } }] }));
    reader.push(delta({ tool_calls: [{ id: 'c1-more', function: { arguments: '"a"}' } }] }));
    reader.push(delta({ tool_calls: [{ id: 'c2', function: { arguments: '{"path":"b"}' } }] }, 'tool_calls'));

    expect(reader.finish()).toStrictEqual([
      { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' },
      { type: 'tool-call', id: 'c2', name: '', arguments: '{"path":"b"}' },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('keeps blank argument pieces carrying another id in the call, as a tokenizer sends a run of spaces, at an index or without one', () => {
    // A hosted server's later pieces each carry another id, and a run of spaces is a token of its own.
    const args = '{"path":"a.py","content":"def f():\\n    return  1\\n"}';
    const tokens = ['{"path":"a.py","content":"def', ' ', 'f():\\n', '    ', 'return', '  ', '1\\n"}'];
    for (const at of [{ index: 0 }, {}]) {
      const reader = new OpenAIChunkReader();
      reader.push(delta({ tool_calls: [{ ...at, id: 'c1', type: 'function', function: { name: 'write_file', arguments: '' } }] }));
      for (const token of tokens) reader.push(delta({ tool_calls: [{ ...at, id: 'c1-more', function: { arguments: token } }] }));

      expect(reader.finish()).toStrictEqual([
        { type: 'tool-call', id: 'c1', name: 'write_file', arguments: args },
        { type: 'finish', reason: 'tool-calls' },
      ]);
    }

    // The id over blank text is still set aside: a name following it opens the next call under it.
    for (const at of [{ index: 0 }, {}]) {
      const reader = new OpenAIChunkReader();
      reader.push(delta({ tool_calls: [{ ...at, id: 'c1', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls' } }] }));
      reader.push(delta({ tool_calls: [{ ...at, id: 'c2', function: { arguments: '  ' } }] }));
      reader.push(delta({ tool_calls: [{ ...at, function: { name: 'read_file', arguments: '{"path":"a"}' } }] }));

      expect(reader.finish()).toStrictEqual([
        { type: 'tool-call', id: 'c1', name: 'terminal', arguments: '{"command":"ls  ' },
        { type: 'tool-call', id: 'c2', name: 'read_file', arguments: '{"path":"a"}' },
        { type: 'finish', reason: 'tool-calls' },
      ]);
    }
  });

  it('reports a length stop even when a tool call was under way', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'terminal', arguments: '{"comm' } }] }, 'length'));

    expect(reader.finish().at(-1)).toStrictEqual({ type: 'finish', reason: 'length' });
  });

  it('is finished only once a finish reason arrived, and takes usage from a chunk without choices', () => {
    const reader = new OpenAIChunkReader();
    reader.push(delta({ content: 'hi' }));
    expect(reader.finished).toBe(false);
    reader.push(delta({}, 'stop'));
    reader.push({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 } });

    expect(reader.finished).toBe(true);
    expect(reader.finish()).toStrictEqual([{ type: 'finish', reason: 'stop', usage: { inputTokens: 4, outputTokens: 1 } }]);
  });

  it('refuses a second choice, streamed or whole, rather than run a call made of pieces of two answers', () => {
    // Asked for one answer, a server that sends two (n > 1) would have them read as one: the first choice's call
    // `{"path":"notes` finished by the second's `/../../etc/passwd"}`, a call neither answer made.
    const streamed = new OpenAIChunkReader();
    streamed.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file', arguments: '{"path":"notes' } }] }));
    const second = { choices: [{ index: 1, delta: { tool_calls: [{ index: 0, function: { arguments: '/../../etc/passwd"}' } }] }, finish_reason: null }] };
    expect(() => streamed.push(second)).toThrow(MalformedChunkError);
    expect(() => streamed.push(second)).toThrow(/a second choice \(index 1\); one answer was asked for/);

    // Without indexes, a choice's place in the list is its index.
    const unindexed = new OpenAIChunkReader();
    expect(() => unindexed.push({ choices: [{ delta: { content: 'a' } }, { delta: { content: 'b' } }] })).toThrow(/a second choice \(index 1\)/);

    const whole = new OpenAIChunkReader();
    const message = (content: string) => ({ message: { role: 'assistant', content }, finish_reason: 'stop' });
    expect(() => whole.pushCompletion({ choices: [message('yes'), message('no')] })).toThrow(/a second choice \(index 1\)/);

    // One choice numbered 0, as servers send it, is read as before.
    expect(new OpenAIChunkReader().push({ choices: [{ index: 0, delta: { content: 'a' } }] })).toStrictEqual([{ type: 'text-delta', text: 'a' }]);
  });

  it('refuses chunks of the wrong shape and out-of-range tool-call indexes', () => {
    const reader = new OpenAIChunkReader();

    expect(() => reader.push('text')).toThrow(/unexpected chunk shape/);
    expect(() => reader.push({ choices: [{ delta: { content: 42 } }] })).toThrow(/unexpected chunk shape at choices\.0\.delta\.content/);
    expect(() => reader.push(delta({ tool_calls: [{ index: MAX_STREAMED_TOOL_CALLS, function: { arguments: '{}' } }] }))).toThrow(
      /at choices\.0\.delta\.tool_calls\.0\.index/,
    );
  });

  it('assembles the same calls and text however the stream is cut into chunks', () => {
    const call = fc.record({ id: fc.constantFrom('c1', 'c2', 'c3'), name: fc.constantFrom('read_file', 'terminal'), arguments: fc.string() });
    fc.assert(
      fc.property(fc.uniqueArray(call, { selector: (c) => c.id, maxLength: 3 }), fc.string(), fc.array(fc.nat({ max: 8 }), { minLength: 1 }), (calls, text, sizes) => {
        const reader = new OpenAIChunkReader();
        let shown = '';
        const take = (s: string, n: number) => [s.slice(0, n), s.slice(n)] as const;
        let step = 0;
        const nextSize = () => Math.max(1, sizes[step++ % sizes.length]!);
        for (let rest = text; rest !== ''; ) {
          const [piece, remaining] = take(rest, nextSize());
          rest = remaining;
          for (const part of reader.push(delta({ content: piece }))) shown += part.type === 'text-delta' ? part.text : '';
        }
        calls.forEach((c, index) => {
          reader.push(delta({ tool_calls: [{ index, id: c.id, function: { name: c.name, arguments: '' } }] }));
          for (let rest = c.arguments; rest !== ''; ) {
            const [piece, remaining] = take(rest, nextSize());
            rest = remaining;
            reader.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
          }
        });
        expect(shown).toBe(text);
        expect(reader.finish().slice(0, -1)).toStrictEqual(calls.map((c) => ({ type: 'tool-call', id: c.id, name: c.name, arguments: c.arguments })));
      }),
    );
  });

  it('reads whole calls sent without an index or an id each as its own, and one sent so in pieces cut anywhere as one', () => {
    const args = fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }).map((value) => JSON.stringify(value));
    fc.assert(
      fc.property(fc.array(args, { minLength: 1, maxLength: 4 }), fc.array(fc.nat({ max: 8 }), { minLength: 1 }), (calls, sizes) => {
        const whole = new OpenAIChunkReader();
        for (const text of calls) whole.push(delta({ tool_calls: [{ function: { name: 'read_file', arguments: text } }] }));
        expect(whole.finish().slice(0, -1)).toStrictEqual(calls.map((text) => ({ type: 'tool-call', id: '', name: 'read_file', arguments: text })));

        const text = calls[0]!;
        const pieces = new OpenAIChunkReader();
        pieces.push(delta({ tool_calls: [{ function: { name: 'read_file', arguments: '' } }] }));
        for (let at = 0, step = 0; at < text.length; step++) {
          const size = Math.max(1, sizes[step % sizes.length]!);
          pieces.push(delta({ tool_calls: [{ function: { name: 'read_file', arguments: text.slice(at, at + size) } }] }));
          at += size;
        }
        expect(pieces.finish().slice(0, -1)).toStrictEqual([{ type: 'tool-call', id: '', name: 'read_file', arguments: text }]);
      }),
    );
  });

  it('reads calls of one tool sent without an index or an id, each its name alone then its arguments cut anywhere, each as its own', () => {
    const args = fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }).map((value) => JSON.stringify(value));
    fc.assert(
      fc.property(fc.array(args, { minLength: 1, maxLength: 4 }), fc.array(fc.nat({ max: 8 }), { minLength: 1 }), fc.boolean(), (calls, sizes, nameInEach) => {
        const reader = new OpenAIChunkReader();
        for (const text of calls) {
          reader.push(delta({ tool_calls: [{ function: { name: 'read_file' } }] }));
          for (let at = 0, step = 0; at < text.length; step++) {
            const size = Math.max(1, sizes[step % sizes.length]!);
            reader.push(delta({ tool_calls: [{ function: { ...(nameInEach ? { name: 'read_file' } : {}), arguments: text.slice(at, at + size) } }] }));
            at += size;
          }
        }
        expect(reader.finish().slice(0, -1)).toStrictEqual(calls.map((text) => ({ type: 'tool-call', id: '', name: 'read_file', arguments: text })));
      }),
    );
  });

  it('assembles arguments up to the limit and refuses one character more', () => {
    const reader = new OpenAIChunkReader();
    const piece = '{"a"'.repeat(250);
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 't', arguments: '' } }] }));
    for (let i = 0; i < MAX_TOOL_ARGUMENT_CHARS / piece.length; i++) reader.push(delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    expect(reader.finish()[0]).toStrictEqual({ type: 'tool-call', id: 'c1', name: 't', arguments: piece.repeat(MAX_TOOL_ARGUMENT_CHARS / piece.length) });
    expect(() => reader.push(delta({ tool_calls: [{ index: 0, function: { arguments: 'x' } }] }))).toThrow(AnswerLimitError);
  });

  it('takes a tool name and an id up to their limits and refuses one character more, without quoting them', () => {
    const reader = new OpenAIChunkReader();
    const name = 'n'.repeat(MAX_TOOL_NAME_CHARS);
    const id = 'i'.repeat(MAX_TOOL_CALL_ID_CHARS);
    reader.push(delta({ tool_calls: [{ index: 0, id, function: { name, arguments: '{}' } }] }));
    expect(reader.finish()[0]).toStrictEqual({ type: 'tool-call', id, name, arguments: '{}' });

    const longName = () => reader.push(delta({ tool_calls: [{ index: 1, id: 'c2', function: { name: `${name}x`, arguments: '{}' } }] }));
    expect(longName).toThrow(new AnswerLimitError(`a tool call's name is longer than ${MAX_TOOL_NAME_CHARS} characters`));
    const longId = () => reader.push(delta({ tool_calls: [{ index: 1, id: `${id}x`, function: { name: 'terminal', arguments: '{}' } }] }));
    expect(longId).toThrow(new AnswerLimitError(`a tool call's id is longer than ${MAX_TOOL_CALL_ID_CHARS} characters`));
    // Repeated in a later piece of a call that already has one, a long name or id is refused too.
    expect(() => reader.push(delta({ tool_calls: [{ index: 0, function: { name: `${name}x` } }] }))).toThrow(AnswerLimitError);
  });

  it('counts arguments sent as an object by their JSON, against the same limit as argument text', () => {
    const reader = new OpenAIChunkReader();
    const fits = { command: 'x'.repeat(MAX_TOOL_ARGUMENT_CHARS - '{"command":""}'.length) };
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'terminal', arguments: fits } }] }));
    expect(reader.finish()[0]).toStrictEqual({ type: 'tool-call', id: 'c1', name: 'terminal', arguments: fits });

    const over = { command: `${fits.command}x` };
    expect(() => new OpenAIChunkReader().push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'terminal', arguments: over } }] }))).toThrow(
      new AnswerLimitError(`the arguments of tool call "terminal" exceed ${MAX_TOOL_ARGUMENT_CHARS} characters`),
    );
  });

  it('refuses object arguments nested too deeply to write out, saying so', () => {
    const depth = 200_000;
    const nested = JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) as Record<string, unknown>;

    expect(() => new OpenAIChunkReader().push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'terminal', arguments: nested } }] }))).toThrow(
      new MalformedChunkError('the arguments of a tool call are nested too deeply'),
    );
  });

  it('bounds the arguments of all the calls of a turn together, text and objects alike', () => {
    const reader = new OpenAIChunkReader();
    const half = MAX_TURN_ARGUMENT_CHARS / 2;
    reader.push(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'write_file', arguments: 'x'.repeat(half) } }] }));
    const object = { content: 'y'.repeat(half - '{"content":""}'.length) };
    reader.push(delta({ tool_calls: [{ index: 1, id: 'c2', function: { name: 'write_file', arguments: object } }] }));
    // An object replaced by a smaller one counts only the smaller one.
    reader.push(delta({ tool_calls: [{ index: 1, function: { arguments: { content: 'short' } } }] }));
    reader.push(delta({ tool_calls: [{ index: 1, function: { arguments: object } }] }));

    expect(() => reader.push(delta({ tool_calls: [{ index: 2, id: 'c3', function: { name: 'terminal', arguments: 'z' } }] }))).toThrow(
      new AnswerLimitError(`the tool-call arguments of one turn exceed ${MAX_TURN_ARGUMENT_CHARS} characters`),
    );
  });

  it.each([
    ['content', 'text', (text: string) => text],
    ['reasoning_content', 'reasoning', (text: string) => text],
    ['thinking_blocks', 'reasoning', (text: string) => [{ type: 'thinking', thinking: text, signature: '' }]],
  ])('passes %s up to the limit of a turn and refuses one character more, naming it', (field, name, sent) => {
    const reader = new OpenAIChunkReader();
    const piece = 'x'.repeat(100_000);
    let passed = 0;
    for (let i = 0; i < MAX_TURN_TEXT_CHARS / piece.length; i++) passed += reader.push(delta({ [field]: sent(piece) })).length;
    expect(passed).toBe(MAX_TURN_TEXT_CHARS / piece.length);
    expect(() => reader.push(delta({ [field]: sent('x') }))).toThrow(`the ${name} of one turn passed ${MAX_TURN_TEXT_CHARS} characters`);
  });
});
