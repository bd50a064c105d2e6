import { addWeights, NO_WEIGHT, weighMarkdown, type MarkdownWeight } from './markdown-weight';

/** The fields of a parsed Markdown (mdast) node read here. */
export interface ParsedNode {
  type: string;
  position?: { start: { offset?: number | undefined }; end: { offset?: number | undefined } } | undefined;
  children?: ParsedNode[];
}

/** A text as complete blocks and the rest. */
export interface MarkdownSplit {
  /** Blocks no later text changes: each is parsed on its own, once. */
  done: readonly string[];
  /** The text after them, parsed again on each change. */
  rest: string;
  /** Where `rest` starts in the text. */
  restStart: number;
  /** The weight of the whole text. */
  weight: MarkdownWeight;
}

/** The rest of a line and its end. */
const LINE_END = /^[ \t]*(?:\r\n|\r(?!\n)|\n)/;
/** One blank line or more, up to the start of a line. */
const BLANK_LINES = /^(?:[ \t]*(?:\r\n|\r(?!\n)|\n))+$/;
/** The blocks a cut may go after, code only when fenced (see `lastCut`). */
const CUT_AFTER = new Set(['paragraph', 'heading', 'code', 'thematicBreak', 'html', 'blockquote', 'list']);
/** The blocks a cut may go before, when they start a line: no container, no indented code (see `lastCut`). */
const CUT_BEFORE = new Set(['paragraph', 'heading', 'code', 'thematicBreak', 'html']);
/** The nodes a link reference definition can stand in. */
const DEFINITION_PARENTS = new Set(['root', 'blockquote', 'list', 'listItem']);

/**
 * A Markdown text that grows at its end (a reply as it streams in), cut into blocks that render the same apart as
 * together, so that a change parses only the text after the last cut instead of the whole text again.
 *
 * A cut goes where the parser itself, on the text after the previous cut, ended one top-level block and began the
 * next after a blank line (with the exceptions in `lastCut`). Markdown is parsed block by block from the start: what
 * follows a closed block does not change it, and the next block starts as it would at the start of a text. Text that
 * holds blank lines inside one block (a fenced code block, a list whose items are apart, an HTML comment) stays one
 * block. A link reference definition (`[label]: url`) applies to the whole text: a text that may hold one is parsed
 * whole.
 */
export class MarkdownBlocks {
  #done: readonly string[] = [];
  /** The text the done blocks make up. */
  #doneText = '';
  #doneWeight = NO_WEIGHT;
  /** A cut found by the last parse, right for any text that starts with `text`. */
  #found: { text: string; at: number } | null = null;
  /** A link reference definition was found: no more cuts. */
  #whole = false;

  split(text: string): MarkdownSplit {
    if (!text.startsWith(this.#doneText)) {
      this.#done = [];
      this.#doneText = '';
      this.#doneWeight = NO_WEIGHT;
    }
    const found = this.#found;
    if (found !== null && found.at > this.#doneText.length && text.startsWith(found.text)) {
      const block = text.slice(this.#doneText.length, found.at);
      this.#done = [...this.#done, block];
      this.#doneText = text.slice(0, found.at);
      this.#doneWeight = addWeights(this.#doneWeight, weighMarkdown(block));
      this.#found = null;
    }
    const rest = text.slice(this.#doneText.length);
    const weight = addWeights(this.#doneWeight, weighMarkdown(rest));
    // Every definition has `]:` (its label's end); one in the rest would change how the done blocks read.
    if (this.#whole || rest.includes(']:')) return { done: [], rest: text, restStart: 0, weight };
    return { done: this.#done, rest, restStart: this.#doneText.length, weight };
  }

  /** Learns where the next cut may go from the parse of `split(text).rest`. */
  parsed(text: string, restStart: number, tree: ParsedNode): void {
    if (hasDefinition(tree)) {
      this.#whole = true;
      return;
    }
    const at = lastCut(text, restStart, tree.children ?? []);
    if (at !== null) this.#found = { text, at };
  }
}

/**
 * Where to cut before the last top-level block that follows a blank line, as an offset in `text`, or null.
 *
 * The parser keeps a little state from one top-level block to the next, found by streaming random texts and
 * comparing: after indented code, a list item that starts after blank lines reads as a paragraph; a block indented or
 * opening a container reads differently at the start of a text. No cut goes next to those. Nor before a block whose
 * first line is not complete: it may still join the block before (`2` becoming `2.` continues an ordered list).
 */
function lastCut(text: string, restStart: number, blocks: readonly ParsedNode[]): number | null {
  for (let index = blocks.length - 1; index > 0; index--) {
    const before = blocks[index - 1];
    const block = blocks[index];
    const end = before?.position?.end.offset;
    const start = block?.position?.start.offset;
    if (before === undefined || block === undefined || end === undefined || start === undefined) return null;
    if (!CUT_AFTER.has(before.type) || isIndentedCode(text, restStart, before)) continue;
    if (!CUT_BEFORE.has(block.type) || isBlank(text.charCodeAt(restStart + start))) continue;
    if (index === blocks.length - 1 && !hasLineEnd(text, restStart + start)) continue;
    // The blank lines between go with the block after: at the end of one, an open fenced code block in a list item
    // would keep them.
    const gap = text.slice(restStart + end, restStart + start);
    const lineEnd = isLineEnd(text.charCodeAt(restStart + end - 1)) ? '' : LINE_END.exec(gap)?.[0];
    if (lineEnd !== undefined && BLANK_LINES.test(gap.slice(lineEnd.length))) return restStart + end + lineEnd.length;
  }
  return null;
}

function isIndentedCode(text: string, restStart: number, block: ParsedNode): boolean {
  if (block.type !== 'code') return false;
  let index = restStart + (block.position?.start.offset ?? 0);
  while (isBlank(text.charCodeAt(index))) index++;
  // A fence: ``` or ~~~.
  return text.charCodeAt(index) !== 96 && text.charCodeAt(index) !== 126;
}

function isBlank(code: number): boolean {
  return code === 32 || code === 9;
}

function hasLineEnd(text: string, from: number): boolean {
  for (let index = from; index < text.length; index++) if (isLineEnd(text.charCodeAt(index))) return true;
  return false;
}

function isLineEnd(code: number): boolean {
  return code === 10 || code === 13;
}

function hasDefinition(tree: ParsedNode): boolean {
  const parents = [tree];
  for (let node = parents.pop(); node !== undefined; node = parents.pop()) {
    for (const child of node.children ?? []) {
      if (child.type === 'definition') return true;
      if (DEFINITION_PARENTS.has(child.type)) parents.push(child);
    }
  }
  return false;
}
