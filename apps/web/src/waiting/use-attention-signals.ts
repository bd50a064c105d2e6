import { useEffect } from 'react';

const BASE_TITLE = 'Airlock';

/** "(2) Airlock" in the tab's title and a count on its icon while calls wait; the plain ones otherwise. */
export function useAttentionSignals(count: number): void {
  useEffect(() => {
    document.title = count > 0 ? `(${count}) ${BASE_TITLE}` : BASE_TITLE;
    const icon = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
    if (icon === null) return;
    const original = icon.dataset.original ?? icon.href;
    icon.dataset.original = original;
    icon.href = count > 0 ? badgedIcon(count) ?? original : original;
  }, [count]);
}

/** The app's square with a red disc and the count, drawn on a canvas. */
function badgedIcon(count: number): string | null {
  const size = 32;
  const canvas = document.createElement('canvas');
  canvas.width = size;
  canvas.height = size;
  const context = canvas.getContext('2d');
  if (context === null) return null;
  context.fillStyle = '#2f6fde';
  context.beginPath();
  context.roundRect(4, 4, 24, 24, 6);
  context.fill();
  context.fillStyle = '#d92d20';
  context.beginPath();
  context.arc(22, 10, 10, 0, Math.PI * 2);
  context.fill();
  context.fillStyle = '#ffffff';
  context.font = 'bold 14px sans-serif';
  context.textAlign = 'center';
  context.textBaseline = 'middle';
  context.fillText(count > 9 ? '9+' : String(count), 22, 11);
  return canvas.toDataURL('image/png');
}
