/**
 * What a person may safely be shown of a string that a model wrote: every character that could hide,
 * reorder or disguise text is replaced by an escape, `\u{HEX}` (upper-case hexadecimal, no padding). A letter
 * disguises text when it stands in a word of Latin letters but comes from a script whose letters look like them
 * (`аpple.com` with a Cyrillic `а`): escaped too. A word all in one such script (`привет`) is left as it is. A letter
 * or digit that passes for an ASCII one (`ɡithub.com` with U+0261, `ｇ`, `𝗀`, `ⅼ`) is escaped wherever it stands.
 * A combining mark with nothing to sit on, or stacked past what a letter carries, is escaped too: it is drawn over a
 * blank as a quote, or over the lines around it. In code, every character outside ASCII is escaped; in an argument
 * that may run as code, all but accented Latin letters and CJK (`mayRun`). A one-line name not in NFC has its
 * characters outside ASCII escaped (`nfc`).
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
   * A Cyrillic, Greek, Armenian or Cherokee letter, or a digit outside ASCII (`evi١.com`), in a word that also holds
   * Latin letters; or, anywhere, a letter or digit outside ASCII that passes for an ASCII one (`ɡ` U+0261, `ı`, `ᴀ`,
   * `ｇ`, `𝗀`, `ⅼ`, Lisu, Coptic, Gothic).
   */
  | 'look-alike'
  /**
   * In a call's argument (`syntax`): a character drawn like the syntax that neutralises code (a quote, a backslash,
   * `#`) that is not it, so the code looks quoted or escaped where it is not.
   */
  | 'look-alike-symbol'
  /**
   * In code (a command, a script): any other character outside printable ASCII, a plain letter of any script among
   * them. Each session found another letter drawn like shell syntax (Hebrew `י` like `'`, Canadian syllabics `ᐠ`
   * like a backquote, `ᐳ` like `>`), and inside real quotes one still changes how a reader pairs them: in code, only
   * ASCII is drawn as itself. Not a hidden character: counted apart (`nonAsciiCount`), so clients can say what it is.
   */
  | 'non-ascii-in-code'
  /**
   * A combining mark with no letter or digit to sit on (after a blank, punctuation, a line's start or an escape): drawn
   * over the blank or the character before it, as a quote or a tick; or one past those a letter carries (more than
   * `MAX_MARKS` nonspacing marks, or more than `MAX_GENERIC_MARKS` of the general-purpose ones), drawn over the
   * lines above or below.
   */
  | 'combining-mark'
  /**
   * In a one-line argument (a path, a name) that is not in Unicode's composed form (NFC): every character outside
   * ASCII, so `cafe\u{301}.txt` (a combining accent) is not drawn as `café.txt`, another file of the same look.
   */
  | 'not-nfc'
  /**
   * In a one-line argument (a path, a name) or one that may run as code (`mayRun`): a character drawn like the ASCII
   * that splits a path, an address or an option (`.`, `/`, `\`, `:`, `-`), or joins the words of one name (`_`), that
   * is not it, so `ran\u{2024}log` (one dot leader) is not drawn as `ran.log`, nor `my\u{FF3F}file` as `my_file`:
   * another file.
   */
  | 'look-alike-punctuation'
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
  /**
   * How many characters were escaped for the person to read with care: those that could hide, reorder or disguise
   * text, and in code those outside ASCII (`nonAsciiCount` of them). Literal backslashes are not counted.
   */
  hiddenCount: number;
  /** Of `hiddenCount`, the characters outside ASCII escaped only because they stand in code (`non-ascii-in-code`). */
  nonAsciiCount: number;
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
/** Digits outside ASCII, drawn like Latin letters or ASCII digits (`١` like l, `०` like o); a zero drawn like `.` is `PATH_LOOK_ALIKE`'s. */
const OTHER_DIGIT = /[^\P{Nd}\p{ASCII}]/u;

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
/**
 * A mark drawn beside its letter, taking room of its own (the vowel signs of Brahmic scripts and Myanmar): in a word,
 * it is read as a sign like a letter, so a word with one drawn like no ASCII one is no whole-script look-alike
 * (Burmese `ဝါ`), and one drawn like an ASCII letter is a look-alike like a letter (the Malayalam anusvara `ം`, an o).
 */
const SPACING_MARK = /\p{Mc}/u;
/**
 * Letters that pass for ASCII ones whatever their script property says, so they are not left to the word rule
 * above (they are Latin themselves, or of a script nobody writes file names in): dotless `ı` and `ȷ`, kra `ĸ`
 * (a small capital K); IPA Extensions (`ɡ` U+0261, `ɑ`); Phonetic Extensions and their Supplement (small capitals
 * `ᴀ`); Letterlike Symbols and Number Forms (`ℓ`, `ⅼ`, `ↄ`); Latin Extended-C, Coptic (`ⲟ`); Lisu (`ꓲ`, `ꓮ`);
 * Latin Extended-D and -E; Mathematical Alphanumeric Symbols (`𝗀`); Latin Extended-G. Then the scripts of the past
 * or of few readers whose letters Unicode's confusables (UTS #39) maps to ASCII ones, a block each: Old Italic and
 * Gothic (`𐌉`, `𐍉`), Lycian, Carian and the Coptic epact numbers, Deseret and Osage (`𐐄`, `𐓂` O), Elbasan, Ahom,
 * Warang Citi, Miao and Mende Kikakui's digits (`𞣇` l). A name in them is far rarer than a look-alike, so their
 * letters drawn like no ASCII one are escaped with the others rather than told apart from them.
 */
