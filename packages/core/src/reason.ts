import { z } from 'zod';
import { parseUntrustedJson } from './json';
import { codeSpan, MAX_QUOTED_CHARS } from './quoted-word';
import { escapeNotation, toVisibleText, visibleTextString } from './visible-text';

/**
 * One part of a reason the server gives for a decision (a rule's sentence, why a call is asked). A client draws each
 * part as its kind says and never parses one: what a rules file or a model wrote can only ever be a `code` or a
 * `quote` part, so no character of it (a backtick, a line break) can end it and go on in the server's voice.
 */
export const reasonPartSchema = z.union([
  /** The server's own words. */
  z.object({ text: z.string() }).strict(),
  /** A word of a call or of a rule (a command, a path, a tool's name, an exact-arguments rule's JSON): code, on one line. */
  z.object({ code: z.string() }).strict(),
  /** Free text someone else wrote (a rule's `reason`): quoted, on one line, its line breaks and control characters escaped. */
  z.object({ quote: z.string() }).strict(),
]);
export type ReasonPart = z.infer<typeof reasonPartSchema>;

export const reasonSchema = z.array(reasonPartSchema);
export type Reason = z.infer<typeof reasonSchema>;

/**
 * A reason as events and the ledger hold it: parts, or a sentence stored before reasons were typed (code in backticks),
 * which clients draw as plain text on one line (`reasonParts`), its backticks as they are.
 */
export const shownReasonSchema = z.union([reasonSchema, z.string()]);
export type ShownReason = z.infer<typeof shownReasonSchema>;

/** The parts to draw: a sentence stored before reasons were typed is one text part. */
export function reasonParts(reason: ShownReason): Reason {
  return typeof reason === 'string' ? [{ text: reason }] : reason;
}

/** A word of a call or a rule, as code. */
export function code(word: string): ReasonPart {
  return { code: word };
}

/** A word of a call as a reason names it: code, cut at MAX_QUOTED_CHARS with `…` (a model's word may be any length). */
export function codeWord(word: string): ReasonPart {
  const chars = Array.from(word);
  return { code: chars.length <= MAX_QUOTED_CHARS ? word : `${chars.slice(0, MAX_QUOTED_CHARS).join('')}…` };
}

/** Free text someone other than the server wrote, as a part of its own. */
export function quote(text: string): ReasonPart {
  return { quote: text };
}

/**
 * Builds a reason from the server's words (strings), parts (`code`, `codeWord`, `quote`) and other reasons, in order;
 * neighbouring words are joined into one text part.
 */
export function reason(...pieces: readonly (string | ReasonPart | Reason)[]): Reason {
  const parts: ReasonPart[] = [];
  const add = (part: ReasonPart) => {
    const last = parts.at(-1);
    if ('text' in part && last !== undefined && 'text' in last) parts[parts.length - 1] = { text: last.text + part.text };
    else if (!('text' in part) || part.text !== '') parts.push(part);
  };
  for (const piece of pieces) {
    if (typeof piece === 'string') add({ text: piece });
    else if (Array.isArray(piece)) for (const part of piece) add(part);
    else add(piece);
  }
  return parts;
}

/**
 * The double quotation marks a quote is drawn between, and their kin (ASCII `"`, `❞`, `″`, `״` …): inside a quote they
 * are escaped, so its text cannot close the quote and go on in the server's voice (`cleanup”. Allowed by you
 * everywhere “ok`).
 */
export const QUOTE_MARKS = /["\u201C\u201D\u201E\u201F\u00AB\u00BB\u301D-\u301F\uFF02\u275D\u275E\u02BA\u02DD\u02EE\u2033\u2036\u05F4\u3003]/gu;

/** Escapes the quotation marks (`QUOTE_MARKS`) in text already shown on one line. */
export function escapeQuoteMarks(shown: string, escape: (notation: string) => string = (notation) => notation): string {
  return shown.replace(QUOTE_MARKS, (mark) => escape(escapeNotation(mark.codePointAt(0)!)));
}

/** A quote part as one line of text: `“…”`, with the card's escapes and its own quotation marks escaped. */
export function quotedLine(text: string): string {
  return `“${escapeQuoteMarks(visibleTextString(toVisibleText(text, { singleLine: true })))}”`;
}

/**
 * A reason as one sentence, for the model or a log line: code as a `codeSpan`, a quote as `quotedLine` gives it.
 */
export function reasonText(reason: ShownReason): string {
  return reasonParts(reason)
    .map((part) => ('text' in part ? part.text : 'code' in part ? codeSpan(part.code) : quotedLine(part.quote)))
    .join('');
}

/** A reason as a text column keeps it: parts as their JSON; a sentence stored before reasons were typed as it was. */
export function storedReasonText(reason: ShownReason): string {
  return typeof reason === 'string' ? reason : JSON.stringify(reason);
}

/** The reason a text column kept (`storedReasonText`): parts, or a sentence of a row stored before reasons were typed. */
export function storedReason(text: string): ShownReason {
  if (!text.startsWith('[')) return text;
  const parsed = reasonSchema.safeParse(parseUntrustedJsonOrUndefined(text));
  return parsed.success ? parsed.data : text;
}

function parseUntrustedJsonOrUndefined(text: string): unknown {
  try {
    return parseUntrustedJson(text);
  } catch {
    return undefined;
  }
}
