import { toVisibleText, type EscapeClass } from '@airlock/core';

/**
 * What of the card's escapes a model's prose keeps: characters that hide or reorder text (`\u{202E}` turning a
 * sentence around, a zero-width space inside a word, a control character). Letters of any script, non-breaking and
 * other spaces, emoji variation selectors, and the joiners emoji sequences and Persian words are made with stay as
 * they are: in prose they are the writer's own, and nothing in prose runs.
 */
const PROSE_ESCAPES: ReadonlySet<EscapeClass> = new Set(['control', 'bidi', 'invisible', 'tag', 'line-separator', 'lone-surrogate']);
/** Zero-width non-joiner and joiner; carriage return, which a line end may hold. */
const PROSE_OWN: ReadonlySet<number> = new Set([0x200c, 0x200d, 0x0d]);
const PLAIN = /^[\t\n\x20-\x7E]*$/;

/** `text` with what could hide or reorder it shown as `\u{HEX}` escapes, as on the card. Linear in its length. */
export function proseText(text: string): string {
  if (PLAIN.test(text)) return text;
  return toVisibleText(text)
    .segments.map((segment) => {
      if (segment.kind === 'text') return segment.text;
      return PROSE_ESCAPES.has(segment.class) && !PROSE_OWN.has(segment.codePoint) ? segment.text : String.fromCodePoint(segment.codePoint);
    })
    .join('');
}

interface ProseNode {
  type: string;
  value?: string;
  children?: ProseNode[];
}

/** A remark plugin: the text, inline code and code of a parsed reply through `proseText`. */
export function markHiddenCharacters() {
  return (tree: ProseNode) => {
    const nodes = [tree];
    for (let node = nodes.pop(); node !== undefined; node = nodes.pop()) {
      if (typeof node.value === 'string' && (node.type === 'text' || node.type === 'inlineCode' || node.type === 'code')) node.value = proseText(node.value);
      if (node.children !== undefined) nodes.push(...node.children);
    }
  };
}
