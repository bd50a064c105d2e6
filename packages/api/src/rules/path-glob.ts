const MAX_GLOB_CHARS = 1024;

type Piece = { kind: 'char'; char: string } | { kind: 'star' } | { kind: 'one' };
type Segment = { kind: 'any-folders' } | { kind: 'name'; pieces: Piece[]; startsWithDot: boolean };

/** Why `glob` is not a valid workspace path glob, or undefined when it is. */
export function checkPathGlob(glob: string): string | undefined {
  if (glob.length === 0) return 'the glob is empty';
  if (glob.length > MAX_GLOB_CHARS) return `the glob is longer than ${MAX_GLOB_CHARS} characters`;
  if (glob.includes('\0')) return 'the glob contains a NUL byte';
  if (glob.startsWith('/')) return 'the glob must be relative to the workspace, not absolute';
  const names = glob.split('/');
  for (const name of names) {
    if (name === '..') return 'the glob leads out of the workspace ("..")';
    if (name === '' || name === '.') return `the glob is not in its plain form: write "${normalisePathGlob(glob)}"`;
    if (name.includes('**') && name !== '**') return '"**" must be a whole name between slashes';
    if (/(^|[^\\])(\\\\)*\\$/.test(name)) return 'the glob ends a name with a lone "\\"';
  }
  return undefined;
}

/** `./src//a/` → `src/a`; `..` is kept (and then refused by checkPathGlob). */
export function normalisePathGlob(glob: string): string {
  return glob
    .split('/')
    .filter((name) => name !== '' && name !== '.')
    .join('/');
}

/** `\*` → a literal `*`: how a file name with glob characters becomes a glob that names only it. */
export function escapeGlobName(name: string): string {
  return name.replace(/[\\*?]/g, (char) => `\\${char}`);
}

function compile(glob: string): Segment[] {
  return glob.split('/').map((name): Segment => {
    if (name === '**') return { kind: 'any-folders' };
    const pieces: Piece[] = [];
    for (let index = 0; index < name.length; index += 1) {
      const char = name[index] ?? '';
      if (char === '\\') {
        index += 1;
        pieces.push({ kind: 'char', char: name[index] ?? '' });
      } else if (char === '*') pieces.push({ kind: 'star' });
      else if (char === '?') pieces.push({ kind: 'one' });
      else pieces.push({ kind: 'char', char });
    }
    const first = pieces[0];
    return { kind: 'name', pieces, startsWithDot: first?.kind === 'char' && first.char === '.' };
  });
}

/**
 * Whether the workspace-relative `names` match a valid glob. `*`, `?` and `**` never match a name starting
 * with a dot unless the glob spells the dot (so `**` covers neither `.git/` nor `.airlock/`). Time is in the
 * product of the lengths, never exponential.
 */
export function matchPathGlob(glob: string, names: readonly string[]): boolean {
  const segments = compile(glob);
  return matchSequence(segments, names, (segment) => segment.kind === 'any-folders', matchSegment, matchSegment);
}

function matchSegment(segment: Segment, name: string): boolean {
  if (name === '') return false;
  if (segment.kind === 'any-folders') return !name.startsWith('.');
  if (name.startsWith('.') && !segment.startsWithDot) return false;
  return matchSequence(segment.pieces, [...name], (piece) => piece.kind === 'star', () => true, matchPiece);
}

function matchPiece(piece: Piece, char: string): boolean {
  return piece.kind === 'one' || (piece.kind === 'char' && piece.char === char);
}

/**
 * Wildcard matching by walking every pattern position at once (a set of states, no backtracking): star
 * elements take any run of items they accept, the others exactly one item each.
 */
function matchSequence<P, I>(
  pattern: readonly P[],
  items: readonly I[],
  isStar: (element: P) => boolean,
  starAccepts: (element: P, item: I) => boolean,
  matchOne: (element: P, item: I) => boolean,
): boolean {
  let states = closure(new Set([0]), pattern, isStar);
  for (const item of items) {
    const next = new Set<number>();
    for (const state of states) {
      const element = pattern[state];
      if (element === undefined) continue;
      if (isStar(element)) {
        if (starAccepts(element, item)) next.add(state);
      } else if (matchOne(element, item)) {
        next.add(state + 1);
      }
    }
    if (next.size === 0) return false;
    states = closure(next, pattern, isStar);
  }
  return states.has(pattern.length);
}

/** Adds the positions reached by letting stars take nothing. */
function closure<P>(states: Set<number>, pattern: readonly P[], isStar: (element: P) => boolean): Set<number> {
  for (const state of states) {
    const element = pattern[state];
    if (element !== undefined && isStar(element)) states.add(state + 1);
  }
  return states;
}
