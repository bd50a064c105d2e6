import { useEffect, useRef, useState } from 'react';

/**
 * Characters of text per frame waited before it shows what it grew by. Each change of a long text costs the page a
 * layout and a paint about as long as the text: 300 KB changed on every frame kept it busy half the time. One frame
 * per 64 KB keeps that cost about the same whatever the length.
 */
const CHARACTERS_PER_FRAME = 65_536;
/**
 * A burst (a tab that fell behind, a run's events replayed when the app opens on it) is shown in parts: each as long
 * as the text shown already, at least this. A text that renders at a cost linear in its length (one block parsed
 * again whole: a reply of 900 KB in one paragraph) then costs about twice its length in all, in a number of steps
 * that grows as the logarithm of its length; a part of a fixed size made it 55 parses of up to 900 KB each.
 */
const MIN_GROWTH = 16_384;

/**
 * A text as shown while it streams in: what it grows by shows at the next animation frame (a few frames for a long
 * text, and a burst in parts), so what renders it renders once however many deltas come in between; any other change
 * shows at once. In a hidden tab, growth waits until the tab shows.
 */
export function useStreamedText(text: string): string {
  const [shown, setShown] = useState(text);
  const latest = useRef(text);
  const grown = text !== shown && text.startsWith(shown);
  if (text !== shown && !grown) setShown(text);
  useEffect(() => {
    latest.current = text;
  });
  useEffect(() => {
    if (!grown) return;
    let frames = 1 + Math.floor(shown.length / CHARACTERS_PER_FRAME);
    let frame = requestAnimationFrame(function next() {
      if (--frames > 0) frame = requestAnimationFrame(next);
      else setShown(prefix(latest.current, shown.length + Math.max(MIN_GROWTH, shown.length)));
    });
    return () => cancelAnimationFrame(frame);
  }, [shown, grown]);
  return grown ? shown : text;
}

/** The first `length` characters of `text`, or one more rather than half a surrogate pair. */
function prefix(text: string, length: number): string {
  if (length >= text.length) return text;
  const code = text.charCodeAt(length);
  return text.slice(0, code >= 0xdc00 && code <= 0xdfff ? length + 1 : length);
}
