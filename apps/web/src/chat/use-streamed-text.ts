import { useEffect, useRef, useState } from 'react';

/**
 * Characters of text per frame waited before it shows what it grew by. Each change of a long text costs the page a
 * layout and a paint about as long as the text: 300 KB changed on every frame kept it busy half the time. One frame
 * per 64 KB keeps that cost about the same whatever the length.
 */
const CHARACTERS_PER_FRAME = 65_536;
/** At most this much more text is shown at a time, so a burst (a tab that fell behind) is parsed a part a frame. */
const MAX_GROWTH = 16_384;

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
      else setShown(prefix(latest.current, shown.length + MAX_GROWTH));
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
