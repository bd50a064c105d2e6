/**
 * What a person may safely be shown of a string that a model wrote: every character that could hide,
 * reorder or disguise text is replaced by an escape, `\u{HEX}` (upper-case hexadecimal, no padding). A letter
 * disguises text when it stands in a word of Latin letters but comes from a script whose letters look like them
 * (`аpple.com` with a Cyrillic `а`): escaped too. A word all in one such script (`привет`) is left as it is. A letter
 * or digit that passes for an ASCII one (`ɡithub.com` with U+0261, `ｇ`, `𝗀`, `ⅼ`) is escaped wherever it stands.
 *
 * A literal backslash stays as it is, except one followed by `u{`, which is escaped as `\u{5C}`: so in the
 * flat text every `\u{…}` is an escape, and `fromVisibleNotation` gives back the original exactly.
 */

/** Why a character was escaped. Everything but `backslash` is a hidden character. */
export type EscapeClass =
  | 'control'
  | 'bidi'
  | 'invisible'
  | 'line-separator'
  | 'variation-selector'
  | 'tag'
  | 'unusual-space'
  | 'lone-surrogate'
  | 'private-use'
  | 'unassigned'
  /**
   * A Cyrillic, Greek, Armenian or Cherokee letter in a word that also holds Latin letters; or, anywhere, a letter or
   * digit outside ASCII that passes for an ASCII one (`ɡ` U+0261, `ı`, `ᴀ`, `ｇ`, `𝗀`, `ⅼ`, Lisu, Coptic).
   */
  | 'look-alike'
  /**
   * In code (a command, a script): a character drawn like the punctuation the shell or the language reads as syntax
   * (a quote, a backslash, `$`, `|`, `;` …) that is not it, so the code looks quoted or escaped where it is not.
   */
  | 'look-alike-symbol'
  /** A space in an argument's name (only there): `dry_run ` is another name than `dry_run`, which the tool ignores. */
  | 'name-space'
  | 'backslash';

export type VisibleSegment =
  | { kind: 'text'; text: string }
  | {
      kind: 'escape';
      /** The escape as shown, e.g. `\u{202E}`. */
      text: string;
      codePoint: number;
      class: EscapeClass;
    };

export interface VisibleText {
  /** Plain runs and escapes, in order; two text segments are never adjacent. */
  segments: VisibleSegment[];
  /** How many characters were escaped because they could hide or reorder text (literal backslashes not counted). */
  hiddenCount: number;
  /** Lines as a person counts them: one more than the number of `\n`. */
  lineCount: number;
}

const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const VARIATION_SELECTOR = /\p{Variation_Selector}/u;
const TAG = /[\u{E0000}-\u{E007F}]/u;
const CONTROL = /\p{Cc}/u;
const LINE_SEPARATOR = /[\p{Zl}\p{Zp}]/u;
const LONE_SURROGATE = /\p{Cs}/u;
const PRIVATE_USE = /\p{Co}/u;
const UNASSIGNED = /\p{Cn}/u;
/** Format characters and code points that fonts draw as nothing, plus blanks that are not a plain space. */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\u2800]/u;
const UNUSUAL_SPACE = /[^\P{Zs} ]/u;

/** One test for the common case: anything that needs a closer look. */
const SUSPECT = /[^\t\n\x20-\x7E]/u;

/**
 * A word as a person reads one: letters, their marks and digits, with no space or punctuation between. A character
 * drawn as nothing does not end one (it is escaped anyway, and must not split `а\u{200B}pple` out of sight).
 */
const WORD = /[\p{L}\p{M}\p{N}\p{Cf}\p{Default_Ignorable_Code_Point}]+/gu;
const LATIN = /\p{Script=Latin}/u;
/** Scripts with letters drawn like Latin ones. */
const LOOK_ALIKE_SCRIPT = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}]/u;

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
/**
 * Letters that pass for ASCII ones whatever their script property says, so they are not left to the word rule
 * above (they are Latin themselves, or of a script nobody writes file names in): dotless `ı` and `ȷ`, kra `ĸ`
 * (a small capital K); IPA Extensions (`ɡ` U+0261, `ɑ`); Phonetic Extensions and their Supplement (small capitals
 * `ᴀ`); Letterlike Symbols and Number Forms (`ℓ`, `ⅼ`, `ↄ`); Latin Extended-C, Coptic (`ⲟ`); Lisu (`ꓲ`, `ꓮ`);
 * Latin Extended-D and -E; Mathematical Alphanumeric Symbols (`𝗀`); Latin Extended-G.
 */