const ASCII_LOOK_ALIKE_BLOCK =
  /[ıĸȷ\u0250-\u02AF\u1D00-\u1DBF\u2100-\u218F\u2C60-\u2CFF\uA4D0-\uA4FF\uA720-\uA7FF\uAB30-\uAB6F\u{10280}-\u{1029F}\u{102A0}-\u{102DF}\u{102E1}-\u{102FF}\u{10300}-\u{1034F}\u{10400}-\u{1044F}\u{104B0}-\u{104FF}\u{10500}-\u{1052F}\u{11700}-\u{1174F}\u{118A0}-\u{118FF}\u{16F00}-\u{16F9F}\u{1D400}-\u{1D7FF}\u{1DF00}-\u{1DFFF}\u{1E800}-\u{1E8DF}]/u;
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
 * Latin letters (or letters passing for them) in one word but come from a script drawn like Latin, or are drawn like
 * a Latin one themselves (`LATIN_LOOK_ALIKE`: Hebrew `ןogin`). `names`: the value names something or runs (a path, a
 * name, a command); there a word with no Latin letter is one too when every letter and digit of it is drawn like an
 * ASCII one (UTS #39's whole-script confusable: `ΤΟΚΕΝ.ΤΧΤ` in Greek capitals, `аррӏе` in Cyrillic, read as TOKEN.TXT
 * and apple), and its letters drawn like Latin ones are when it mixes the letters of two such scripts (Greek and
 * Cyrillic in `ΤОΚЕΝλ`). A word of digits alone (`١٠١`) is one only outside text of its script (`الصفحة ١٠١`, a page
 * number): see `ownLetterIn`. A spacing mark counts there as a letter (`SPACING_MARK`). Linear in the length: each
 * word is looked at a bounded number of times.
 */
function lookAlikeOffsets(value: string, names: boolean): Set<number> {
  const offsets = new Set<number>();
  const ownLetters = new Map<RegExp, boolean>();
  for (const word of value.matchAll(WORD)) {
    const text = word[0];
    if (!SUSPECT.test(text)) continue;
    const inCjk = FULLWIDTH.test(text) && CJK.test(text);
    const scriptLetters: number[] = [];
    const drawn: number[] = [];
    const scripts = new Set<RegExp>();
    let passing = false;
    let unlike = false;
    let lettered = false;
    let offset = word.index;
    for (const char of text) {
      if (passesForAscii(char) && !(inCjk && FULLWIDTH.test(char))) {
        offsets.add(offset);
        passing = true;
      } else if (LOOK_ALIKE_SCRIPT.test(char) || drawnLikeLatin(char) || (OTHER_DIGIT.test(char) && !PATH_LOOK_ALIKE.test(char))) {
        scriptLetters.push(offset);
      }
      if (names && char.charCodeAt(0) >= 0x80 && (LETTER_OR_DIGIT.test(char) || SPACING_MARK.test(char)) && !PATH_LOOK_ALIKE.test(char)) {
        if (LETTER.test(char)) {
          lettered = true;
          const script = DRAWN_LIKE_LATIN_SCRIPTS.find((candidate) => candidate.test(char));
          if (script !== undefined) scripts.add(script);
        }
        if (drawnLikeLatin(char)) drawn.push(offset);
        else unlike = true;
      }
      offset += char.length;
    }
    if (scriptLetters.length > 0 && (passing || LATIN.test(text))) for (const letter of scriptLetters) offsets.add(letter);
    if (drawn.length === 0 || passing || LATIN.test(text)) continue;
    const whole = !unlike && (lettered || !ownLetterIn(value, scriptOf(value, drawn[0]!), ownLetters));
    if (whole || scripts.size > 1) for (const letter of drawn) offsets.add(letter);
  }
  return offsets;
}

/**
 * In a call's argument that is not code (a file's text a later call runs, an MCP tool's string that may be a command):
 * the characters drawn like the ASCII syntax that neutralises code — a backslash, a straight or back quote, `#` — so
 * `∖$(touch X)` (U+2216) cannot read as an escaped `\$(…)`, nor `♯ $(…)` as a comment. Typographic quotes
 * (U+2018/2019, U+201C/201D), common in prose, are left as they are.
 */
const SYNTAX_LOOK_ALIKE =
  /[\u2216\u29F5\u29F9\u2572\u27CD\uFE68\uFF3C\u00B4\u02B9-\u02BE\u02C8\u02CA\u02CB\u02DD\u02EE\u0374\u0384\u055A\u05F3\u05F4\u07F4\u07F5\u1FBD\u1FBF\u1FEF\u1FFD\u1FFE\u201B\u201F\u2032-\u2037\u275B-\u275E\u3003\u301D-\u301F\uA78B\uA78C\uFF02\uFF03\uFF07\uFF40\uFE5F\u266F\u2317\u22D5\u2A68\u2A69\u02BF\u02C1\u055B\u055D\u2E0C\u2E0D\u2E1C\u2E42\uA6F4\u{1F676}\u{1F677}\u01C0-\u01C3]/u;

/**
 * Characters drawn like `.`, `/`, `\`, `:` or `-`, which split a path, an address or an option, or like `_`, which
 * joins the words of one name (`dry_run`, `my_file.txt`). First, every character Unicode's confusables (UTS #39,
 * confusables.txt of 2021-05-29) maps to one of them or to a run of them (`‥` to `..`, `⫽` to `//`, `⑊` to `\\`): dot
 * leaders, the full stops of Armenian (`։`, also drawn like a colon), Hebrew, Arabic, Syriac, Mongolian, Vai, Lisu and
 * Kharoshthi, the Arabic-Indic zeros (`٠`), the visarga of Devanagari and Gujarati, the fraction and division slashes
 * (`⁄` U+2044, `∕` U+2215) and other solidi and reverse solidi, CJK strokes and the katakana `ノ`, the ratio `∶` and
 * the modifier colons (`꞉` U+A789, `ː`), the hyphens and minus signs, the dashed and wavy low lines (`﹍` U+FE4D) and
 * the N'Ko lajanyalan `ߺ`. Then what that list leaves to NFKC or does not hold: the small, fullwidth and halfwidth
 * forms (`．` `／` `＼` `：` `－` `＿`), the ideographic full stop's halfwidth form, other dashes and lines drawn level
 * or low (`ˍ` U+02CD, `▁` U+2581). Then the middle dot `·` and what confusables maps to it (`‧` `⋅` `∙` `•` `・`):
 * between two letters, read as a dot. The prose dashes and the ellipsis are PROSE_DASH's.
 */
