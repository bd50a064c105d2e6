import { fc, test as property } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { MAX_ARGUMENT_DEPTH, parseModelJson, parseToolArguments, repairJson } from './json-repair';
import { MAX_TAG_LENGTH, parseTextToolCall, TextToolCallExtractor, TOOL_CALL_CLOSE, TOOL_CALL_OPEN, type TextPart, type TextToolCall } from './text-tool-calls';

function extract(deltas: string[]) {
  const extractor = new TextToolCallExtractor();
  for (const delta of deltas) extractor.push(delta);
  const { content, reasoning, calls } = extractor.finish();
  return { text: content, reasoning, calls };
}

/** What the extractor gave out to show, adjacent parts of a kind joined. */
function shown(deltas: string[]): TextPart[] {
  const extractor = new TextToolCallExtractor();
  const parts = [...deltas.flatMap((delta) => extractor.push(delta)), ...extractor.finish().parts];
  const joined: TextPart[] = [];
  for (const part of parts) {
    const last = joined.at(-1);
    if (last?.type === part.type) last.text += part.text;
    else joined.push({ ...part });
  }
  return joined;
}

/** Reads `text` whole, cut in two at every place, and one character at a time: each must give `expected`. */
function expectAnySplit(text: string, expected: ReturnType<typeof extract>) {
  expect(extract([text])).toStrictEqual(expected);
  for (let cut = 0; cut <= text.length; cut++) expect(extract([text.slice(0, cut), text.slice(cut)])).toStrictEqual(expected);
  expect(extract(text.split(''))).toStrictEqual(expected);
}

describe('TextToolCallExtractor', () => {
  it('passes plain text through unchanged', () => {
    expect(extract(['Hello ', 'world <b>bold</b> a < b'])).toStrictEqual({ text: 'Hello world <b>bold</b> a < b', reasoning: '', calls: [] });
  });

  it('finds a call whose tags are split across deltas and hides it from the text', () => {
    const result = extract(['Sure.<to', 'ol_call>{"name": "terminal", "argu', 'ments": {"command": "ls"}}</tool', '_call> Done']);
    expect(result).toStrictEqual({ text: 'Sure. Done', reasoning: '', calls: [{ ok: true, name: 'terminal', arguments: { command: 'ls' } }] });
  });

  it('holds back a possible tag start only until it is clearly text', () => {
    const extractor = new TextToolCallExtractor();
    expect(extractor.push('a <to')).toStrictEqual([{ type: 'text', text: 'a ' }]);
    expect(extractor.push('ast>')).toStrictEqual([{ type: 'text', text: '<toast>' }]);
  });

  it('parses several calls, an unclosed last one included', () => {
    const result = extract(['<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "arguments": {"x": 1}}']);
    expect(result.calls).toStrictEqual([
      { ok: true, name: 'a', arguments: {} },
      { ok: true, name: 'b', arguments: { x: 1 } },
    ]);
    expect(result.text).toBe('\n');
  });

  it('closes a call that the model never closed before opening the next', () => {
    const result = extract(['<tool_call>{"name": "a", "arguments": {}}<tool_call>{"name": "b", "arguments": {}}</tool_call>']);
    expect(result.calls.map((c) => c.name)).toStrictEqual(['a', 'b']);
  });

  it('reads a body in a ```json fence as a call', () => {
    expectAnySplit('<tool_call>\n```json\n{"name": "t", "arguments": {"a": 1}}\n```\n</tool_call>', {
      text: '',
      reasoning: '',
      calls: [{ ok: true, name: 't', arguments: { a: 1 } }],
    });
  });

  it('keeps in the text, as written, a closed body that starts like an object but is no call, and still answers it with an error', () => {
    for (const body of ['{"arguments": {}}', '{"name": "t", "arguments": [1, 2]}', '{"name": }']) {
      const text = `Trying: <tool_call>${body}</tool_call> then more.`;
      expectAnySplit(text, { text, reasoning: '', calls: [parseTextToolCall(body)] });
      expect(parseTextToolCall(body).ok).toBe(false);
    }
    // Shown when it closes, before what follows it.
    expect(shown(['a <tool_call>{"arguments": {}}', '</tool_call> b'])).toStrictEqual([{ type: 'text', text: 'a <tool_call>{"arguments": {}}</tool_call> b' }]);
    // One the next call closed, as the model forgot to close it.
    expectAnySplit('<tool_call>{"arguments": {}}\n<tool_call>{"name": "t"}</tool_call>', {
      text: '<tool_call>{"arguments": {}}\n',
      reasoning: '',
      calls: [parseTextToolCall('{"arguments": {}}\n'), { ok: true, name: 't', arguments: {} }],
    });
    // Written before the lone </think> of thinking the prompt opened: it stays as shown, and no one is answered.
    expectAnySplit('Maybe <tool_call>{"arguments": {}}</tool_call> no.</think>Answer', { text: 'Maybe <tool_call>{"arguments": {}}</tool_call> no.</think>Answer', reasoning: '', calls: [] });
  });
});

describe('TextToolCallExtractor on a reply whose calls will not run', () => {
  const first = '<tool_call>{"name": "a", "arguments": {}}</tool_call>';
  const second = '<tool_call>{"name": "b", "arguments": {"x": 1}}';

  it('gives out the calls it found as text after all that was shown, as written, and returns none', () => {
    const text = `Doing it.\n${first}\nAnd then <tool_call>{"arguments": {}}</tool_call> ${second}`;
    for (const deltas of [[text], text.split('')]) {
      const extractor = new TextToolCallExtractor();
      const live = deltas.flatMap((delta) => extractor.push(delta));
      const reply = extractor.finish({ callsRun: false });
      const content = `Doing it.\n\nAnd then <tool_call>{"arguments": {}}</tool_call> ${first}${second}`;
      expect(reply).toStrictEqual({ parts: [{ type: 'text', text: `${first}${second}` }], calls: [], moreCalls: 0, content, reasoning: '' });
      expect([...live, ...reply.parts].map((part) => part.text).join('')).toBe(content);
    }
  });

  it('gives out as thinking, not as text, the calls that a lone </think> showed were thought', () => {
    const extractor = new TextToolCallExtractor();
    extractor.push(`Maybe ${first}</think>Answer.`);
    expect(extractor.finish({ callsRun: false })).toStrictEqual({ parts: [], calls: [], moreCalls: 0, content: 'Maybe </think>Answer.', reasoning: first });
  });
});

