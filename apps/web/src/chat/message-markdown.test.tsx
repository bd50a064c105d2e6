import { act, cleanup, render, screen } from '@testing-library/react';
import type * as ReactMarkdown from 'react-markdown';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChatItem, RunView } from './chat-reducer';
import { ChatTranscript } from './chat-transcript';
import { tooCostlyToParse, tooDeepForMarkdown } from './markdown-weight';
import { MessageMarkdown } from './message-markdown';

/** Every text given to the Markdown parser, in order. */
const parsedTexts = vi.hoisted((): string[] => []);

vi.mock('react-markdown', async (importOriginal) => {
  const actual = await importOriginal<typeof ReactMarkdown>();
  const counted = (options: ReactMarkdown.Options) => {
    parsedTexts.push(options.children ?? '');
    return actual.default(options);
  };
  return { ...actual, default: counted };
});

afterEach(cleanup);

describe('MessageMarkdown', () => {
  it('renders ordinary model text as Markdown', () => {
    const { container } = render(<MessageMarkdown text={'# Plan\n\n- one\n  - two\n\n> quoted **bold**'} />);
    expect(container.querySelector('h1')?.textContent).toBe('Plan');
    expect(container.querySelectorAll('li')).toHaveLength(2);
    expect(container.querySelector('blockquote strong')?.textContent).toBe('bold');
  });

  it.each([
    ['a list nested 1,000 deep', `${'- '.repeat(1000)}x`],
    ['a quote nested 5,000 deep', `${'> '.repeat(5000)}x`],
    ['20,000 nested emphasis markers', '*a'.repeat(20_000)],
    ['a list of 20,000 items apart', '1. a\n\n'.repeat(20_000)],
    ['a table of 4,000 rows', `| a | b |\n|---|---|\n${'| x | y |\n'.repeat(4000)}`],
  ])('shows %s as it is, without overflowing the stack or freezing', (_name, text) => {
    expect(tooDeepForMarkdown(text)).toBe(true);
    const { container } = render(<MessageMarkdown text={text} />);
    expect(container.querySelector('.plain-text')?.textContent).toBe(text);
  });

  it('shows brackets nested deep over a long text as it is, whole, with a note, without parsing it', () => {
    const text = `Working on it.\n\n${'['.repeat(4_900)}${'a'.repeat(200_000)}${']'.repeat(4_900)}`;
    expect(tooDeepForMarkdown(text)).toBe(false);
    expect(tooCostlyToParse(text)).toBe(true);
    parsedTexts.length = 0;
    const { container } = render(<MessageMarkdown text={text} />);
    expect(parsedTexts).toStrictEqual([]);
    expect(container.querySelector('.plain-text')?.textContent).toBe(text);
    expect(container.querySelector('.plain-text-note')?.textContent).toMatch(/^Shown as plain text/);
  });

  it.each([
    ['comments', 'a <!--'.repeat(5_000)],
    ['CDATA sections', 'a <![CDATA[ ]]'.repeat(2_000)],
    ['processing instructions (one a line)', 'if a < b then c <? no\n'.repeat(1_500)],
    ['declarations', 'a <!A'.repeat(6_000)],
  ])('shows a paragraph of raw HTML %s that never close as it is, whole, with a note, without parsing it', (_name, text) => {
    // The parser reads from each to the paragraph's end looking for its close, then reads the text again.
    expect(tooDeepForMarkdown(text)).toBe(false);
    expect(tooCostlyToParse(text)).toBe(true);
    parsedTexts.length = 0;
    const { container } = render(<MessageMarkdown text={`Working on it.\n\n${text}`} />);
    expect(parsedTexts).toStrictEqual([]);
    expect(container.querySelector('.plain-text')?.textContent).toBe(`Working on it.\n\n${text}`);
    expect(container.querySelector('.plain-text-note')?.textContent).toMatch(/^Shown as plain text/);
  });

  it('keeps raw HTML that closes, and one that does not in each of many paragraphs, as Markdown', () => {
    const text = `${'An <!-- aside --> and <?php echo 1 ?> and <![CDATA[ x ]]>, a <!DOCTYPE html> too.\n\n'.repeat(1_000)}${'Unclosed <!-- here, and <? there.\r\n\r\n'.repeat(2_000)}The end.`;
    expect(tooCostlyToParse(text)).toBe(false);
    const { container } = render(<MessageMarkdown text={text} />);
    expect(container.querySelectorAll('p')).toHaveLength(3_001);
    expect(container.querySelector('.plain-text-note')).toBeNull();
  });

  it('keeps links and brackets of an ordinary reply as Markdown', () => {
    const text = `${'See [the docs](https://example.test/docs) and a[i] or [[x]].\n\n'.repeat(1_000)}The end.`;
    expect(tooCostlyToParse(text)).toBe(false);
    const { container } = render(<MessageMarkdown text={text} />);
    expect(container.querySelectorAll('button.reply-link')).toHaveLength(1_000);
    expect(container.querySelector('.plain-text-note')).toBeNull();
  });

  it('keeps ordinary nesting as Markdown', () => {
    expect(tooDeepForMarkdown(`${'  '.repeat(5)}- item\n${'> '.repeat(3)}quote\n1. first`)).toBe(false);
    render(<MessageMarkdown text={'1. first\n2. second'} />);
    expect(screen.getAllByRole('listitem')).toHaveLength(2);
  });
});