const PATH_LOOK_ALIKE = new RegExp(
  // The spacing marks (visarga, the augmentation dot) stand alone, out of the class: each is one character to match.
  `\\u0903|\\u0A83|\\u{1D16D}|[${[
    // UTS #39 confusables of . / \ : - _ and of runs of them.
    '\\u02D0\\u02D7\\u02F8\\u0589\\u05C3\\u0660\\u06D4\\u06F0\\u0701-\\u0704\\u07FA\\u16EC\\u1735\\u1803\\u1809\\u2010-\\u2012',
    '\\u2024\\u2025\\u2041\\u2043\\u2044\\u205A\\u2212\\u2215\\u2216\\u2236\\u244A\\u2571\\u2796\\u27CB\\u27CD\\u29F5\\u29F8\\u29F9\\u2AFB\\u2AFD',
    '\\u2CBA\\u2CC6\\u2CF9\\u2F02\\u2F03\\u3033\\u30CE\\u31D3\\u31D4\\u4E36\\u4E3F\\uA4F8\\uA4FA\\uA4FD\\uA4FE\\uA60E\\uA789\\uFE30\\uFE4D-\\uFE4F\\uFE68\\uFF1A\\uFF3C',
    '\\u{10A50}\\u{1D20F}\\u{1D23A}\\u{1D23B}',
    // Small, fullwidth and halfwidth forms, and other dashes, lines and full stops drawn like them.
    '\\u02CD\\u1361\\u1804\\u2015\\u23AF\\u2500\\u2572\\u2581\\uFE13\\uFE52\\uFE55\\uFE63\\uFF0D-\\uFF0F\\uFF3F\\uFF61',
    // CJK strokes, ideographs and jamo drawn level, and the prolonged sound mark: confusables maps them to a horizontal
    // bar or line (U+2015, U+2500).
    '\\u1173\\u2F00\\u3161\\u30FC\\u31D0\\u4E00\\uFF70\\uFFDA',
    // The middle dot and its confusables.
    '\\u00B7\\u0387\\u1427\\u16EB\\u2022\\u2027\\u2219\\u22C5\\u2E31\\u30FB\\uA78F\\uFF65\\u{10101}',
  ].join('')}]`,
  'u',
);
/**
 * The dashes and the ellipsis of prose (`–` `—` `…`): look-alikes of `-` and `...` only in a value with no blank,
 * which names something (`report–2024.pdf`); in a sentence they are the writer's punctuation.
 */
const PROSE_DASH = /[\u2013\u2014\u2026\uFE58\u2E3A\u2E3B]/u;
/**
 * The small, fullwidth, halfwidth and vertical forms above, which Chinese and Japanese are written with (`修正：テスト`),
 * and the strokes, ideographs, jamo and katakana among them drawn like a slash, a dot or a dash (`ノート`, `丿`, the
 * middle dot `・`, the prolonged sound mark `ー`, `一`, `ㅡ`).
 */
const CJK_FORM = /[\uFE30-\uFE4F\uFE50-\uFE6B\uFF01-\uFF65\uFF70\uFFDA\u1173\u2F00\u2F02\u2F03\u30CE\u30FB\u30FC\u3161\u31D0\u31D3\u31D4\u4E00\u4E36\u4E3F]/u;
/** A letter or digit of CJK text that is not one of those forms: what lets them stand as its own. */
const CJK_LETTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u;
/** What a CJK form must not touch (through other forms) to stand as written: a Latin letter or an ASCII digit. */
const LATIN_OR_DIGIT = /[\p{Script=Latin}0-9]/u;
/**
 * Full stops, colons, digits and letters of scripts other than Latin (`։` U+0589, `׃`, `۔`, `܁`, `፡`, `᠄`, `꘎`, the
 * zeros `٠` `۰`, the visarga `ः`, Lisu, Coptic, Mongolian and Kharoshthi marks, the N'Ko lajanyalan `ߺ`, the middle
 * dot that is Greek's ano teleia), each with its script: it is that script's own only in a word all of that script.
 */
const SCRIPT_STOPS: readonly (readonly [stops: RegExp, script: RegExp])[] = [
  [/[\u0660\u06D4\u06F0]/u, /\p{scx=Arabic}/u],
  [/\u0903/u, /\p{scx=Devanagari}/u],
  [/\u0A83/u, /\p{scx=Gujarati}/u],
  [/[\u00B7\u0387]/u, /\p{scx=Greek}/u],
  [/\u0589/u, /\p{scx=Armenian}/u],
  [/\u05C3/u, /\p{scx=Hebrew}/u],
  [/[\u0701-\u0704]/u, /\p{scx=Syriac}/u],
  [/\u07FA/u, /\p{scx=Nko}/u],
  [/\u1361/u, /\p{scx=Ethiopic}/u],
  [/\u1427/u, /\p{scx=Canadian_Aboriginal}/u],
  [/[\u1803\u1804\u1809]/u, /\p{scx=Mongolian}/u],
  [/[\u2CBA\u2CC6\u2CF9]/u, /\p{scx=Coptic}/u],
  [/[\uA4F8\uA4FA\uA4FD\uA4FE]/u, /\p{scx=Lisu}/u],
  [/\uA60E/u, /\p{scx=Vai}/u],
  [/\u{10A50}/u, /\p{scx=Kharoshthi}/u],
];
const SCRIPT_STOP = /\u0903|\u0A83|[\u00B7\u0387\u0589\u05C3\u0660\u06D4\u06F0\u0701-\u0704\u07FA\u1361\u1427\u1803\u1804\u1809\u2CBA\u2CC6\u2CF9\uA4F8\uA4FA\uA4FD\uA4FE\uA60E\u{10A50}]/u;
/** A word around a script's stop: letters, marks, digits, what is drawn as nothing (escaped anyway), and the stops. */
const STOP_WORD = new RegExp(`(?:[\\p{L}\\p{M}\\p{N}\\p{Cf}\\p{Default_Ignorable_Code_Point}]|${SCRIPT_STOP.source})+`, 'gu');
/** Neither for nor against a script: drawn as nothing (and escaped), or a mark of no script of its own, its base's. */
const OF_ANY_SCRIPT = /[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Script=Inherited}]/u;
const PUNCTUATION = /\p{P}/u;
const ASCII_PATH_SYNTAX = /[./\\:-]/;