describe('TextToolCallExtractor on tags inside a call\'s JSON strings', () => {
  it('ends a call only at a </tool_call> outside its strings, so an argument may name any tag, however the reply is cut', () => {
    // Cases L, L2: the call was cut at the tag in the string and ran shortened ("echo").
    for (const tag of [TOOL_CALL_CLOSE, TOOL_CALL_OPEN, '</think>', '<think>']) {
      expectAnySplit(`<tool_call>{"name": "terminal", "arguments": {"command": "echo ${tag} && rm -rf x"}}</tool_call>`, {
        text: '',
        reasoning: '',
        calls: [{ ok: true, name: 'terminal', arguments: { command: `echo ${tag} && rm -rf x` } }],
      });
    }
    const notes = 'The closing tag is </tool_call> and the rest of the notes.';
    expectAnySplit(`Writing the notes.\n<tool_call>${JSON.stringify({ name: 'write_file', arguments: { path: 'notes.md', content: notes } })}</tool_call>`, {
      text: 'Writing the notes.\n',
      reasoning: '',
      calls: [{ ok: true, name: 'write_file', arguments: { path: 'notes.md', content: notes } }],
    });
    // Case thinkInArg: a </think> in an argument of a reply with no thinking is no end of thinking.
    const prompt = 'Reasoning ends at </think> then the answer.';
    expectAnySplit(`<tool_call>${JSON.stringify({ name: 'write_file', arguments: { path: 'prompt.txt', content: prompt } })}</tool_call>`, {
      text: '',
      reasoning: '',
      calls: [{ ok: true, name: 'write_file', arguments: { path: 'prompt.txt', content: prompt } }],
    });
  });

  it('follows escaped quotes, even cut between the backslash and the quote, and single-quoted strings', () => {
    expectAnySplit('<tool_call>{"name": "t", "arguments": {"a": "say \\"</tool_call>\\" \\\\", "b": "</tool_call>"}}</tool_call>after', {
      text: 'after',
      reasoning: '',
      calls: [{ ok: true, name: 't', arguments: { a: 'say "</tool_call>" \\', b: '</tool_call>' } }],
    });
    expectAnySplit("<tool_call>{'name': 't', 'arguments': {'a': 'x </tool_call> \"y'}}</tool_call>", {
      text: '',
      reasoning: '',
      calls: [{ ok: true, name: 't', arguments: { a: 'x </tool_call> "y' } }],
    });
  });

  it('runs no call whose body the reply ends inside a string (cut off there), and keeps it as text', () => {
    const text = 'Running <tool_call>{"name": "terminal", "arguments": {"command": "rm -rf /tmp/build';
    expectAnySplit(text, { text, reasoning: '', calls: [] });
    const swallowed = `<tool_call>{"name": "t", "arguments": {"a": "x}}</tool_call> then <tool_call>{"name": "t"}</tool_call>`;
    expectAnySplit(swallowed, { text: swallowed, reasoning: '', calls: [] });
  });
});

