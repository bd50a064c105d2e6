import path from 'node:path';

/** `target` is `folder` or inside it; `<folder>-evil` is not. A name inside it that starts with `..` (`..x`) is inside. */
export function isWithin(folder: string, target: string): boolean {
  const relative = path.relative(folder, target);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/** `target` is inside `folder`, and not `folder` itself (see isWithin). */
export function isStrictlyWithin(folder: string, target: string): boolean {
  return path.relative(folder, target) !== '' && isWithin(folder, target);
}
