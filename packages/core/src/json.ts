const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * JSON.parse for untrusted text: drops keys that could reach an object's prototype when the
 * value is later merged or spread; each one dropped is added to `dropped`, when given.
 */
export function parseUntrustedJson(text: string, dropped?: string[]): unknown {
  return JSON.parse(text, (key, value: unknown) => {
    if (!FORBIDDEN_KEYS.has(key)) return value;
    dropped?.push(key);
    return undefined;
  });
}

/** The first key, at any depth of `value`, that could reach an object's prototype (`__proto__`, …), if any. */
export function prototypeKeyIn(value: unknown): string | undefined {
  // A stack, not recursion: a value nested ten thousand deep is walked like any other.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== 'object') continue;
    for (const key of Object.keys(next)) {
      if (FORBIDDEN_KEYS.has(key)) return key;
      stack.push((next as Record<string, unknown>)[key]);
    }
  }
  return undefined;
}

/**
 * Whether `value` holds arrays or objects nested more than `limit` deep (the value itself, when one, is level 1).
 * Walked with a stack of its own, in time linear in the value's size: a check of it cannot run out of the thread's.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    const depth = next.depth + 1;
    if (depth > limit) return true;
    for (const child of Array.isArray(next.value) ? next.value : Object.values(next.value)) {
      if (child !== null && typeof child === 'object') pending.push({ value: child, depth });
    }
  }
  return false;
}

/**
 * Whether a JSON text (or one a model wrote, to be repaired) opens arrays or objects more than `limit` deep, counted
 * outside its strings in one pass: what parses it (JSON.parse with a reviver, the repair) recurses as deep as it nests.
 */
export function textNestedDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let quote: string | undefined;
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    if (quote !== undefined) {
      if (char === '\\') at++;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === '[' || char === '{') {
      if (++depth > limit) return true;
    } else if (char === ']' || char === '}') {
      depth = Math.max(0, depth - 1);
    }
  }
  return false;
}

/** Deterministic JSON: object keys sorted, so equal values give equal strings. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
    return out;
  }
  return value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Freezes a parsed JSON value all the way down, so what a person approved cannot change before it runs. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