describe('TextToolCallExtractor on thinking written in the text', () => {
  const call = '<tool_call>{"name":"write_file","arguments":{"path":"thought.txt","content":"only a thought"}}</tool_call>';

  it('gives a <think> block out as reasoning and finds no call in it, however the reply is cut', () => {
    const thought = `The user wants the date. I could do ${call} but no, I should just answer.`;
    expectAnySplit(`<think>${thought}</think>\n\nI will not write anything; the answer is 42.`, {
      text: 'I will not write anything; the answer is 42.',
      reasoning: thought,
      calls: [],
    });
    expect(shown([`<think>${thought}</think>`, 'The answer.'])).toStrictEqual([
      { type: 'reasoning', text: thought },
      { type: 'text', text: 'The answer.' },
    ]);
  });

  it('ends a <thinking> block only at </thinking>', () => {
    expectAnySplit(`<thinking>not </think> yet ${call}</thinking>Answer.`, { text: 'Answer.', reasoning: `not </think> yet ${call}`, calls: [] });
  });

  it('keeps a block that never closes as reasoning, with no call in it', () => {
    expectAnySplit(`Hi. <think>still thinking ${call}`, { text: 'Hi. ', reasoning: `still thinking ${call}`, calls: [] });
  });

  it('runs no call written before a lone </think> (the prompt opened thinking) and keeps the text as written, however the reply is cut', () => {
    const thought = `The user wants a file. ${call} No, just answer.\n`;
    expectAnySplit(`${thought}</think>\n\nThe answer is 42.`, { text: 'The user wants a file.  No, just answer.\n</think>\n\nThe answer is 42.', reasoning: call, calls: [] });
    expectAnySplit(`${thought}</thinking>42`, { text: 'The user wants a file.  No, just answer.\n</thinking>42', reasoning: call, calls: [] });
  });

  it('keeps as the reply what was given out live, whenever the lone </think> comes (the stored turn shows what the person saw)', () => {
    const text = `Let me see. ${call} no.</think>42`;
    const expected = { text: 'Let me see.  no.</think>42', reasoning: call, calls: [] };
    for (const deltas of [[text], ['Let me see. ', `${call} no.</think>42`], text.split('')]) {
      expect(extract(deltas)).toStrictEqual(expected);
      expect(shown(deltas).filter((part) => part.type === 'text').map((part) => part.text).join('')).toBe(expected.text);
    }
    // A reply that names the tag in prose after a call (case "proseThink"): the call may have been thought, so it does
    // not run, and the live answer is the stored one.
    const creating = '<tool_call>{"name":"terminal","arguments":{"command":"touch prose-think.txt"}}</tool_call>';
    expectAnySplit(`Creating it now. ${creating}\nDone. (Models end reasoning with </think>.)`, {
      text: 'Creating it now. \nDone. (Models end reasoning with </think>.)',
      reasoning: creating,
      calls: [],
    });
  });

  it('ends thinking at a lone </think> inside a call that never closed', () => {
    const unclosed = '<tool_call>{"name": "terminal", "arguments": {"command": "rm -rf x"} hmm';
    expectAnySplit(`Maybe ${unclosed}</think>Answer`, { text: 'Maybe </think>Answer', reasoning: unclosed, calls: [] });
  });

  it('ends the thinking the prompt opened at a lone </think> even in what looks like Markdown code (thinking is not Markdown)', () => {
    const rm = '<tool_call>{"name": "terminal", "arguments": {"command": "rm -rf x"}}</tool_call>';
    // Cases C, C2, C3: an unclosed fence, a stray backtick on the </think> line, a tilde fence.
    expectAnySplit(`Maybe ${rm} no.\n\`\`\`bash\nrm\n</think>\nAnswer.`, { text: 'Maybe  no.\n```bash\nrm\n</think>\nAnswer.', reasoning: rm, calls: [] });
    expectAnySplit(`Maybe ${rm} no, use \`ls</think>\nAnswer.`, { text: 'Maybe  no, use `ls</think>\nAnswer.', reasoning: rm, calls: [] });
    expectAnySplit(`Maybe ${rm}\n~~~\n</think>\nAnswer.`, { text: 'Maybe \n~~~\n</think>\nAnswer.', reasoning: rm, calls: [] });
    const touch = '<tool_call>{"name":"terminal","arguments":{"command":"touch thought-fence.txt"}}</tool_call>';
    const fence = `The user wants a list. I could run ${touch} but I should not.\nDraft:\n\`\`\`bash\nls\n</think>\n\nHere is my answer: nothing ran.`;
    expectAnySplit(fence, { text: fence.replace(touch, ''), reasoning: touch, calls: [] });
  });

  it('ends an explicit <think> block at its own closing tag: not at a nested block\'s, nor at one in a backtick span on its line', () => {
    const rm = '<tool_call>{"name": "terminal", "arguments": {"command": "rm -rf x"}}</tool_call>';
    // Case D.
    expectAnySplit(`<think>outer <think>inner</think> ${rm} </think>Answer`, { text: 'Answer', reasoning: `outer <think>inner</think> ${rm} `, calls: [] });
    const touch = '<tool_call>{"name":"terminal","arguments":{"command":"touch thought-code.txt"}}</tool_call>';
    const thought = `The user asks what \`</think>\` does.\nI could run ${touch} but I won't.`;
    expectAnySplit(`<think>${thought}</think>\n\nIt closes the thinking block.`, { text: 'It closes the thinking block.', reasoning: thought, calls: [] });
    expectAnySplit(`<think>Use \`\`a \` </think>\`\` here ${rm}</think>ok`, { text: 'ok', reasoning: `Use \`\`a \` </think>\`\` here ${rm}`, calls: [] });
    // A span ends with its line: a stray backtick does not keep the block open past it.
    expectAnySplit('<think>It`s\nfine</think>ok', { text: 'ok', reasoning: 'It`s\nfine', calls: [] });
    // Unmatched on its own line, it keeps the block open: the answer stays thinking, and no call in it runs.
    expectAnySplit(`<think>It\`s</think>ok ${rm}`, { text: '', reasoning: `It\`s</think>ok ${rm}`, calls: [] });
  });

  it('reads thinking tags in any case and with white space before their >, as model templates write them, and runs no call in them', () => {
    for (const [open, close] of [['<THINK>', '</THINK>'], ['<think >', '</think >'], ['<Think>', '</think\n>'], ['<THINKING>', '</thinking>'], ['<think\t>', '</THINK  >']] as const) {
      expectAnySplit(`${open}plan ${call}${close}\n\nAnswer.`, { text: 'Answer.', reasoning: `plan ${call}`, calls: [] });
    }
    // The lone closing tag of thinking the prompt opened, after a call or inside one.
    expectAnySplit(`plan ${call}</THINK >Answer.`, { text: 'plan </THINK >Answer.', reasoning: call, calls: [] });
    const unclosed = '<tool_call>{"name": "terminal", "arguments": {"command": "rm -rf x"} hmm';
    expectAnySplit(`Maybe ${unclosed}</Think>Answer`, { text: 'Maybe </Think>Answer', reasoning: unclosed, calls: [] });
    // A block ends at a closing tag of its own name, whatever its case, and counts the blocks nested in it.
    expectAnySplit(`<THINK>a </thinking> <think >b</THINK> ${call}</Think>ok`, { text: 'ok', reasoning: `a </thinking> <think >b</THINK> ${call}`, calls: [] });
  });

  it('reads as text what only looks like a thinking tag', () => {
    for (const text of ['<thinker>x', '< think>x', `<think${' '.repeat(9)}>x`, '<thinkin>x', '<think/>x']) {
      expectAnySplit(`Hello. ${text}`, { text: `Hello. ${text}`, reasoning: '', calls: [] });
    }
  });

  it('reads a </think> as text once the reply showed where thinking is, and in code', () => {
    expectAnySplit('<think>a</think>b </think> c', { text: 'b </think> c', reasoning: 'a', calls: [] });
    expectAnySplit('Close it with `</think>`.', { text: 'Close it with `</think>`.', reasoning: '', calls: [] });
    const extractor = new TextToolCallExtractor();
    expect(extractor.pushReasoning('sent apart')).toStrictEqual([{ type: 'reasoning', text: 'sent apart' }]);
    expect(extractor.push('a </think> b')).toStrictEqual([{ type: 'text', text: 'a </think> b' }]);
    expect(extractor.finish()).toMatchObject({ content: 'a </think> b', reasoning: 'sent apart' });
  });

  it('keeps a thinking tag in code as text', () => {
    const text = 'Models write:\n```\n<think>plan</think>\n```\nand `<think>` inline.';
    expectAnySplit(text, { text, reasoning: '', calls: [] });
  });
});

/** A call shown as an example (it stays in the text) and one the model makes (it runs). */
const example = '<tool_call>{"name": "terminal", "arguments": {"command": "ls"}}</tool_call>';
const real = '<tool_call>{"name": "terminal", "arguments": {"command": "pwd"}}</tool_call>';
const pwd = { ok: true as const, name: 'terminal', arguments: { command: 'pwd' } };
/** `text` read however it is cut: each `real` call in it runs and leaves the text, each `example` stays in it. */
function expectRealCalls(text: string): void {
  const count = text.split(real).length - 1;
  expectAnySplit(text, { text: text.replaceAll(real, ''), reasoning: '', calls: Array.from({ length: count }, () => pwd) });
}