const ASCII_LOOK_ALIKE_BLOCK =
  /[ıĸȷ\u0250-\u02AF\u1D00-\u1DBF\u2100-\u218F\u2C60-\u2CFF\uA4D0-\uA4FF\uA720-\uA7FF\uAB30-\uAB6F\u{1D400}-\u{1D7FF}\u{1DF00}-\u{1DFFF}]/u;
/**
 * Latin Extended-B and Latin Extended Additional: a letter there with a canonical decomposition is an ASCII letter
 * with a visible accent (`ș`, `ǎ` of pinyin, Vietnamese `ạ`) and is left as it is, like `é`; one without is a shape of
 * its own (a hook, a stroke, a turned letter: `ƅ`, `ƙ`, `ȝ`, `ɋ`) drawn close enough to an ASCII letter to pass for it.
 */
const LATIN_EXTENDED_SHAPES = /[\u0180-\u024F\u1E00-\u1EFF]/u;
/** Every character whose compatibility form holds ASCII letters or digits is Latin or Common (checked on Unicode 15). */
const COMPATIBILITY_CANDIDATE = /[\p{Script=Latin}\p{Script=Common}]/u;
const ASCII_LETTER_OR_DIGIT = /[A-Za-z0-9]/;
/** Fullwidth ASCII, which CJK text is written with (`２０２４年`, `ＰＤＦファイル`): left alone in a word of CJK letters. */
const FULLWIDTH = /[\uFF01-\uFF5E]/u;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u;

/**
 * A letter or digit outside ASCII that a person takes for an ASCII one. The general rule: its compatibility form
 * (NFKC) is another text that holds ASCII letters or digits (fullwidth `ｇ`, `𝗀`, `ⅼ`, `ſ`, `ª`, `²`); plus the
 * blocks above, whose letters look like ASCII without saying so. Accented letters of Latin-1 and Latin Extended-A
 * (`é`, `ñ`, `ü`, `ğ`) and other scripts' letters are not: non-English file names stay as they are.
 */
function passesForAscii(char: string): boolean {
  if (char.charCodeAt(0) < 0x80 || !LETTER_OR_DIGIT.test(char)) return false;
  if (ASCII_LOOK_ALIKE_BLOCK.test(char)) return true;
  if (LATIN_EXTENDED_SHAPES.test(char) && char.normalize('NFD') === char) return true;
  if (!COMPATIBILITY_CANDIDATE.test(char)) return false;
  const compatible = char.normalize('NFKC');
  return compatible !== char && ASCII_LETTER_OR_DIGIT.test(compatible);
}

/**
 * Where the look-alike letters are (UTF-16 offsets): those that pass for ASCII ones, and those that stand among
 * Latin letters (or letters passing for them) in one word but come from a script drawn like Latin. Linear in the
 * length: each word is looked at a bounded number of times.
 */
function lookAlikeOffsets(value: string): Set<number> {
  const offsets = new Set<number>();
  for (const word of value.matchAll(WORD)) {
    const text = word[0];
    if (!SUSPECT.test(text)) continue;
    const inCjk = FULLWIDTH.test(text) && CJK.test(text);
    const scriptLetters: number[] = [];
    let passing = false;
    let offset = word.index;
    for (const char of text) {
      if (passesForAscii(char) && !(inCjk && FULLWIDTH.test(char))) {
        offsets.add(offset);
        passing = true;
      } else if (LOOK_ALIKE_SCRIPT.test(char)) {
        scriptLetters.push(offset);
      }
      offset += char.length;
    }
    if (scriptLetters.length > 0 && (passing || LATIN.test(text))) for (const letter of scriptLetters) offsets.add(letter);
  }
  return offsets;
}

