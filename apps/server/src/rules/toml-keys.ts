import { parse } from 'smol-toml';

/**
 * Whether a TOML document sets the key at `keys` (any value or table there), read as a TOML reader reads it: a
 * quoted or escaped key (`"p\u0061th"`), a dotted key (`toolchain.path = …`) and an inline table all lead to the same
 * place, which a look at the lines does not tell. Past an array of tables, any of its tables counts. Undefined when
 * the text is no TOML this parser reads, which the caller counts as setting it: the program's own reader may take
 * what this one refuses.
 */
export function tomlSets(text: string, keys: readonly string[]): boolean | undefined {
  let document: unknown;
  try {
    // Integers past 2^53 as BigInt: Rust's toml and Python's tomllib read them, and a refusal here must not be one there.
    document = parse(text, { integersAsBigInt: 'asNeeded' });
  } catch {
    return undefined;
  }
  return sets(document, keys);
}

function sets(value: unknown, keys: readonly string[]): boolean {
  if (keys.length === 0) return true;
  if (Array.isArray(value)) return value.some((item) => sets(item, keys));
  if (typeof value !== 'object' || value === null || value instanceof Date) return false;
  const [key, ...rest] = keys as [string, ...string[]];
  return Object.hasOwn(value, key) && sets((value as Record<string, unknown>)[key], rest);
}