/**
 * The letters and digits of the scripts drawn like Latin (`LOOK_ALIKE_SCRIPT`) and of those with a stop of their own
 * (`SCRIPT_STOPS`) that are drawn like ASCII ones. Those Unicode's confusables (UTS #39, confusables.txt of
 * 2021-05-29) maps to ASCII letters or digits, alone or with a mark below (Greek `Α` `Τ` `ο` `ν` and `η` as `n̩`,
 * Cyrillic `А` `Н` `а` `е` `х` `һ` `ӏ` and `Қ` as `K̩`, Armenian `օ` `ս`, Cherokee `Ꭺ` `Ꮯ`, Hebrew `ו` `ס`, Arabic `ا`
 * `ه`, the Arabic-Indic `١` `٥` `٧`, N'Ko, Ethiopic and Canadian syllabics ones, Coptic and Lisu), or to a Latin
 * letter drawn like an ASCII one: a small capital (Greek `κ` `τ` as `ĸ` `ᴛ`, Cyrillic `в` `к` `н` `т` as `ʙ` `ĸ` `ʜ`
 * `ᴛ`, Cherokee small letters), the dotless `ȷ` (Armenian `յ`) and the barred `ꞓ` (Greek `ε` `ϵ`, Cyrillic `є` `ԑ`,
 * drawn like e). Plus Greek `χ` and `ω`, the forms confusables maps Latin chi `ꭓ` and omega `ꞷ` to, drawn like x and w.
 * Then the letters, digits and spacing marks of other living scripts that confusables maps to one ASCII letter or
 * digit: Georgian `ყ` (y) and `ჿ` (o); Malayalam `ഠ` and the anusvara `ം` (o), its `൭` (9); Myanmar `ဝ` (o); the zeros
 * of Bengali, Gurmukhi, Oriya, Tamil, Telugu, Kannada, Malayalam, Thai, Lao, Myanmar and Tirhuta (o, O), with Bengali
 * `৪` `৭`, Gurmukhi `੧` `੪` and Oriya `୨` (8, 9); Oriya `ଠ` (O) and its visarga `ଃ` (8); the anusvaras of Telugu,
 * Kannada and Sinhala (o); Tifinagh `ⴸ` `ⴹ` `ⵏ` `ⵔ` `ⵕ` `ⵝ` (V, E, l, O, Q, X); Bamum `ꛟ` `ꛯ` (V, 2); Runic `ᚷ`
 * `ᛁ` `ᛕ` `ᛖ` (X, l, K, M), with `ᚱ` `ᛒ`, which confusables leaves out, drawn as R and B; listed and not taken as a
 * block, since others of its letters are drawn like a quote (`ᛌ`), which code escapes as such. The ideographic number
 * zero `〇` (O), and the Khmer zero `០` (o, in confusables of Unicode 17). Each script's other letters are drawn like
 * no ASCII one, so its words keep them (`മഠം`, `ყველა`, `๒๐๒๔`, `二〇二四年`, `២០២៤`).
 */
const LATIN_LOOK_ALIKE =
  // The spacing marks stand alone, out of the class: each is one character to match.
  /\u0B03|\u0C02|\u0C82|\u0D02|\u0D82|[\u037A\u037F\u0391\u0392\u0395-\u0397\u0399\u039A\u039C\u039D\u039F\u03A1\u03A4\u03A5\u03A7\u03B1\u03B3\u03B5\u03B7\u03B9\u03BA\u03BD\u03BF\u03C1\u03C3-\u03C5\u03C7\u03C9\u03D2\u03DC\u03E8\u03F0-\u03F3\u03F5\u03F9\u03FA\u0404-\u0406\u0408\u0410\u0412\u0415\u0417\u041A\u041C-\u041E\u0420-\u0423\u0425\u042B\u042C\u042E\u0430-\u0433\u0435\u043A\u043D\u043E\u0440-\u0443\u0445\u0454-\u0456\u0458\u0461\u0474\u0475\u0498\u049A\u049B\u04A2\u04A3\u04AA-\u04AF\u04B2\u04BB\u04BD\u04BF\u04C0\u04C7-\u04CA\u04CD\u04CF\u04D4\u04D5\u04E0\u0501\u050C\u050D\u0511\u051B-\u051D\u054D\u054F\u0555\u0561\u0563\u0566\u0570\u0575\u0578\u057C\u057D\u0581\u0584\u0585\u05D5\u05D8\u05DF\u05E1\u05F0\u0625\u0627\u0647\u0661\u0665\u0667\u0673\u06BE\u06C1\u06D5\u06F1\u06F5\u06F7\u07C0\u07CA\u0966\u09E6\u09EA\u09ED\u0A66\u0A67\u0A6A\u0AE6\u0B20\u0B66\u0B68\u0BE6\u0C66\u0CE6\u0D20\u0D66\u0D6D\u0E50\u0ED0\u101D\u1040\u10E7\u10FF\u1200\u12D0\u13A0-\u13A2\u13A5\u13A9-\u13AC\u13B3\u13B7\u13BB\u13BD\u13C0\u13C2\u13C3\u13CE\u13CF\u13D2\u13D4\u13D5\u13D9\u13DA\u13DE\u13DF\u13E2\u13E6\u13E7\u13EE\u13F3\u13F4\u13FB\u13FC\u142F\u144C\u146D\u146F\u1472\u148D\u14AA\u14BF\u1541\u157C\u157D\u1587\u15AF\u15B4\u15C5\u15DE\u15EA\u15F0\u15F7\u16B1\u16B7\u16C1\u16D2\u16D5\u16D6\u17E0\u1D26\u1D29\u1FBE\u2C85\u2C88\u2C89\u2C8E\u2C92\u2C94\u2C95\u2C98\u2C9A\u2C9E\u2C9F\u2CA2-\u2CA6\u2CA8\u2CAC\u2CCA\u2CCC\u2CD0-\u2CD2\u2D38\u2D39\u2D4F\u2D54\u2D55\u2D5D\u3007\uA4D0-\uA4D4\uA4D6\uA4D7\uA4D9\uA4DA\uA4DC\uA4DD\uA4DF-\uA4E3\uA4E6\uA4E7\uA4EA-\uA4EC\uA4EE\uA4F0\uA4F2-\uA4F4\uA644\uA647\uA698\uA699\uA6DF\uA6EF\uAB70-\uAB72\uAB75\uAB7A-\uAB7C\uAB81\uAB83\uAB8B\uAB90\uAB93\uAB9B\uABA2\uABA9\uABAA\uABAE\uABAF\uABB2\uABB6\uFBA6-\uFBAD\uFE87\uFE88\uFE8D\uFE8E\uFEE9-\uFEEC\u{1EE00}\u{1EE24}\u{1EE64}\u{1EE80}\u{1EE84}\u{102F5}\u{114D0}]/u;

