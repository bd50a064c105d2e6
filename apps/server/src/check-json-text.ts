/** Where a JSON text goes wrong; line and column count from 1 (columns in UTF-16 code units). */
export type JsonTextProblem =
  | {
      kind: 'syntax';
      /** What was expected there, never the text itself: the file may be something else entirely (a link to a secret). */
      detail: string;
      line: number;
      column: number;
    }
  | {
      kind: 'duplicate-key';
      /** Keys and array indexes down to the key given twice, that key last. */
      path: (string | number)[];
      /** Line of the key's first appearance in its object. */
      firstLine: number;
      line: number;
      column: number;
    };

type Frame = { kind: 'object'; keys: Map<string, number>; key: string } | { kind: 'array'; index: number };

/** Duplicate keys reported at most: each names its path, and a file of thousands of them is refused all the same. */
export const MAX_DUPLICATE_KEYS_REPORTED = 20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Checks a text against the JSON grammar (RFC 8259, as JSON.parse reads it) and finds every key given twice in one
 * object, which JSON.parse would resolve silently by keeping the last (the first MAX_DUPLICATE_KEYS_REPORTED of
 * them). Returns [] for valid JSON without duplicate keys; a syntax error ends the check, so it comes last. One pass over the text with an explicit stack: linear time
 * at any nesting depth, no regular expression.
 */
export function checkJsonText(text: string): JsonTextProblem[] {
  const problems: JsonTextProblem[] = [];
  const stack: Frame[] = [];
  const end = text.length;
  let at = 0;
  let line = 1;
  let lineStart = 0;

  const skipSpace = (): void => {
    for (; at < end; at++) {
      const code = text.charCodeAt(at);
      if (code === 0x0a) {
        line++;
        lineStart = at + 1;
      } else if (code !== 0x20 && code !== 0x09 && code !== 0x0d) {
        return;
      }
    }
  };
  const fail = (expected: string): JsonTextProblem[] => {
    const detail = at >= end ? `the text ends where ${expected} should be` : `expected ${expected}`;
    problems.push({ kind: 'syntax', detail, line, column: at - lineStart + 1 });
    return problems;
  };
  const isDigit = (code: number): boolean => code >= 0x30 && code <= 0x39;
  const isHex = (code: number): boolean => isDigit(code) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
  /** At an opening quote: moves past the closing one, or stops where the string goes wrong and says what was expected. */
  const scanString = (): string | null => {
    at++;
    while (at < end) {
      const code = text.charCodeAt(at);
      if (code === QUOTE) {
        at++;
        return null;
      }
      if (code < 0x20) return 'a character other than a control character (write it escaped) or the end of the string';
      if (code === BACKSLASH) {
        const escaped = text.charCodeAt(at + 1);
        if (escaped === 0x75) {
          for (let digit = 2; digit < 6; digit++) {
            if (!isHex(text.charCodeAt(at + digit))) {
              at += digit;
              return 'four hexadecimal digits after \\u';
            }
          }
          at += 6;
          continue;
        }
        // " \ / b f n r t
        if (![0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74].includes(escaped)) {
          at++;
          return 'an escape (\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\u and four hexadecimal digits)';
        }
        at += 2;
        continue;
      }
      at++;
    }
    return 'the end of the string (")';
  };
  const scanDigits = (): boolean => {
    if (!isDigit(text.charCodeAt(at))) return false;
    while (isDigit(text.charCodeAt(at))) at++;
    return true;
  };
  /** At a key's opening quote (or where one should be): reads the key into the object frame, then the colon. */
  const readKey = (frame: Extract<Frame, { kind: 'object' }>): string | null => {
    if (text.charCodeAt(at) !== QUOTE) return 'a key in double quotes';
    const start = at;
    const keyLine = line;
    const keyColumn = at - lineStart + 1;
    const wrong = scanString();
    if (wrong !== null) return wrong;
    // The slice is a valid JSON string by now, so this only decodes its escapes ("a" and "\u0061" are one key).
    const key = JSON.parse(text.slice(start, at)) as string;
    const firstLine = frame.keys.get(key);
    if (firstLine === undefined) {
      frame.keys.set(key, keyLine);
    } else if (problems.length < MAX_DUPLICATE_KEYS_REPORTED) {
      const path = stack.map((entry) => (entry.kind === 'object' ? entry.key : entry.index));
      path[path.length - 1] = key;
      problems.push({ kind: 'duplicate-key', path, firstLine, line: keyLine, column: keyColumn });
    }
    frame.key = key;
    skipSpace();
    if (text.charCodeAt(at) !== 0x3a) return '":" after the key';
    at++;
    skipSpace();
    return null;
  };

  skipSpace();
  for (;;) {
    // A value starts here.
    const code = text.charCodeAt(at);
    if (code === 0x7b) {
      at++;
      skipSpace();
      if (text.charCodeAt(at) === 0x7d) {
        at++;
      } else {
        const frame: Frame = { kind: 'object', keys: new Map(), key: '' };
        stack.push(frame);
        const wrong = readKey(frame);
        if (wrong !== null) return fail(wrong);
        continue;
      }
    } else if (code === 0x5b) {
      at++;
      skipSpace();
      if (text.charCodeAt(at) === 0x5d) {
        at++;
      } else {
        stack.push({ kind: 'array', index: 0 });
        continue;
      }
    } else if (code === QUOTE) {
      const wrong = scanString();
      if (wrong !== null) return fail(wrong);
    } else if (code === 0x2d || isDigit(code)) {
      if (code === 0x2d) at++;
      if (text.charCodeAt(at) === 0x30) at++;
      else if (!scanDigits()) return fail('a digit');
      if (text.charCodeAt(at) === 0x2e) {
        at++;
        if (!scanDigits()) return fail('a digit after the decimal point');
      }
      if ((text.charCodeAt(at) | 0x20) === 0x65) {
        at++;
        if (text.charCodeAt(at) === 0x2b || text.charCodeAt(at) === 0x2d) at++;
        if (!scanDigits()) return fail('a digit in the exponent');
      }
    } else if (text.startsWith('true', at) || text.startsWith('null', at)) {
      at += 4;
    } else if (text.startsWith('false', at)) {
      at += 5;
    } else {
      return fail('a value');
    }

    // A value ended: what follows it closes its containers or starts the next value.
    for (;;) {
      skipSpace();
      const frame = stack.at(-1);
      if (frame === undefined) return at < end ? fail('the end of the text') : problems;
      const next = text.charCodeAt(at);
      if (frame.kind === 'array') {
        if (next === 0x5d) {
          at++;
          stack.pop();
          continue;
        }
        if (next !== 0x2c) return fail('"," or "]"');
        at++;
        frame.index++;
        skipSpace();
        break;
      }
      if (next === 0x7d) {
        at++;
        stack.pop();
        continue;
      }
      if (next !== 0x2c) return fail('"," or "}"');
      at++;
      skipSpace();
      const wrong = readKey(frame);
      if (wrong !== null) return fail(wrong);
      break;
    }
  }
}

/** A problem as a sentence, without its path: `duplicate key (first on line 2, again on line 5)`, `expected "," or "}" at line 3, column 7`. */
export function describeJsonTextProblem(problem: JsonTextProblem): string {
  return problem.kind === 'syntax'
    ? `${problem.detail} at line ${problem.line}, column ${problem.column}`
    : `duplicate key (first on line ${problem.firstLine}, again on line ${problem.line})`;
}
