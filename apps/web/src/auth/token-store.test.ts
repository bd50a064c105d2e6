import { describe, expect, it } from 'vitest';
import { takeToken, tokenFromAddress, type TokenEnvironment } from './token-store';

function environment(hash: string, stored: string | null = null) {
  const storage = new Map<string, string>(stored === null ? [] : [['airlock.token', stored]]);
  const replaced: string[] = [];
  const env: TokenEnvironment = {
    location: { hash, pathname: '/', search: '?x=1' },
    history: { state: null, replaceState: (_state: unknown, _unused: string, url?: string | URL | null) => void replaced.push(String(url)) },
    storage: {
      getItem: (key) => storage.get(key) ?? null,
      setItem: (key, value) => void storage.set(key, value),
      removeItem: (key) => void storage.delete(key),
    },
  };
  return { env, storage, replaced };
}

describe('takeToken', () => {
  it('moves the token from the address into sessionStorage and off the address bar', () => {
    const { env, storage, replaced } = environment('#token=tok_abc');
    expect(takeToken(env)).toBe('tok_abc');
    expect(storage.get('airlock.token')).toBe('tok_abc');
    expect(replaced).toStrictEqual(['/?x=1']);
  });

  it('falls back to the stored token after a reload', () => {
    const { env, replaced } = environment('', 'tok_saved');
    expect(takeToken(env)).toBe('tok_saved');
    expect(replaced).toStrictEqual([]);
  });

  it('has no token when neither the address nor storage has one', () => {
    expect(takeToken(environment('').env)).toBeNull();
  });
});

describe('tokenFromAddress', () => {
  it('reads a pasted start-up address', () => {
    expect(tokenFromAddress('http://127.0.0.1:7700/#token=tok%20x')).toBe('tok x');
  });

  it('refuses an empty or oversized token', () => {
    expect(tokenFromAddress('http://127.0.0.1:7700/#token=')).toBeNull();
    expect(tokenFromAddress(`#token=${'a'.repeat(513)}`)).toBeNull();
  });
});