/** Whether `char` is drawn like an ASCII letter or digit it is not (`LATIN_LOOK_ALIKE`), with an accent or not (`Έ`, `ё`). */
function drawnLikeLatin(char: string): boolean {
  if (char.charCodeAt(0) < 0x80) return false;
  if (LATIN_LOOK_ALIKE.test(char)) return true;
  const base = char.normalize('NFD');
  return base !== char && LATIN_LOOK_ALIKE.test(String.fromCodePoint(base.codePointAt(0)!));
}

/** The scripts of `LATIN_LOOK_ALIKE`, each on its own: a word with letters of two of them mixes scripts. */
const DRAWN_LIKE_LATIN_SCRIPTS: readonly RegExp[] = [
  'Greek',
  'Cyrillic',
  'Armenian',
  'Cherokee',
  'Hebrew',
  'Arabic',
  'Nko',
  'Ethiopic',
  'Canadian_Aboriginal',
  'Coptic',
  'Lisu',
  'Devanagari',
  'Gujarati',
  'Bengali',
  'Gurmukhi',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Myanmar',
  'Georgian',
  'Tifinagh',
  'Bamum',
  'Tirhuta',
  'Runic',
  'Khmer',
].map((script) => new RegExp(`\\p{Script=${script}}`, 'u'));
/** Han has one character drawn like Latin (`〇`): its letters are text of its own, but mix with no script (`α版`, alpha version). */
const HAN = /\p{Script=Han}/u;
/** What `scriptOf` gives a character of none of those scripts: no text is of it, so its digits alone read as ASCII ones. */
const NO_SCRIPT = /^$/u;

/** The script of the character at `offset` among `DRAWN_LIKE_LATIN_SCRIPTS`, else among the stops' (`scx`, for a shared digit). */
function scriptOf(value: string, offset: number): RegExp {
  const char = charAt(value, offset);
  return DRAWN_LIKE_LATIN_SCRIPTS.find((script) => script.test(char)) ?? (HAN.test(char) ? HAN : undefined) ?? SCRIPT_STOPS.find(([, script]) => script.test(char))?.[1] ?? NO_SCRIPT;
}

/**
 * Whether `value` holds a letter or digit of `script` drawn like no Latin one: text of that script, where its digits
 * read as its digits (`الصفحة ١٠١`, page 101; `٢٠٢٤/٠٥/٠١`), not as the ASCII ones they are drawn like (`١٠١` alone
 * reads as 1.1). Kept in `known` per script, so a value is read once for each.
 */
function ownLetterIn(value: string, script: RegExp, known: Map<RegExp, boolean>): boolean {
  let own = known.get(script);
  if (own === undefined) {
    own = false;
    for (const char of value) {
      if (LETTER_OR_DIGIT.test(char) && script.test(char) && !drawnLikeLatin(char) && !PATH_LOOK_ALIKE.test(char)) {
        own = true;
        break;
      }
    }
    known.set(script, own);
  }
  return own;
}

/**
 * Whether the script's stops in `word` are its own: every letter, mark and digit of the word is of that script (a mark
 * of no script of its own counts as its base, which is checked), none passes for an ASCII one, one of them at least is
 * drawn like none of `.` `/` `\` `:` `-` `_` (`٠٠` alone is drawn like `..`), and one letter or digit at least is drawn
 * like no ASCII one (`LATIN_LOOK_ALIKE`): a word whose every letter and digit looks Latin reads as a Latin one, and its
 * stop as path syntax (`ΤΟΚΕΝ·ΤΧΤ` as `TOKEN.TXT`, `ا١٠١` as `l1.1`), the whole-script confusable of UTS #39. A word
 * of digits alone keeps its stops in text of its script (`١٠٠`, a number after an Arabic word; `ownLetterIn`), not
 * alone (`١٠١` reads as 1.1).
 */