/** Replies with the constructs a cut could break: blank lines inside one block, lists, quotes, raw HTML, definitions. */
const replies: Record<string, string> = {
  'headings and paragraphs': '# Title\n\nIntro with **bold** text.\n\n## Second\n\nMore text\nover two lines.\n\nSetext heading\n===\n\n---\n\nThe end.',
  'fenced code with blank lines': 'Before\n\n```ts\nconst a = 1;\n\n\nconst b = 2;\n```\n\nAfter\n\n~~~\n\n# not a heading\n\n~~~\n\n  ```\n  an indented fence\n\n  still code\n  ```\n\nEnd.',
  'a fence in a list item before one at the top': '- ```\n  in the item\n  ```\n\n```\nat the top\n\nwith a blank line\n```\n\nEnd.',
  'a fence left open': 'Text\n\n```\ncode\n\nmore code\n\n# still code',
  'lists with blank lines between items': '- one\n- two\n\n- three, loose\n\n  its own paragraph\n\n      indented code in the item\n\n1. first\n\n2. second\n   - nested\n\n     nested paragraph\n\nAfter the lists.\n\n* a star list\n\n+ a plus list\n\n3) from three',
  'quotes and lazy lines': '> a quote\n>\n> the same quote\n\n> another quote\nlazy line\n\nA paragraph\n- a list\nlazy item\n\nEnd.',
  'indented code with blank lines': 'Para\n\n    code one\n\n\n    code two\n\nAfter.',
  'indented code, then what reads as a paragraph only after it': 'Para\n\n    code\n\n2) two\n\n\tcode\n\n-\n\nEnd.',
  'a fence left open in a list item, then one at the top': '- ```\n  para\n\n\n````\nx\n````\n\n- ```\r\n  para\r\n\r\n````\r\ny\r\n````\r\n\r\nEnd.',
  'raw HTML with blank lines': 'A [link](https://example.test) and <b>inline html</b>.\n\n<!-- a comment\n\nwith a blank line\n\n-->\n\n<script>\n\nalert(1)\n\n</script>\n\n<div>\n\n*emphasis*\n\n</div>\n\nEnd.',
  'link reference definitions after their use':
    'See [the docs] and [this][ref].\n\nMore text.\n\n[the docs]: https://example.test/docs\n\n> [quoted]: https://example.test/q\n\n- [listed]: https://example.test/l\n\n' +
    '[ref]: https://example.test/ref "Title"\n\nEnd with [the docs].\n\nThen [quoted] and [listed].\n\nThe end.',
  'a link reference definition in a quote': '> [quoted]: https://example.test/q\n\nSee [quoted].\n\nThe end.',
  'a link reference definition in a list': '- [listed]: https://example.test/l\n\nSee [listed].\n\nThe end.',
  'a colon after a bracket in code': '```ts\ntype Counts = { [key: string]: number };\n\nconst counts: Counts = {};\n```\n\nText with [key: string] in it.\n\nThe end.',
  'CRLF line ends': '# Title\r\n\r\nPara\r\n\r\n```\r\ncode\r\n\r\nmore\r\n```\r\n\r\n- a\r\n\r\n- b\r\n\r\nEnd.\r\n',
  'nesting too deep further on': `A fine paragraph.\n\n${'- '.repeat(40)}x\n\nMore.`,
};

/** Lines that start, continue or end blocks in ways a cut could get wrong. */
const lines = [
  ...['', '', '', '   ', 'text', 'more text', 'para *em', 'em* end', '`code', 'code`', '\\', '*', '_x_', '<http://a.b>'],
  ...['- item', '* item', '+ item', '1. item', '2. item', '2)', '3.', '10. ten', '1) one', '-', '1.', '-   wide', '- - -', '- a\r'],
  ...['  - nested', '   - three', '    - x', '\t- tab', '- > q', '  > q', '- ```', '> - a', '> ```', '- [ ] task'],
  ...['    code', '\tcode', '      deep code', '  para', '   para', '     x', '```', '~~~', '````', '  ```', '   ~~~'],
  ...['> quote', '>', '> > deep', '<!--', '-->', '<div>', '</div>', '<pre>', '</pre>', '<script>', '</script>', '<?', '?>'],
  ...['<![CDATA[', ']]>', '# head', '===', '---', '***', '[a]: /u', '[a]', '[a]:', '  /url', 'foo]: /x', '[foo', '| a | b |', '\r'],
];