describe('TextToolCallExtractor on tags that are not calls', () => {

  it('keeps a call shown as an example in a fenced code block as text', () => {
    for (const [open, close] of [['```', '```'], ['```xml', '```'], ['~~~', '~~~'], ['````', '````'], ['   ```', '  ```']]) {
      const text = `Like this:\n${open}\n${example}\n\n${close}\nThat is all.`;
      expectAnySplit(text, { text, reasoning: '', calls: [] });
    }
  });

  it('finds a call after the code block closed', () => {
    expectAnySplit(`\`\`\`\n${example}\n\`\`\` \n${example}`, {
      text: `\`\`\`\n${example}\n\`\`\` \n`,
      reasoning: '',
      calls: [{ ok: true, name: 'terminal', arguments: { command: 'ls' } }],
    });
  });

  it('keeps tags in inline code as text', () => {
    const text = 'Use `<tool_call>` and `</tool_call>` around JSON, as in ``' + example + '``. Then the rest is visible.';
    expectAnySplit(text, { text, reasoning: '', calls: [] });
  });

  it('does not let a stray backtick hide a call on a later line, nor a one-line ```code``` one after it', () => {
    expectAnySplit(`It\`s done.\n${example}`, { text: 'It`s done.\n', reasoning: '', calls: [{ ok: true, name: 'terminal', arguments: { command: 'ls' } }] });
    expectAnySplit(`\`\`\`ls\`\`\` ${example}`, { text: '```ls``` ', reasoning: '', calls: [{ ok: true, name: 'terminal', arguments: { command: 'ls' } }] });
  });

  it('keeps a tag named in prose as text, with all that follows it', () => {
    const text = 'To call a tool, models write a <tool_call> tag. Here is the important rest of my answer: the capital of France is Paris.';
    expectAnySplit(text, { text, reasoning: '', calls: [] });
  });

  it('keeps a tag around something other than a JSON object as text', () => {
    for (const text of ['<tool_call>ls -la</tool_call> done', '<tool_call></tool_call>', '<tool_call>\n[1, 2]</tool_call>', '<tool_call>```python\nprint(1)\n```</tool_call>']) {
      expectAnySplit(text, { text, reasoning: '', calls: [] });
    }
  });

  it('gives back as text a call that never closes and does not read as one', () => {
    for (const text of ['<tool_call>{"name": "t", oops, and then the answer: Paris', 'a <tool_call>', '<tool_call>  \n', '<tool_call>```json']) {
      expectAnySplit(text, { text, reasoning: '', calls: [] });
    }
    // Read again as text: thinking in it is thinking.
    expectAnySplit('<think>a</think><tool_call>{oops} <think>b</think>', { text: '<tool_call>{oops} ', reasoning: 'ab', calls: [] });
  });

  it('reads the inner of two nested tags as the call and keeps the outer ones as text', () => {
    expectAnySplit(`A <tool_call>${example}</tool_call> B`, {
      text: 'A <tool_call></tool_call> B',
      reasoning: '',
      calls: [{ ok: true, name: 'terminal', arguments: { command: 'ls' } }],
    });
  });
});

describe('TextToolCallExtractor on Markdown code in list items and block quotes (CommonMark)', () => {

  it('keeps a call shown in a fence inside a list item as text, and runs the call after the fence closed', () => {
    expectRealCalls(`- example:\n  \`\`\`\n  ${example}\n  \`\`\`\n${real}`);
    expectRealCalls(`- \`\`\`\n  ${example}\n  \`\`\`\nThen: ${real}`);
    expectRealCalls(`1. Run:\n   \`\`\`json\n   ${example}\n\n   ${example}\n   \`\`\`\n2. Done.\n   ${real}`);
    expectRealCalls(`* a\n  + b\n    ~~~\n    ${example}\n    ~~~\n    ${real}`);
    expectRealCalls(`10) Like this:\n\n    \`\`\`\n    ${example}\n    \`\`\`\n${real}`);
  });

  it('keeps a call shown in a fence inside a block quote as text, and runs the call after the fence closed', () => {
    expectRealCalls(`> \`\`\`\n> ${example}\n> \`\`\`\n${real}`);
    expectRealCalls(`>\`\`\`\n>${example}\n>\`\`\`\n> ${real}`);
    expectRealCalls(`> - \`\`\`\n>   ${example}\n>   \`\`\`\n> ${real}`);
    expectRealCalls(`> > ~~~\n> > ${example}\n> > ~~~\n${real}`);
    expectRealCalls(`- > \`\`\`\n  > ${example}\n  > \`\`\`\n  ${real}`);
  });

  it('ends a fence with its block quote or list item, as CommonMark does', () => {
    // A line that does not go on with the quote (no `>`, or a blank line) ends it, and the fence in it.
    expectRealCalls(`> \`\`\`\n> ${example}\n${real}`);
    expectRealCalls(`> \`\`\`\n> ${example}\n\n${real}`);
    // A line indented less than the item's content ends it; a blank line does not.
    expectRealCalls(`- \`\`\`\n  ${example}\n${real}`);
    expectRealCalls(`- \`\`\`\n  a\n\n  ${example}\n  \`\`\`\n${real}`);
  });

  it('takes a fence indented 4 columns or more (past its container\'s content) for content, not a closing fence', () => {
    expectRealCalls(`\`\`\`\n${example}\n    \`\`\`\n${example}\n\`\`\`\n${real}`);
    expectRealCalls(`~~~\n${example}\n\t~~~\n${example}\n   ~~~\n${real}`);
    expectRealCalls(`- \`\`\`\n  ${example}\n      \`\`\`\n  ${example}\n     \`\`\`\n${real}`);
    expectRealCalls(`> \`\`\`\n>     \`\`\`\n> ${example}\n> \`\`\`\n${real}`);
  });

  it('keeps a call in an indented code block as text, and takes an indented fence for no fence', () => {
    expectRealCalls(`Like this:\n\n    ${example}\n\n${real}`);
    expectRealCalls(`- item\n\n      ${example}\n\n  ${real}`);
    // Right after a paragraph an indented line goes on with it: a call there is text's, and so is the fence.
    expectRealCalls(`Calling it:\n    ${real}`);
    expectRealCalls(`Text\n    \`\`\`\n${real}`);
  });
});

