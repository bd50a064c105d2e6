import { toVisibleProse, visibleTextString } from '@airlock/core';

/**
 * `text` with what could hide or reorder it shown as `\u{HEX}` escapes, as on the card; letters of any script, emoji
 * and spaces as written (`toVisibleProse`). Linear in its length.
 */
export function proseText(text: string): string {
  return visibleTextString(toVisibleProse(text));
}

interface ProseNode {
  type: string;
  value?: string;
  alt?: string | null;
  title?: string | null;
  children?: ProseNode[];
}

/** Nodes whose `value` the page draws: text, code, and raw HTML, which is drawn as the text it is, never run. */
const DRAWN_VALUES = new Set(['text', 'inlineCode', 'code', 'html']);

/**
 * A remark plugin: every piece of a parsed reply the page draws through `proseText`: text, inline code, code, raw HTML
 * (drawn as text), and an image's alt text and any node's title (a tooltip), which a reordering character turned
 * around unmarked.
 */
export function markHiddenCharacters() {
  return (tree: ProseNode) => {
    const nodes = [tree];
    for (let node = nodes.pop(); node !== undefined; node = nodes.pop()) {
      if (typeof node.value === 'string' && DRAWN_VALUES.has(node.type)) node.value = proseText(node.value);
      if (typeof node.alt === 'string') node.alt = proseText(node.alt);
      if (typeof node.title === 'string') node.title = proseText(node.title);
      if (node.children !== undefined) nodes.push(...node.children);
    }
  };
}