/** A text of random lines and its random deltas, the same for the same seed. */
function randomReply(seed: number): { reply: string; sizes: number[] } {
  let state = seed;
  const next = () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
  const count = 4 + Math.floor(next() * 30);
  const reply = Array.from({ length: count }, () => (next() < 0.3 ? '' : lines[Math.floor(next() * lines.length)])).join('\n');
  return { reply, sizes: Array.from(reply, () => 1 + Math.floor(next() * 6)) };
}

function renderedWhole(text: string): string {
  const { container, unmount } = render(<MessageMarkdown text={text} />);
  const html = container.innerHTML;
  unmount();
  return html;
}

function deltas(text: string, size: number): string[] {
  const result: string[] = [];
  for (let index = 0; index < text.length; index += size) result.push(text.slice(index, index + size));
  return result;
}

function nextFrame(): void {
  act(() => {
    vi.advanceTimersToNextFrame();
  });
}

/** A message a reply streams into, a frame passing after each change unless told otherwise. */
function streamingMessage(first = '') {
  const view = render(<MessageMarkdown text={first} />);
  return {
    container: view.container,
    unmount: view.unmount,
    show(text: string, { frame = true } = {}) {
      view.rerender(<MessageMarkdown text={text} />);
      if (frame) nextFrame();
    },
  };
}