describe('TextToolCallExtractor on backtick strings that a line does not close (CommonMark: text)', () => {

  it('runs a call after a backtick string that nothing closes on its line', () => {
    expectRealCalls(`It\`s done: ${real}`);
    expectRealCalls(`It\`s done: ${real} and ${real}\nThe rest.`);
    expectRealCalls(`Both \`\`x\` and \`y\`\` ${real}`);
    expectRealCalls(`An escaped \\\` is no code span: ${real} \\\``);
    expectRealCalls(`A span \`a\\\` ends at its first backtick: ${real}\``);
  });

  it('keeps as text a call in a code span that closes later on its line, or in a fence\'s opening line', () => {
    expectRealCalls(`Use \`${example}\` like so. ${real}`);
    expectRealCalls(`Use \`\`a \` ${example}\`\` and \`b ${example} c\`\n${real}`);
    expectRealCalls(`It\`s \`\`x\`\` ${example} \`\n${real}`);
    expectRealCalls(`\`\`\`${example}\nls\n\`\`\`\n${real}`);
  });

  it('reads a thinking tag after an open backtick string by the same rule', () => {
    const call = '<tool_call>{"name": "terminal", "arguments": {"command": "touch x"}}</tool_call>';
    expectAnySplit(`It\`s <think>plan ${call}</think> the answer\nmore`, { text: 'It`s  the answer\nmore', reasoning: `plan ${call}`, calls: [] });
    expectAnySplit(`It\`s <think>plan ${call}\nmore`, { text: 'It`s ', reasoning: `plan ${call}\nmore`, calls: [] });
    const named = `Models write \`<think>\` and \`</think>\`, or \`<think>plan ${call}</think>\` whole.`;
    expectAnySplit(named, { text: named, reasoning: '', calls: [] });
  });

  it('holds back only from the tag to where its line tells, and shows it then as it was written', () => {
    const extractor = new TextToolCallExtractor();
    expect(extractor.push(`It\`s here: ${real.slice(0, 20)}`)).toStrictEqual([{ type: 'text', text: 'It`s here: ' }]);
    expect(extractor.push(`${real.slice(20)} and more`)).toStrictEqual([]);
    expect(extractor.push('\nNext line')).toStrictEqual([{ type: 'text', text: ' and more\nNext line' }]);
    expect(extractor.finish()).toMatchObject({ parts: [], calls: [pwd], content: 'It`s here:  and more\nNext line' });
    const example = new TextToolCallExtractor();
    expect(example.push('Use `<tool_call>{"name": "x"}</tool_call>')).toStrictEqual([{ type: 'text', text: 'Use `' }]);
    expect(example.push('` here')).toStrictEqual([{ type: 'text', text: '<tool_call>{"name": "x"}</tool_call>` here' }]);
  });
});

/**
 * Which characters of a line stand in a code span, read as CommonMark's spec says, plainly: from the left, a backslash
 * escapes the character after it, and a backtick string opens a span if a string as long follows, or is text.
 */
function referenceCodeSpans(line: string): boolean[] {
  const inSpan = Array.from({ length: line.length }, () => false);
  const runAt = (at: number) => {
    let end = at;
    while (line[end] === '`') end++;
    return end;
  };
  for (let at = 0; at < line.length; ) {
    if (line[at] === '\\' && at + 1 < line.length) {
      at += 2;
      continue;
    }
    if (line[at] !== '`') {
      at++;
      continue;
    }
    const end = runAt(at);
    let close = -1;
    for (let next = end; next < line.length && close === -1; ) {
      if (line[next] !== '`') {
        next++;
        continue;
      }
      const nextEnd = runAt(next);
      if (nextEnd - next === end - at) close = nextEnd;
      next = nextEnd;
    }
    if (close === -1) {
      at = end;
      continue;
    }
    inSpan.fill(true, at, close);
    at = close;
  }
  return inSpan;
}

/** Cuts the text at the given points (any order, any repeats) into deltas. */
function splitAt(text: string, points: number[]): string[] {
  const cuts = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const deltas: string[] = [];
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    deltas.push(text.slice(from, cut));
    from = cut;
  }
  return deltas;
}

/** Characters that `indexOf` looked at (from its start position to the end of the match, or of the text) while `run` ran. */
function charactersSearched(run: () => void): number {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- only ever called through .call, and put back below
  const indexOf = String.prototype.indexOf;
  let searched = 0;
  String.prototype.indexOf = function (this: string, search: string, position?: number) {
    const from = Math.max(0, Math.min(position ?? 0, this.length));
    const found = indexOf.call(this, search, position);
    searched += (found === -1 ? this.length : found + search.length) - from;
    return found;
  };
  try {
    run();
  } finally {
    String.prototype.indexOf = indexOf;
  }
  return searched;
}

const THINKING_TAGS = ['<think>', '</think>', '<thinking>', '</thinking>', '<THINK >', '</Think\n>'];
/** A thinking tag in any of the forms read as one. */
const thinkingTag = /<\/?think(ing)?\s*>/i;
const markup = ['<', '</', '<tool_cal', '</tool_ca', '<tool_call', '>', ' ', '\n', 'text', '`', '```', '~~~', '\n```\n', '<thi', '</thin', '\n> ', '\n- ', '\n1. ', '\n    ', '\\'];
const streamPiece = fc.oneof(
  fc.constantFrom(TOOL_CALL_OPEN, TOOL_CALL_CLOSE, ...THINKING_TAGS, ...markup),
  fc.constantFrom('{"name": "a", "arguments": {}}', "{'name': 'b', 'arguments': {'x': 1,},}", '{"name": "c"', '{not json', 'not json'),
  fc.string({ maxLength: 8 }),
);
const stream = fc.array(streamPiece, { maxLength: 30 }).map((pieces) => pieces.join(''));
/** Streams with every kind of markup but no `{` (so no call) and no thinking tag. */
const callFreeStream = fc
  .array(fc.oneof(fc.constantFrom(TOOL_CALL_OPEN, TOOL_CALL_CLOSE, ...markup, '[1]', 'json'), fc.string({ maxLength: 8 })), { maxLength: 30 })
  .map((pieces) => pieces.join(''))
  .filter((text) => !text.includes('{') && !thinkingTag.test(text));