function ownScriptWord(word: string, stops: RegExp, script: RegExp, ownText: () => boolean): boolean {
  let lettered = false;
  let hasLetter = false;
  let unlikeLatin = false;
  for (const char of word) {
    if (OF_ANY_SCRIPT.test(char) || stops.test(char)) continue;
    if (!script.test(char) || passesForAscii(char)) return false;
    if (!lettered && LETTER_OR_DIGIT.test(char) && !PATH_LOOK_ALIKE.test(char)) lettered = true;
    if (LETTER.test(char)) hasLetter = true;
    if (!unlikeLatin && LETTER_OR_DIGIT.test(char) && !drawnLikeLatin(char)) unlikeLatin = true;
  }
  return lettered && (unlikeLatin || (!hasLetter && ownText()));
}

/**
 * Where the characters drawn like `.`, `/`, `\`, `:`, `-` or `_` are (UTF-16 offsets) in a value that names something;
 * `blank`: the value holds white space. A script's stop stays as written in a word all of its script (`١٠٠`, `दुःख`,
 * `λέξη·`, `Բարեւ։`), a punctuation one not before ASCII path syntax (`Ս։\x` reads as `S:\x`). A CJK form stays among
 * CJK text: the nearest character on either side that is not such a form is a CJK letter, and neither is a Latin letter
 * or an ASCII digit (`２０２４：報告`, `ノート`, `統一`, but not `my一file` nor `notesー／ーx`). Linear in the length.
 */
function pathLookAlikeOffsets(value: string, blank: boolean): Set<number> {
  const offsets = new Set<number>();
  if (!PATH_LOOK_ALIKE.test(value) && (blank || !PROSE_DASH.test(value))) return offsets;
  const ownStops = new Set<number>();
  const ownLetters = new Map<RegExp, boolean>();
  for (const word of value.matchAll(STOP_WORD)) {
    if (!SCRIPT_STOP.test(word[0])) continue;
    const verdicts = new Map<RegExp, boolean>();
    let offset = word.index;
    for (const char of word[0]) {
      const group = SCRIPT_STOPS.find(([stops]) => stops.test(char));
      if (group !== undefined) {
        const [stops, script] = group;
        let own = verdicts.get(stops);
        if (own === undefined) {
          own = ownScriptWord(word[0], stops, script, () => ownLetterIn(value, script, ownLetters));
          verdicts.set(stops, own);
        }
        if (own && !(PUNCTUATION.test(char) && ASCII_PATH_SYNTAX.test(charAt(value, offset + char.length)))) ownStops.add(offset);
      }
      offset += char.length;
    }
  }
  const chars = Array.from(value);
  // The nearest character before and after each one that is not a CJK form, '' at an end.
  const before: string[] = [];
  const after: string[] = [];
  let last = '';
  for (const char of chars) {
    before.push(last);
    if (!CJK_FORM.test(char)) last = char;
  }
  last = '';
  for (let index = chars.length - 1; index >= 0; index -= 1) {
    after[index] = last;
    if (!CJK_FORM.test(chars[index]!)) last = chars[index]!;
  }
  let offset = 0;
  chars.forEach((char, index) => {
    if (passesForPathSyntax(char, before[index]!, after[index]!, blank) && !ownStops.has(offset)) offsets.add(offset);
    offset += char.length;
  });
  return offsets;
}

/** Whether `char` passes for path syntax, with the nearest characters around it that are not CJK forms. */
function passesForPathSyntax(char: string, before: string, after: string, blank: boolean): boolean {
  if (PROSE_DASH.test(char)) return !blank;
  if (!PATH_LOOK_ALIKE.test(char)) return false;
  if (CJK_FORM.test(char)) return !(([before, after].some((side) => CJK_LETTER.test(side) && LETTER_OR_DIGIT.test(side)) && ![before, after].some((side) => LATIN_OR_DIGIT.test(side))));
  return true;
}

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
   * For code that runs (a command, a script): every character outside printable ASCII (tab and line break aside) is
   * escaped and counted, as `'non-ascii-in-code'` unless it is hidden or a look-alike (of a letter, or with `syntax`
   * of a quote, a backslash or `#`): `echo י$(touch X)י` (U+05D9) looks single-quoted and is not. Default false.
   */
  code?: boolean;
  /**
   * For a call's argument: those drawn like a backslash, a straight or back quote or `#` are escaped and counted as
   * `'look-alike-symbol'` (see SYNTAX_LOOK_ALIKE). Default false: a tool's result, a rule's text keep them.
   */
  syntax?: boolean;
  /**
   * For an argument a tool may run as code that is not a built-in tool's code (an MCP tool's `command`, a string
   * holding shell syntax): every character outside ASCII is escaped and counted as in `code`, but for those never
   * drawn like a one-column ASCII sign (`READABLE_IN_CODE`: Latin letters of Latin-1 and Latin Extended-A, `é` `ß`
   * `œ`; Chinese, Japanese and Korean characters, drawn two columns wide), so a French or Japanese message stays
   * readable while `echo י$(touch X)י` (U+05D9) shows its codes. Default false.
   */
  mayRun?: boolean;
  /**
   * For a value that names something (a path, a name): when it is one line (each line, with `everyLine`) and not in
   * NFC, every character outside ASCII in it is escaped and counted as hidden (`not-nfc`): `cafe\u{301}.txt` is drawn
   * like `café.txt` and is another file. When it is one line, a character drawn like `.`, `/`, `\`, `:`, `-` or `_` is
   * escaped and counted too (`look-alike-punctuation`, see `pathLookAlikeOffsets`; so it is with `mayRun`). Default false.
   */
  nfc?: boolean;
  /**
   * With `nfc`, for a value that names something on each of its lines (a list of paths or addresses, one a line or
   * in JSON): every line is read as a one-line value is. Default false: a value of several lines is text (a file's
   * content), whose words are the writer's own.
   */
  everyLine?: boolean;
}

/**
 * What an argument that may run as code (`mayRun`) shows as itself outside ASCII: a Latin letter of Latin-1 or
 * Latin Extended-A (an ASCII letter with its accent, or `ß` `œ` `ø`), and a character of Chinese, Japanese or Korean
 * or a fullwidth form, drawn two columns wide (the narrow halfwidth forms and conjoining jamo aside). Look-alikes of
 * ASCII letters and of quotes among them (`ı`, `〃`, `＇`) are escaped before this is asked.
 */
