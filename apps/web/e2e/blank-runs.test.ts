import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

/**
 * A quoted heredoc to the eye once the 300 spaces wrap: `$(touch PWNED_heredoc)` drawn as its body, text `tee` writes.
 * It is an argument of `tee` on the heredoc's first line, unquoted, and runs.
 */
const HEREDOC = `tee notes.md <<'EOF'${' '.repeat(300)}$(touch PWNED_heredoc)\nEOF`;

/** The rows the block is drawn in, as a person sees them: the text of each, by where its characters stand on screen. */
function drawnRows(code: Locator): Promise<string[]> {
  return code.evaluate((element) => {
    const rows = new Map<number, string>();
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (let offset = 0; offset < text.length; offset++) {
        if (text[offset] === '\n') continue;
        range.setStart(node, offset);
        range.setEnd(node, offset + 1);
        const top = Math.round(range.getBoundingClientRect().top);
        rows.set(top, (rows.get(top) ?? '') + text[offset]);
      }
    }
    return [...rows.entries()].sort(([a], [b]) => a - b).map(([, row]) => row);
  });
}

describe('a long run of spaces in a command', () => {
  it('is one marker on the line it is on: `$(touch` is drawn on the row of `tee`, never at the start of a row', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: HEREDOC } }] }, { text: 'unused' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Do it');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await card.getByText('This call contains long runs of spaces or tabs (1).', { exact: false }).waitFor();
    await card.getByText('2 lines', { exact: true }).waitFor();

    const code = card.locator('pre[data-language="shell"] code');
    expect((await code.innerText()).split('\n')).toStrictEqual(["tee notes.md <<'EOF'␠×300$(touch PWNED_heredoc)", 'EOF']);
    const rows = await drawnRows(code);
    expect(rows).toStrictEqual(["tee notes.md <<'EOF'␠×300$(touch PWNED_heredoc)", 'EOF']);
    expect(rows.filter((row) => row.trimStart().startsWith('$(touch'))).toStrictEqual([]);
    expect(await card.locator('.blank-run').allInnerTexts()).toStrictEqual(['␠×300']);
    // In view as it is, no scrolling needed.
    expect(await card.getByText('A line is wider than the card', { exact: false }).count()).toBe(0);
  });

  it('draws the marker from the shipped font wherever it is shown: the block, the card\'s warning, the bar\'s and Waiting for you', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: HEREDOC } }, { name: 'terminal', arguments: { command: 'pwd' } }] }, { text: 'unused' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Do it');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await chat.waitForStatus(chat.card(1), 'Waiting for your decision');
    // The face the app ships, loaded: not a font of this machine's that happens to hold ␠ (it would pass what follows).
    const faces = await chat.page.evaluate(async () => {
      const loaded = await document.fonts.load("16px 'Airlock Marks'", '␠');
      return loaded.map((face) => ({ family: face.family.replaceAll('"', ''), status: face.status }));
    });
    expect(faces).toStrictEqual([{ family: 'Airlock Marks', status: 'loaded' }]);
    const shown = {
      block: card.locator('.blank-run[data-folded="true"]'),
      cardWarning: card.locator('code:not(:has(.blank-run))').filter({ hasText: /^␠×/ }).first(),
      barWarning: chat.page.getByRole('region', { name: 'Waiting tool calls' }).locator('code').filter({ hasText: /^␠/ }).first(),
      waitingFor: chat.page.getByRole('region', { name: 'Waiting for you' }).locator('.waiting-preview').filter({ hasText: '␠×300' }),
    };
    for (const [where, element] of Object.entries(shown)) {
      const drawn = await element.evaluate(async (node) => {
        const style = getComputedStyle(node);
        const font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        await document.fonts.load(font, '␠');
        /** The pixels of one character as `face` draws it. */
        const ink = (char: string, face: string) => {
          const canvas = document.createElement('canvas');
          canvas.width = 64;
          canvas.height = 64;
          const context = canvas.getContext('2d')!;
          context.font = face;
          context.fillText(char, 8, 48);
          return context.getImageData(0, 0, 64, 64).data.join(',');
        };
        const shipped = `${style.fontWeight} ${style.fontSize} 'Airlock Marks'`;
        // U+0378 is no character: every font draws it as its empty box, as it draws a character it lacks.
        return { inked: ink('␠', font) !== ink('', font), box: ink('␠', font) === ink('\u0378', font), shipped: ink('␠', font) === ink('␠', shipped) };
      });
      expect({ where, ...drawn }).toStrictEqual({ where, inked: true, box: false, shipped: true });
    }
  });

  it('keeps a line wider than the card on one row, says so, and scrolls to its end', async () => {
    const command = `echo ${'word '.repeat(200)}; touch PWNED_far`;
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command } }] }, { text: 'unused' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Do it');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await card.getByText('A line is wider than the card: scroll it sideways to read all of it.', { exact: true }).waitFor();
    const code = card.locator('pre[data-language="shell"] code');
    expect(await drawnRows(code)).toStrictEqual([command]);
    const block = card.locator('pre[data-language="shell"]');
    const end = await block.evaluate((pre) => {
      pre.scrollLeft = pre.scrollWidth;
      const box = pre.getBoundingClientRect();
      const range = document.createRange();
      const text = pre.querySelector('code')!.firstChild!;
      range.setStart(text, text.textContent!.length - 1);
      range.setEnd(text, text.textContent!.length);
      const last = range.getBoundingClientRect();
      // Scrolled to a whole pixel: the last character may stand a fraction of one past the edge.
      return { inside: last.left >= box.left && last.right <= box.right + 1 };
    });
    expect(end).toStrictEqual({ inside: true });
  });
});

/** Reads as one `echo` continued over three lines; the space after the first backslash ends that line, and `rm` runs. */
const ESCAPED_SPACE_COMMAND = 'echo "Cleanup plan, printed only:" \\ \n  rm -rf victim \\\n  && echo "(nothing was deleted)"';

describe('spaces at the end of a line or around a one-line value', () => {
  it('draws the space after a backslash that ends a line, and warns that the backslash does not continue it', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: ESCAPED_SPACE_COMMAND } }] }, { text: 'unused' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Clean up');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    const code = card.locator('pre[data-language="shell"] code');
    expect(await drawnRows(code)).toStrictEqual(['echo "Cleanup plan, printed only:" \\␠', '  rm -rf victim \\', '  && echo "(nothing was deleted)"']);
    expect(await card.locator('.blank-run').allInnerTexts()).toStrictEqual(['␠']);
    const warning = await card.locator('.hidden-chars-warning').innerText();
    expect(warning).toContain('This call contains spaces or tabs at the end of a line or around a one-line value (1).');
    expect(warning).toContain('A line ends in a backslash followed by spaces or tabs: that backslash does not continue the line');
  });

  it('draws the space a path ends in, and the Waiting-for-you list offers Review, not Allow', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt ', content: 'from the model' } }] }, { text: 'unused' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Write notes');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    expect(await card.locator('.argument-list code').first().innerText()).toBe('notes.txt␠');
    await card.getByText('This call contains spaces or tabs at the end of a line or around a one-line value (1).', { exact: false }).waitFor();
    const waiting = chat.page.getByRole('region', { name: 'Waiting for you' });
    await waiting.getByRole('button', { name: /^Review write_file “path: notes\.txt␠ · content: .*” in Write notes$/ }).waitFor();
    expect(await waiting.getByRole('button', { name: /^Allow write_file / }).count()).toBe(0);
    expect(await waiting.locator('.waiting-preview').innerText()).toContain('path: notes.txt␠');
  });
});