describe('TextToolCallExtractor, property-based', () => {
  property.prop([stream, fc.array(fc.nat(), { maxLength: 40 })])('gives the same text, thinking and calls however the stream is split', (text, points) => {
    expect(extract(splitAt(text, points))).toStrictEqual(extract([text]));
  });

  property.prop([stream], { numRuns: 50 })('gives the same text, thinking and calls cut in two at every position and a character at a time, and shows live what it keeps', (text) => {
    const whole = extract([text]);
    for (let cut = 0; cut <= text.length; cut++) expect(extract([text.slice(0, cut), text.slice(cut)])).toStrictEqual(whole);
    const deltas = text.split('');
    expect(extract(deltas)).toStrictEqual(whole);
    const live = shown(deltas);
    expect(live.filter((part) => part.type === 'text').map((part) => part.text).join('')).toBe(whole.text);
    expect(live.filter((part) => part.type === 'reasoning').map((part) => part.text).join('')).toBe(whole.reasoning);
  });

  property.prop([callFreeStream, fc.array(fc.nat(), { maxLength: 40 })])('keeps every character of a reply with no call in it, and shows it as it comes', (text, points) => {
    const deltas = splitAt(text, points);
    expect(extract(deltas)).toStrictEqual({ text, reasoning: '', calls: [] });
    expect(shown(deltas)).toStrictEqual(text === '' ? [] : [{ type: 'text', text }]);
  });

  property.prop([stream.filter((text) => !/<\/think\s*>/i.test(text)), fc.array(fc.nat(), { maxLength: 40 })])('runs nothing written in thinking', (inside, points) => {
    const result = extract(splitAt(`<think>${inside}</think>`, points));
    // The last tag closes a nested block, or stands in a backtick span on its line: then it too is thinking.
    expect(result).toStrictEqual({ text: '', reasoning: /<think\s*>/i.test(inside) || inside.includes('`') ? result.reasoning : inside, calls: [] });
    expect([inside, `${inside}</think>`]).toContain(result.reasoning);
  });

  property.prop([fc.array(fc.constantFrom('`', '``', '```', 'a', ' ', '\\', 'call'), { maxLength: 24 }), fc.array(fc.nat(), { maxLength: 40 })])(
    'runs the calls of a line that no code span holds, as CommonMark reads its spans, however the line is cut',
    (pieces, points) => {
      let calls = 0;
      // Starting with a letter, the line is a paragraph's: no fence, no indented code.
      const line = `a${pieces.map((piece) => (piece === 'call' ? `<tool_call>{"name": "t", "arguments": {"n": ${calls++}}}</tool_call>` : piece)).join('')}`;
      const inSpan = referenceCodeSpans(line);
      const run: TextToolCall[] = [];
      let text = '';
      for (let at = 0; at < line.length; ) {
        const call = /^<tool_call>\{"name": "t", "arguments": \{"n": (\d+)\}\}<\/tool_call>/.exec(line.slice(at));
        if (call === null || inSpan[at]) {
          text += line[at];
          at++;
          continue;
        }
        run.push({ ok: true, name: 't', arguments: { n: Number(call[1]) } });
        at += call[0].length;
      }
      expect(extract(splitAt(line, points))).toStrictEqual({ text, reasoning: '', calls: run });
    },
  );

  property.prop([fc.array(fc.nat(), { maxLength: 40 })])('reads text with no tags unchanged, whatever the split', (points) => {
    const text = 'a < b <tool <tool_cal </tool_call> c <';
    expect(extract(splitAt(text, points))).toStrictEqual({ text, reasoning: '', calls: [] });
  });

  property.prop([fc.array(fc.oneof(fc.constantFrom(...THINKING_TAGS, ...markup), fc.string({ maxLength: 5 })), { maxLength: 20 }).filter((deltas) => !deltas.join('').includes(TOOL_CALL_OPEN))])(
    'holds back from what it shows no more than the start of a tag, or a tag after an open backtick string to its line\'s end',
    (deltas) => {
      for (let end = 0; end <= deltas.length; end++) {
        const extractor = new TextToolCallExtractor();
        for (const delta of deltas.slice(0, end)) extractor.push(delta);
        const held = extractor.finish().parts.map((part) => part.text).join('');
        if (held.length < MAX_TAG_LENGTH) continue;
        // Held for its line: from a tag (a thinking tag, then given out as reasoning) after a backtick, to no line end.
        expect(deltas.slice(0, end).join('')).toMatch(/`[^\n]*<think/i);
        expect(held).not.toContain('\n');
      }
    },
  );
});

describe('TextToolCallExtractor on hostile streams', () => {
  it('reads a line of a thousand open backtick strings of different lengths and a thousand calls after them once', () => {
    const openers = Array.from({ length: 1000 }, (_, n) => '`'.repeat(n + 1)).join(' ');
    const text = `${openers}${' <tool_call>{"name": "t"}</tool_call>'.repeat(1000)}\nok`;
    for (const deltas of [[text], text.match(/[^]{1,3}/g)!]) {
      expect(extract(deltas)).toStrictEqual({ text: `${openers}${' '.repeat(1000)}\nok`, reasoning: '', calls: Array.from({ length: 1000 }, () => ({ ok: true, name: 't', arguments: {} })) });
    }
  });

  it('scans 1 MB of a call streamed in 4-character deltas once, not once per delta', () => {
    const text = `<tool_call>{"name": "t", "arguments": {"x": "${'a'.repeat(1_000_000)}"}}`;
    let result: ReturnType<typeof extract> | undefined;
    const searched = charactersSearched(() => {
      const deltas: string[] = [];
      for (let i = 0; i < text.length; i += 4) deltas.push(text.slice(i, i + 4));
      result = extract(deltas);
    });
    expect(result?.calls).toStrictEqual([{ ok: true, name: 't', arguments: { x: 'a'.repeat(1_000_000) } }]);
    // Each delta is searched for the two tags with at most a tag's length carried over from the one before.
    expect(searched).toBeLessThan(text.length * 2 * (1 + TOOL_CALL_CLOSE.length / 4));
  });

  it('scans 1 MB of thinking streamed in 4-character deltas once', () => {
    const text = `<think>${'a < b '.repeat(200_000)}</think>done`;
    let result: ReturnType<typeof extract> | undefined;
    const searched = charactersSearched(() => {
      const deltas: string[] = [];
      for (let i = 0; i < text.length; i += 4) deltas.push(text.slice(i, i + 4));
      result = extract(deltas);
    });
    expect(result).toStrictEqual({ text: 'done', reasoning: 'a < b '.repeat(200_000), calls: [] });
    expect(searched).toBeLessThan(text.length * 4);
  });

  it('finds thousands of unclosed calls in one delta in one pass', () => {
    const text = `${TOOL_CALL_OPEN}{"name": "t"}`.repeat(20_000);
    let calls = 0;
    const searched = charactersSearched(() => {
      calls = extract([text]).calls.length;
    });
    expect(calls).toBe(20_000);
    expect(searched).toBeLessThan(text.length * 4);
  });

  it('reads tens of thousands of tags that are not calls, thinking blocks and code spans, in one delta and a character at a time', () => {
    const cases: [string, ReturnType<typeof extract>][] = [
      [`${TOOL_CALL_OPEN} x`.repeat(50_000), { text: `${TOOL_CALL_OPEN} x`.repeat(50_000), reasoning: '', calls: [] }],
      ['<think>a</think>b'.repeat(50_000), { text: 'b'.repeat(50_000), reasoning: 'a'.repeat(50_000), calls: [] }],
      ['`<tool_call>` '.repeat(50_000), { text: '`<tool_call>` '.repeat(50_000), reasoning: '', calls: [] }],
      ['`'.repeat(500_000), { text: '`'.repeat(500_000), reasoning: '', calls: [] }],
      ['</think>'.repeat(50_000), { text: '</think>'.repeat(50_000), reasoning: '', calls: [] }],
      ['<think>'.repeat(50_000), { text: '', reasoning: '<think>'.repeat(49_999), calls: [] }],
      // Tags after a backtick string open on their line: held to the line's end, or each to the string closing it.
      [`\`${`${TOOL_CALL_OPEN} x`.repeat(50_000)}\n`, { text: `\`${`${TOOL_CALL_OPEN} x`.repeat(50_000)}\n`, reasoning: '', calls: [] }],
      ['`<think>` '.repeat(50_000), { text: '`<think>` '.repeat(50_000), reasoning: '', calls: [] }],
      ['`a <tool_call>{"name": "t"}</tool_call>` '.repeat(20_000), { text: '`a <tool_call>{"name": "t"}</tool_call>` '.repeat(20_000), reasoning: '', calls: [] }],
    ];
    for (const [text, expected] of cases) {
      expect(extract([text])).toStrictEqual(expected);
      expect(extract(text.split(''))).toStrictEqual(expected);
    }
  });
});

describe('TextToolCallExtractor with a limit on the calls it reads', () => {
  const call = (n: number) => `${TOOL_CALL_OPEN}{"name": "t", "arguments": {"n": ${n}}}${TOOL_CALL_CLOSE}`;

  function extractReading(readCalls: number, deltas: string[], options?: Parameters<TextToolCallExtractor['finish']>[0]) {
    const extractor = new TextToolCallExtractor({ readCalls });
    const live = deltas.flatMap((delta) => extractor.push(delta));
    const reply = extractor.finish(options);
    const shownText = [...live, ...reply.parts].filter((part) => part.type === 'text').map((part) => part.text).join('');
    return { text: reply.content, reasoning: reply.reasoning, calls: reply.calls, moreCalls: reply.moreCalls, shownText };
  }

  it('parses no more than `readCalls` of a reply\'s 83,000 call bodies, and counts the rest', () => {
    const text = `${TOOL_CALL_OPEN}{`.repeat(83_000);
    const deltas: string[] = [];
    for (let i = 0; i < text.length; i += 4096) deltas.push(text.slice(i, i + 4096));
    const reply = extractReading(64, deltas);
    // Each body but the last is closed by the next tag; the last, left open and no call, is text.
    expect(reply.calls).toHaveLength(64);
    expect(reply.calls).toStrictEqual(Array.from({ length: 64 }, () => ({ ok: false, name: '', raw: '{', error: `The tool call has no "name". Write it as ${TOOL_CALL_OPEN}{"name": "<tool>", "arguments": {...}}${TOOL_CALL_CLOSE}.` })));
    expect(reply.moreCalls).toBe(83_000 - 1 - 64);
    // The bodies read are kept in the text as written, as any body that is no call; those only counted are cut as calls.
    expect(reply.text).toBe(`${TOOL_CALL_OPEN}{`.repeat(64 + 1));
    expect(reply.shownText).toBe(reply.text);
  });

  it('cuts the calls past the limit from the text, as it does those it reads, and returns only those it read', () => {
    const reply = extractReading(2, ['a', call(0), 'b', call(1), 'c', call(2), 'd', call(3)]);
    expect(reply).toStrictEqual({
      text: 'abcd',
      reasoning: '',
      calls: [0, 1].map((n) => ({ ok: true, name: 't', arguments: { n } })),
      moreCalls: 2,
      shownText: 'abcd',
    });
  });

  it('counts a call left open at the end past the limit, and keeps a body left open that is no call as text', () => {
    expect(extractReading(1, [call(0), `${TOOL_CALL_OPEN}{"name": "t"}`])).toMatchObject({ text: '', calls: [{ ok: true, name: 't', arguments: { n: 0 } }], moreCalls: 1 });
    expect(extractReading(1, [call(0), `${TOOL_CALL_OPEN}{"a" `])).toMatchObject({ text: `${TOOL_CALL_OPEN}{"a" `, calls: [{ ok: true }], moreCalls: 0 });
  });

  it('gives out every call as written, those past the limit included, when the calls do not run', () => {
    const written = [call(0), 'x', call(1), `${TOOL_CALL_OPEN}{ no call }${TOOL_CALL_CLOSE}`];
    expect(extractReading(1, written, { callsRun: false })).toStrictEqual({ text: `x${written[0]}${written[2]}${written[3]}`, reasoning: '', calls: [], moreCalls: 0, shownText: `x${written[0]}${written[2]}${written[3]}` });
  });

  it('gives out every call as thinking, those past the limit included, at a lone </think>', () => {
    const reply = extractReading(1, [call(0), call(1), call(2), '</think>ok']);
    expect(reply).toStrictEqual({ text: '</think>ok', reasoning: call(0) + call(1) + call(2), calls: [], moreCalls: 0, shownText: '</think>ok' });
  });

  it('reads every call by default', () => {
    const reply = extractReading(Number.POSITIVE_INFINITY, Array.from({ length: 100 }, (_, n) => call(n)));
    expect(reply.calls).toHaveLength(100);
    expect(reply.moreCalls).toBe(0);
    expect(new TextToolCallExtractor().finish().moreCalls).toBe(0);
  });
});

describe('parseTextToolCall repairs', () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ['trailing commas', '{"name": "t", "arguments": {"a": 1, "b": [1, 2,],},}', { a: 1, b: [1, 2] }],
    ['single quotes', "{'name': 't', 'arguments': {'path': 'it\\'s.txt'}}", { path: "it's.txt" }],
    ['arguments as a JSON string', '{"name": "t", "arguments": "{\\"command\\": \\"ls -la\\"}"}', { command: 'ls -la' }],
    ['bare keys and Python literals', '{name: "t", arguments: {recursive: True, depth: None, hidden: False}}', { recursive: true, depth: null, hidden: false }],
    ['missing closing braces', '{"name": "t", "arguments": {"command": "echo hi"', { command: 'echo hi' }],
    ['a code fence around it', '```json\n{"name": "t", "arguments": {"a": 1}}\n```', { a: 1 }],
    ['"parameters" instead of "arguments"', '{"name": "t", "parameters": {"a": 1}}', { a: 1 }],
    ['a {"function": …} wrapper', '{"function": {"name": "t", "arguments": {"a": 1}}}', { a: 1 }],
    ['no arguments at all', '{"name": "t"}', {}],
  ];
  it.each(cases)('repairs %s', (_label, raw, expected) => {
    expect(parseTextToolCall(raw)).toStrictEqual({ ok: true, name: 't', arguments: expected });
  });

  it('answers with a clear error when it cannot', () => {
    const broken = parseTextToolCall('this is not json at all {{{');
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.error).toContain('<tool_call>{"name"');
    const noName = parseTextToolCall('{"arguments": {}}');
    expect(!noName.ok && noName.error).toContain('no "name"');
    const badArgs = parseTextToolCall('{"name": "t", "arguments": [1, 2]}');
    expect(badArgs).toMatchObject({ ok: false, name: 't' });
    expect(!badArgs.ok && badArgs.error).toContain('must be a JSON object');
  });

  it('refuses a call nested past what is read, naming the limit rather than the engine\'s stack, wherever the depth is', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const bodies = [
      `{"name": "t", "arguments": {"a": ${deep}}}`,
      `{"name": "t", "note": ${deep}, "arguments": {}}`,
      `{"name": "t", "note": ${'{"a": '.repeat(200_000)}1${'}'.repeat(200_000)}, "arguments": {}}`,
      `{"function": {"name": "t", "arguments": ${'{"a": '.repeat(MAX_ARGUMENT_DEPTH + 1)}1${'}'.repeat(MAX_ARGUMENT_DEPTH + 1)}}}`,
    ];
    for (const body of bodies) {
      expect(parseTextToolCall(body)).toStrictEqual({
        ok: false,
        name: '',
        raw: body,
        error: `Could not parse the tool call: it is nested deeper than ${MAX_ARGUMENT_DEPTH + 2} levels (its arguments may nest ${MAX_ARGUMENT_DEPTH}). Write it as <tool_call>{"name": "<tool>", "arguments": {...}}</tool_call>.`,
      });
    }
    const deepest = `{"function": {"name": "t", "arguments": ${'{"a": '.repeat(MAX_ARGUMENT_DEPTH)}1${'}'.repeat(MAX_ARGUMENT_DEPTH)}}}`;
    expect(parseTextToolCall(deepest).ok).toBe(true);
  });
});