const READABLE_IN_CODE = /[\u00C0-\u017F\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}\uFF01-\uFF5E]/u;
const NARROW_CJK = /[\u1100-\u11FF\uA960-\uA97F\uD7B0-\uD7FF\uFF61-\uFFDC]/u;
const LETTER = /\p{L}/u;

function readableInCode(char: string): boolean {
  if (!READABLE_IN_CODE.test(char) || NARROW_CJK.test(char)) return false;
  const codePoint = char.codePointAt(0)!;
  return codePoint > 0x17f || LETTER.test(char);
}

const MARK = /\p{M}/u;
/** Marks drawn over or under the letter before them, taking no room of their own. */
const NONSPACING_MARK = /[\p{Mn}\p{Me}]/u;
/**
 * Combining Diacritical Marks and their Extended, Supplement and For Symbols blocks, and Combining Half Marks: the
 * marks of no one script, which any letter takes, and of which Latin, Greek and Cyrillic words need two at most
 * (Vietnamese `ệ` decomposed).
 */
const GENERIC_MARK_BLOCKS: readonly (readonly [number, number])[] = [
  [0x0300, 0x036f],
  [0x1ab0, 0x1aff],
  [0x1dc0, 0x1dff],
  [0x20d0, 0x20ff],
  [0xfe20, 0xfe2f],
];
/**
 * The nonspacing marks one letter carries before the next is escaped: pointed Hebrew puts three on one letter
 * (`שָּׁ`: dagesh, shin dot, qamats), Hindi too (`पढ़ें`: nukta, e, anusvara), Tibetan stacks three (`སྒྲུ`); a
 * taller stack is drawn over the lines above or below.
 */
