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