describe('JSON from models', () => {
  it('repairs a huge malformed argument string in one pass (a model cannot stall the server with one)', () => {
    // Many closing brackets and a trailing comma: each closer used to rescan everything written so far.
    const parsed = parseToolArguments(`{'items': [${'[1],'.repeat(100_000)}]`);
    expect(parsed.ok && (parsed.value.items as unknown[]).length).toBe(100_000);
  });

  it('leaves valid JSON unchanged', () => {
    const valid = '{"a": [1, 2.5, -3e2, "x\\n\\"y\\""], "b": {"c": null, "d": true}}';
    expect(JSON.parse(repairJson(valid))).toStrictEqual(JSON.parse(valid));
    expect(parseModelJson(valid)).toStrictEqual({ ok: true, value: JSON.parse(valid), repaired: false });
  });

  it('refuses prototype-polluting keys, naming the first, and pollutes nothing', () => {
    const parsed = parseToolArguments('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}, "ok": 1}');
    expect(parsed).toStrictEqual({ ok: false, error: 'the arguments are not accepted (it holds a key named "__proto__", which is not accepted)' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads double-encoded arguments and treats empty ones as {}', () => {
    expect(parseToolArguments(JSON.stringify(JSON.stringify({ a: 1 })))).toStrictEqual({ ok: true, value: { a: 1 } });
    expect(parseToolArguments('')).toStrictEqual({ ok: true, value: {} });
    const plain = parseToolArguments('"just a string"');
    expect(plain.ok).toBe(false);
    expect(!plain.ok && plain.error).toContain('not valid JSON');
    expect(parseToolArguments(42)).toStrictEqual({ ok: false, error: 'the arguments must be a JSON object' });
  });
});