const MAX_MARKS = 3;
/** The general-purpose marks (`GENERIC_MARK_BLOCKS`) one letter carries before the next is escaped. */
const MAX_GENERIC_MARKS = 2;
const MARK_BASE = /[\p{L}\p{N}]/u;
/** What the combining enclosing keycap (U+20E3) is put on, after U+FE0F, in an emoji (`#️⃣`, `*️⃣`; digits are bases). */
const KEYCAP_BASE = /[#*]/;
const KEYCAP = 0x20e3;

/**
 * The escapes a model's prose keeps (a reply, its reasoning, a person's reason): characters that hide or reorder text
 * (`\u{202E}` turning a sentence around, a zero-width space inside a word, a control character, which a terminal
 * would obey), and combining marks with nothing to sit on or stacked past what a letter carries. Letters of any
 * script, look-alike or not, non-breaking and other spaces, emoji variation selectors, and the joiners emoji sequences
 * and Persian words are made with stay as written: in prose they are the writer's own, and nothing in prose runs. A
 * backslash before `u{` is escaped, as everywhere, so every `\u{…}` shown is an escape.
 */
const PROSE_ESCAPES: ReadonlySet<EscapeClass> = new Set(['control', 'bidi', 'invisible', 'tag', 'line-separator', 'lone-surrogate', 'combining-mark']);
/** Zero-width non-joiner and joiner. */
const PROSE_OWN: ReadonlySet<number> = new Set([0x200c, 0x200d]);

/** Splits a string into what can be shown as it is and escapes for everything else. Linear in its length. */
export function toVisibleText(value: string, options: VisibleTextOptions = {}): VisibleText {
  return visibleText(value, {
    singleLine: options.singleLine === true,
    code: options.code === true,
    syntax: options.syntax === true,
    mayRun: options.mayRun === true,
    nfc: options.nfc === true,
    everyLine: options.everyLine === true,
    prose: false,
    after: '',
  });
}

/** The characters of prose shown before a piece that `toVisibleProse` reads (see its `after`). */
export const PROSE_AFTER_CHARS = 32;

/**
 * Prose as it may be shown: only the escapes prose keeps (`PROSE_ESCAPES`). A carriage return stays as written only
 * as the first half of a CR LF line end: alone, a terminal moves back to the line's start with it, and what follows
 * is drawn over what came before (`I will upload ~/.ssh/id_rsa\rI will only read README.md` shows only the second
 * sentence). `after`: the prose shown just before this piece of it (a streamed reply), of which the last
 * `PROSE_AFTER_CHARS` are read, so a mark at its start sits on the letter before it as in the whole text. Linear in
 * its length.
 */
export function toVisibleProse(value: string, { after = '' }: { after?: string } = {}): VisibleText {
  const before = after.slice(-PROSE_AFTER_CHARS);
  const last = before.charCodeAt(before.length - 1);
  return visibleText(value, { singleLine: false, code: false, syntax: false, mayRun: false, nfc: false, everyLine: false, prose: true, after: last >= 0xd800 && last <= 0xdbff ? before.slice(0, -1) : before });
}

/**
 * Where a combining mark may be drawn as itself: on a letter or digit shown as itself, on `#` or `*` for a keycap
 * only, or nowhere.
 */
type MarkBase = 'letter' | 'keycap' | 'none';

/** `after`: text read before `value`, only for where a mark at its start may sit (prose only: look-alikes are not read). */
function visibleText(shown: string, { singleLine, code, syntax, mayRun, nfc, everyLine, prose, after }: Required<VisibleTextOptions> & { prose: boolean; after: string }): VisibleText {
  const value = after + shown;
  const names = !code && ((nfc && (everyLine || !value.includes('\n'))) || mayRun);
  const suspect = !prose && SUSPECT.test(value);
  const named = names && suspect ? namedLineOffsets(value, nfc) : undefined;
  const lookAlikes = named?.lookAlikes ?? (suspect ? lookAlikeOffsets(value, code) : undefined);
  const segments: VisibleSegment[] = [];
  let hiddenCount = 0;
  let nonAsciiCount = 0;
  let lineCount = 1;
  let runStart = after.length;
  let index = 0;
  let base: MarkBase = 'none';
  /** The nonspacing marks, and the general-purpose ones among them, the base carries so far. */
  let marks = 0;
  let generic = 0;
  const lookAlikeClass = (char: string, at: number): EscapeClass | null => {
    if (syntax && SYNTAX_LOOK_ALIKE.test(char)) return 'look-alike-symbol';
    if (lookAlikes?.has(at) === true) return 'look-alike';
    if (named?.punctuation.has(at) === true) return 'look-alike-punctuation';
    if (code || (mayRun && !readableInCode(char))) return 'non-ascii-in-code';
    return named?.decomposed.has(at) === true ? 'not-nfc' : null;
  };
  while (index < value.length) {
    const codePoint = value.codePointAt(index)!;
    const width = codePoint > 0xffff ? 2 : 1;
    const char = value.slice(index, index + width);
    if (char === '\n' && !singleLine && index >= after.length) lineCount += 1;
    let escapeClass: EscapeClass | null;
    if (char === '\\') escapeClass = value.startsWith('u{', index + 1) ? 'backslash' : null;
    else if (singleLine && (char === '\n' || char === '\t')) escapeClass = 'control';
    else if (prose) escapeClass = proseClass(char, codePoint, value.charCodeAt(index + 1));
    else escapeClass = classify(char) ?? (codePoint > 0x7f ? lookAlikeClass(char, index) : null);
    const plain = codePoint <= 0x7f;
    // A variation selector or a joiner that is shown stays on the base before it, and counts as one of its marks.
    const joiner = !plain && (PROSE_OWN.has(codePoint) || VARIATION_SELECTOR.test(char));
    const mark = !plain && !joiner && MARK.test(char);
    if (mark && escapeClass === null) {
      if (NONSPACING_MARK.test(char)) marks += 1;
      if (GENERIC_MARK_BLOCKS.some(([first, last]) => codePoint >= first && codePoint <= last)) generic += 1;
      const seated = base === 'letter' || (base === 'keycap' && codePoint === KEYCAP);
      if (!seated || marks > MAX_MARKS || generic > MAX_GENERIC_MARKS) escapeClass = 'combining-mark';
    }
    if (escapeClass !== null && index < after.length) {
      base = 'none';
    } else if (escapeClass !== null) {
      if (runStart < index) segments.push({ kind: 'text', text: value.slice(runStart, index) });
      segments.push({ kind: 'escape', text: escapeNotation(codePoint), codePoint, class: escapeClass });
      if (escapeClass !== 'backslash') hiddenCount += 1;
      if (escapeClass === 'non-ascii-in-code') nonAsciiCount += 1;
      runStart = index + width;
      base = 'none';
    } else if (joiner) {
      marks += 1;
    } else if (!mark) {
      base = plain ? (ASCII_LETTER_OR_DIGIT.test(char) ? 'letter' : KEYCAP_BASE.test(char) ? 'keycap' : 'none') : MARK_BASE.test(char) ? 'letter' : 'none';
      marks = 0;
      generic = 0;
    }
    index += width;
  }
  if (runStart < value.length) segments.push({ kind: 'text', text: value.slice(runStart) });
  return { segments, hiddenCount, nonAsciiCount, lineCount };
}

/**
 * A space or tab between other characters of a line: a sentence's, whose dashes are its own (`PROSE_DASH`). A line end
 * (`\r`, U+2028) is escaped, and is no blank: `notes\u{2028}report–2024.pdf` names one file.
 */
const BLANK = /[\t\p{Zs}]/u;

/**
 * The look-alikes (`lookAlikeOffsets`), the look-alikes of path syntax (`pathLookAlikeOffsets`) and, with `nfc`, the
 * characters outside ASCII of a line not in NFC, in a value that names something: each line read as a one-line value,
 * so one line of text around it lets none pass. Linear in the length.
 */
function namedLineOffsets(value: string, nfc: boolean): { lookAlikes: Set<number>; punctuation: Set<number>; decomposed: Set<number> } {
  const found = { lookAlikes: new Set<number>(), punctuation: new Set<number>(), decomposed: new Set<number>() };
  for (let start = 0; start <= value.length; ) {
    const next = value.indexOf('\n', start);
    const end = next === -1 ? value.length : next;
    const line = value.slice(start, end);
    if (SUSPECT.test(line)) {
      for (const at of lookAlikeOffsets(line, true)) found.lookAlikes.add(start + at);
      for (const at of pathLookAlikeOffsets(line, BLANK.test(line.trim()))) found.punctuation.add(start + at);
      if (nfc && line.normalize('NFC') !== line) for (let at = 0; at < line.length; at++) if (line.charCodeAt(at) > 0x7f) found.decomposed.add(start + at);
    }
    start = end + 1;
  }
  return found;
}

/** The character (a whole code point) at `index`, `''` past the end. */
function charAt(value: string, index: number): string {
  const codePoint = value.codePointAt(index);
  return codePoint === undefined ? '' : String.fromCodePoint(codePoint);
}

/** What prose escapes of `char`; `next`, the UTF-16 unit after it (a CR before a LF is a line end, left as written). */
function proseClass(char: string, codePoint: number, next: number): EscapeClass | null {
  if (codePoint === 0x0d && next === 0x0a) return null;
  const found = classify(char);
  return found !== null && PROSE_ESCAPES.has(found) && !PROSE_OWN.has(codePoint) ? found : null;
}

/** The flat form, for places that cannot style an escape differently from text. */
export function visibleTextString(visible: VisibleText): string {
  return visible.segments.map((segment) => segment.text).join('');
}

/** The inverse of `visibleTextString(toVisibleText(value))`. */
export function fromVisibleNotation(flat: string): string {
  return flat.replace(/\\u\{(10[0-9A-F]{4}|[0-9A-F]{1,5})\}/g, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
}
