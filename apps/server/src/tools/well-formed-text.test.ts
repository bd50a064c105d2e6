import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from './index';
import { tempFolder, toolNamed } from './test-support';

// Found from outside: `printf %s "A\uD800B"` was shown with `\u{D800}` and bash got EF BF BD (U+FFFD), so
// `touch a\uD800` made `a�`: a value shown otherwise than it ran.
describe('a lone surrogate in what a tool passes to a process, a file or a path', () => {
  it('is refused before a card, for every built-in tool that passes text on; whole characters pass', async () => {
    await using workspace = await tempFolder();
    const tools = createBuiltinTools({ workspace: workspace.path });
    const calls: [string, Record<string, unknown>][] = [
      ['terminal', { command: 'printf %s "A\uD800B"' }],
      ['python', { code: 'print("\uDC00")' }],
      ['write_file', { path: 'a\uD800.txt', content: 'x' }],
      ['write_file', { path: 'a.txt', content: 'half \uDBFF' }],
      ['read_file', { path: 'a\uDFFF' }],
      ['list_directory', { path: '\uD800' }],
    ];
    for (const [name, args] of calls) {
      const checked = toolNamed(tools, name).parameters.safeParse(args);
      expect({ name, success: checked.success }).toStrictEqual({ name, success: false });
      expect(checked.error?.issues[0]?.message).toMatch(/holds a lone surrogate \(half of a character/);
    }
    const whole: [string, Record<string, unknown>][] = [
      ['terminal', { command: 'echo "\u{1F600} \uD83D\uDE00 日本"' }],
      ['python', { code: 'print("\u{1D5C0}")' }],
      ['write_file', { path: '\u{1F600}.txt', content: '\uD83D\uDE00' }],
    ];
    for (const [name, args] of whole) expect({ name, success: toolNamed(tools, name).parameters.safeParse(args).success }).toStrictEqual({ name, success: true });
  });
});

// Found from outside: write_file {"path": "notes.txt\n"} was drawn as `notes.txt` (only a "2 lines" label), and Allow
// made a second file, `notes.txt` and a line break, beside the one the card named.
describe('a line break or other control character in a file tool\'s path', () => {
  it('is refused before a card, naming the character; a path without one passes', async () => {
    await using workspace = await tempFolder();
    const tools = createBuiltinTools({ workspace: workspace.path });
    const calls: [string, Record<string, unknown>, string][] = [
      ['write_file', { path: 'notes.txt\n', content: 'new content\n' }, 'U+000A'],
      ['write_file', { path: 'a\rb.txt', content: 'x' }, 'U+000D'],
      ['read_file', { path: 'notes.txt\t' }, 'U+0009'],
      ['read_file', { path: 'x\u0085y' }, 'U+0085'],
      ['list_directory', { path: 'src\n' }, 'U+000A'],
      ['list_directory', { path: '\u001B[2Jsrc' }, 'U+001B'],
    ];
    for (const [name, args, code] of calls) {
      const checked = toolNamed(tools, name).parameters.safeParse(args);
      expect({ name, success: checked.success }).toStrictEqual({ name, success: false });
      expect(checked.error?.issues[0]?.message).toBe(
        `the path holds a line break, tab or other control character (${code}), which no file name here takes and a card cannot show as part of a name: name the file without it`,
      );
    }
    const fine: [string, Record<string, unknown>][] = [
      ['write_file', { path: 'notes.txt', content: 'two\nlines\n' }],
      ['read_file', { path: 'caf\u00E9 \u65E5.txt' }],
      ['list_directory', {}],
    ];
    for (const [name, args] of fine) expect({ name, success: toolNamed(tools, name).parameters.safeParse(args).success }).toStrictEqual({ name, success: true });
  });
});