/**
 * Outside ASCII, punctuation, symbols and modifier letters (`ʼ` U+02BC, `ˈ`), and the letters drawn like `'` or
 * `|` (saltillo U+A78B/U+A78C, the click letters U+01C0–U+01C3): in code, any of them may pass for syntax.
 */
const CODE_LOOK_ALIKE = /[\p{P}\p{S}\p{Lm}ǀ-ǃꞋꞌ]/u;

/**
 * In a call's argument that is not code (a file's text a later call runs, an MCP tool's string that may be a command):
 * the characters drawn like the ASCII syntax that neutralises code — a backslash, a straight or back quote, `#` — so
 * `∖$(touch X)` (U+2216) cannot read as an escaped `\$(…)`, nor `♯ $(…)` as a comment. Typographic quotes
 * (U+2018/2019, U+201C/201D), common in prose, are left as they are.
 */
const SYNTAX_LOOK_ALIKE =
  /[\u2216\u29F5\u29F9\u2572\u27CD\uFE68\uFF3C\u00B4\u02B9-\u02BE\u02C8\u02CA\u02CB\u02DD\u02EE\u0374\u0384\u055A\u05F3\u05F4\u07F4\u07F5\u1FBD\u1FBF\u1FEF\u1FFD\u1FFE\u201B\u201F\u2032-\u2037\u275B-\u275E\u3003\u301D-\u301F\uA78B\uA78C\uFF02\uFF03\uFF07\uFF40\uFE5F\u266F\u2317\u22D5\u2A68\u2A69\u02BF\u02C1\u055B\u055D\u2E0C\u2E0D\u2E1C\u2E42\uA6F4\u{1F676}\u{1F677}\u01C0-\u01C3]/u;

function classify(char: string): EscapeClass | null {
  if (!SUSPECT.test(char)) return null;
  if (CONTROL.test(char)) return 'control';
  if (BIDI.test(char)) return 'bidi';
  if (TAG.test(char)) return 'tag';
  if (VARIATION_SELECTOR.test(char)) return 'variation-selector';
  if (LINE_SEPARATOR.test(char)) return 'line-separator';
  if (LONE_SURROGATE.test(char)) return 'lone-surrogate';
  if (INVISIBLE.test(char)) return 'invisible';
  if (UNUSUAL_SPACE.test(char)) return 'unusual-space';
  if (PRIVATE_USE.test(char)) return 'private-use';
  if (UNASSIGNED.test(char)) return 'unassigned';
  return null;
}

export function escapeNotation(codePoint: number): string {
  return `\\u{${codePoint.toString(16).toUpperCase()}}`;
}

export interface VisibleTextOptions {
  /**
   * For a name or label, shown on one line: a line break or tab in it is escaped and counted as hidden too, so it
   * cannot start what looks like another line of the card. Default false: values keep their lines.
   */
  singleLine?: boolean;
  /**
   * For code that runs (a command, a script): every character outside ASCII drawn like punctuation is escaped and
   * counted too (`'look-alike-symbol'`): `ꞌ$(…)ꞌ` with U+A78C looks single-quoted and is not. Default false.
   */
  code?: boolean;
  /**
   * For a call's argument that is not code: those drawn like a backslash, a straight or back quote or `#` are escaped
   * and counted (see SYNTAX_LOOK_ALIKE). Default false: a tool's result, a rule's text keep them.
   */
  syntax?: boolean;
}