describe('MessageMarkdown while a reply streams in', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['requestAnimationFrame', 'cancelAnimationFrame'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(Object.entries(replies))('shows %s as the whole text would be shown, at every step', (_name, reply) => {
    for (const size of [1, 7]) {
      let text = '';
      const message = streamingMessage();
      for (const delta of deltas(reply, size)) {
        text += delta;
        message.show(text);
        expect(message.container.innerHTML, `after ${JSON.stringify(text)}`).toBe(renderedWhole(text));
      }
      message.unmount();
    }
  });

  // How the parser's state from one block to the next was found (see `lastCut` in markdown-blocks.ts).
  it('shows random texts as the whole text would be shown, at every step', () => {
    const wrong: string[] = [];
    for (let seed = 1; seed <= 100; seed++) {
      const { reply, sizes } = randomReply(seed);
      const message = streamingMessage();
      for (let end = 0, step = 0; end < reply.length && wrong.length === 0; step++) {
        end += sizes[step] ?? 1;
        const text = reply.slice(0, end);
        message.show(text);
        if (message.container.innerHTML !== renderedWhole(text)) wrong.push(text);
      }
      message.unmount();
    }
    expect(wrong).toStrictEqual([]);
  });

  it('shows all of them in one reply as the whole text would be shown', () => {
    const reply = Object.values(replies).join('\n\n');
    let text = '';
    const message = streamingMessage();
    for (const delta of deltas(reply, 5)) {
      text += delta;
      message.show(text);
    }
    expect(message.container.innerHTML).toBe(renderedWhole(reply));
  });

  it('shows what a long text grew by a frame later for each 64 KB it has, its layout costing as much', () => {
    const long = 'A paragraph of a long reply.\n\n'.repeat(2_500);
    const message = streamingMessage(long);
    message.show(`${long}The`, { frame: false });
    nextFrame();
    expect(message.container.textContent).not.toContain('The');
    // A delta in between does not put the wait back to its start.
    message.show(`${long}The end.`, { frame: false });
    nextFrame();
    expect(message.container.textContent).toContain('The end.');
  });

  it('shows a burst of text in parts as long as what is shown, so that no render parses it all', () => {
    const burst = `${'A paragraph of a burst.\n\n'.repeat(1_500)}The end.`;
    const message = streamingMessage('A');
    parsedTexts.length = 0;
    message.show(burst, { frame: false });
    let frames = 0;
    while (!message.container.textContent.includes('The end.') && frames < 100) {
      nextFrame();
      frames++;
    }
    // 16 KB, then 32 KB, then the rest: each part waits a frame, and one more for each 64 KB shown.
    expect(frames).toBe(3);
    expect(Math.max(...parsedTexts.map((parsedText) => parsedText.length))).toBeLessThan(2 * 16_384);
    expect(message.container.innerHTML).toBe(renderedWhole(burst));
  });

  it('parses a reply of one long paragraph, replayed at once, about twice in all, not once a part', () => {
    const paragraph = `Working on it.\n\n${'word '.repeat(180_000)}`;
    const whole = renderedWhole(paragraph);
    const message = streamingMessage(paragraph.slice(0, 4_000));
    parsedTexts.length = 0;
    message.show(paragraph, { frame: false });
    for (let frames = 0; message.container.innerHTML !== whole && frames < 1_000; frames++) nextFrame();
    expect(message.container.innerHTML).toBe(whole);
    const parsed = parsedTexts.reduce((sum, parsedText) => sum + parsedText.length, 0);
    // In parts of a fixed 16 KB it was parsed 55 times, some 25 times its length.
    expect(parsed).toBeLessThan(3 * paragraph.length);
  });

  it('shows a text that does not continue the one shown at once', () => {
    const message = streamingMessage();
    message.show('The first reply.');
    message.show('Another reply altogether.', { frame: false });
    expect(message.container.innerHTML).toBe(renderedWhole('Another reply altogether.'));
    message.show('Another reply altogether. It goes on.', { frame: false });
    expect(message.container.innerHTML).toBe(renderedWhole('Another reply altogether.'));
    nextFrame();
    expect(message.container.innerHTML).toBe(renderedWhole('Another reply altogether. It goes on.'));
  });

  it('parses each part of a long reply a bounded number of times, not the whole text on each change', () => {
    const reply = Array.from({ length: 60 }, (_, index) => `## Part ${index}\n\n${replies['fenced code with blank lines']}\n\n${replies['lists with blank lines between items']}`).join('\n\n');
    let text = '';
    const message = streamingMessage();
    parsedTexts.length = 0;
    for (const delta of deltas(reply, 100)) {
      text += delta;
      message.show(text);
    }
    const parsed = parsedTexts.reduce((sum, parsedText) => sum + parsedText.length, 0);
    // Each character once in its block and a few times while its block is the last one; the whole text on each of
    // the ~400 changes (a frame after each) would be some 200 times the reply.
    expect(parsed).toBeLessThan(4 * reply.length);
    expect(message.container.innerHTML).toBe(renderedWhole(reply));
  });

  it('renders the latest text once a frame, however many changes came in it', () => {
    const message = streamingMessage();
    parsedTexts.length = 0;
    for (const text of ['The', 'The next', 'The next reply', 'The next reply.']) message.show(text, { frame: false });
    expect(parsedTexts).toStrictEqual([]);
    nextFrame();
    expect(parsedTexts).toStrictEqual(['The next reply.']);
    expect(message.container.innerHTML).toBe(renderedWhole('The next reply.'));
  });

  it('parses a whole reply once', () => {
    const reply = Object.values(replies)
      .filter((text) => !tooDeepForMarkdown(text))
      .join('\n\n');
    parsedTexts.length = 0;
    render(<MessageMarkdown text={reply} />);
    expect(parsedTexts).toStrictEqual([reply]);
  });

  it('does not parse the earlier replies of a chat again while a new one streams in', () => {
    const earlier = replies['headings and paragraphs']!;
    const items = (text: string): ChatItem[] => [
      { kind: 'assistant', key: 'a1', runId: 'r1', text: earlier, reasoning: '' },
      { kind: 'user', key: 'u2', text: 'And then?' },
      { kind: 'assistant', key: 'a2', runId: 'r2', text, reasoning: '' },
    ];
    const run: RunView = { runId: 'r2', phase: 'following', status: null, lastSeq: 0, announcing: false, startedAtTurn: null };
    const transcript = (text: string) => <ChatTranscript items={items(text)} run={run} tools={new Map()} onDecide={() => undefined} />;
    const { rerender } = render(transcript('Th'));
    parsedTexts.length = 0;
    for (const text of ['The', 'The next', 'The next reply.']) {
      rerender(transcript(text));
      nextFrame();
    }
    expect(parsedTexts).toStrictEqual(['The', 'The next', 'The next reply.']);
  });
});

describe('hidden characters in a reply', () => {
  it('are shown as escapes in text, code and plain text, while letters, emoji and spaces stay as they are', () => {
    const text = 'Safe \u202Eexe.txt\u202C and zero\u200Bwidth `a\u2066b` 👨‍👩‍👧 ❤️ привет é\u00A0x\n\n```\nrm\u200B -rf\n```';
    const { container } = render(<MessageMarkdown text={text} />);
    const shown = container.textContent ?? '';
    expect(shown).toContain('Safe \\u{202E}exe.txt\\u{202C} and zero\\u{200B}width');
    expect(container.querySelector('p code')?.textContent).toBe('a\\u{2066}b');
    expect(container.querySelector('pre')?.textContent).toBe('rm\\u{200B} -rf\n');
    expect(shown).toContain('👨‍👩‍👧 ❤️ привет é\u00A0x');
    cleanup();
    const plain = render(<MessageMarkdown text={`${'*a'.repeat(20_000)}\u202E`} />);
    expect(plain.container.querySelector('.plain-text')?.textContent?.endsWith('*a\\u{202E}')).toBe(true);
  });
});