/** Splits a string into what can be shown as it is and escapes for everything else. Linear in its length. */
export function toVisibleText(value: string, options: VisibleTextOptions = {}): VisibleText {
  const singleLine = options.singleLine === true;
  const code = options.code === true;
  const syntax = options.syntax === true;
  const lookAlikes = SUSPECT.test(value) ? lookAlikeOffsets(value) : undefined;
  const segments: VisibleSegment[] = [];
  let hiddenCount = 0;
  let lineCount = 1;
  let runStart = 0;
  let index = 0;
  while (index < value.length) {
    const codePoint = value.codePointAt(index)!;
    const width = codePoint > 0xffff ? 2 : 1;
    const char = value.slice(index, index + width);
    if (char === '\n' && !singleLine) lineCount += 1;
    const escapeClass =
      char === '\\'
        ? value.startsWith('u{', index + 1)
          ? 'backslash'
          : null
        : singleLine && (char === '\n' || char === '\t')
          ? 'control'
          : (classify(char) ?? (codePoint > 0x7f && (code ? CODE_LOOK_ALIKE : syntax ? SYNTAX_LOOK_ALIKE : null)?.test(char) === true ? 'look-alike-symbol' : lookAlikes?.has(index) === true ? 'look-alike' : null));
    if (escapeClass !== null) {
      if (runStart < index) segments.push({ kind: 'text', text: value.slice(runStart, index) });
      segments.push({ kind: 'escape', text: escapeNotation(codePoint), codePoint, class: escapeClass });
      if (escapeClass !== 'backslash') hiddenCount += 1;
      runStart = index + width;
    }
    index += width;
  }
  if (runStart < value.length) segments.push({ kind: 'text', text: value.slice(runStart) });
  return { segments, hiddenCount, lineCount };
}

/** The flat form, for places that cannot style an escape differently from text. */
export function visibleTextString(visible: VisibleText): string {
  return visible.segments.map((segment) => segment.text).join('');
}

/** The inverse of `visibleTextString(toVisibleText(value))`. */
export function fromVisibleNotation(flat: string): string {
  return flat.replace(/\\u\{(10[0-9A-F]{4}|[0-9A-F]{1,5})\}/g, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
}

/**
 * The escapes a model's prose keeps (a reply, its reasoning, a person's reason): characters that hide or reorder text
 * (`\u{202E}` turning a sentence around, a zero-width space inside a word, a control character, which a terminal
 * would obey). Letters of any script, look-alike or not, non-breaking and other spaces, emoji variation selectors,
 * and the joiners emoji sequences and Persian words are made with stay as written: in prose they are the writer's own,
 * and nothing in prose runs. A backslash before `u{` is escaped, as everywhere, so every `\u{…}` shown is an escape.
 */
const PROSE_ESCAPES: ReadonlySet<EscapeClass> = new Set(['control', 'bidi', 'invisible', 'tag', 'line-separator', 'lone-surrogate']);
/** Zero-width non-joiner and joiner. */
const PROSE_OWN: ReadonlySet<number> = new Set([0x200c, 0x200d]);

/**
 * Prose as it may be shown: `toVisibleText` with only the escapes prose keeps (`PROSE_ESCAPES`). A carriage return
 * stays as written only as the first half of a CR LF line end: alone, a terminal moves back to the line's start with
 * it, and what follows is drawn over what came before (`I will upload ~/.ssh/id_rsa\rI will only read README.md`
 * shows only the second sentence). Linear in its length.
 */
export function toVisibleProse(value: string): VisibleText {
  const visible = toVisibleText(value);
  if (!visible.segments.some((segment) => segment.kind === 'escape')) return visible;
  const segments: VisibleSegment[] = [];
  let hiddenCount = 0;
  for (const [index, segment] of visible.segments.entries()) {
    const next = visible.segments[index + 1];
    const lineEnd = segment.kind === 'escape' && segment.codePoint === 0x0d && next?.kind === 'text' && next.text.startsWith('\n');
    const kept = segment.kind === 'escape' && !lineEnd && (segment.class === 'backslash' || (PROSE_ESCAPES.has(segment.class) && !PROSE_OWN.has(segment.codePoint)));
    if (kept) {
      segments.push(segment);
      if (segment.class !== 'backslash') hiddenCount += 1;
      continue;
    }
    const text = segment.kind === 'text' ? segment.text : String.fromCodePoint(segment.codePoint);
    const last = segments.at(-1);
    if (last?.kind === 'text') last.text += text;
    else segments.push({ kind: 'text', text });
  }
  return { segments, hiddenCount, lineCount: visible.lineCount };
}
