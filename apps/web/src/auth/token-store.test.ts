import { describe, expect, it } from 'vitest';
import { readPastedAccess, takeToken, tokenFromAddress, type TokenEnvironment } from './token-store';

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

describe('readPastedAccess', () => {
  const loopbackPage = { origin: 'http://127.0.0.1:7700', protocol: 'http:', port: '7700' };
  const link = 'http://airlock-abcdefghijklmnop.localhost:7700/#token=tok_abc';

  it('opens a start-up link naming a *.localhost origin on this port rather than using its token on 127.0.0.1', () => {
    expect(readPastedAccess(link, loopbackPage)).toStrictEqual({ kind: 'open', link });
  });

  it('finds the link within the whole line the server printed', () => {
    expect(readPastedAccess(`  Airlock is running at ${link}\n`, loopbackPage)).toStrictEqual({ kind: 'open', link });
  });

  it('opens the new run’s origin from the tab of an earlier run’s origin', () => {
    const earlierRun = { origin: 'http://airlock-qrstuvwxyz234567.localhost:7700', protocol: 'http:', port: '7700' };
    expect(readPastedAccess(link, earlierRun)).toStrictEqual({ kind: 'open', link });
  });

  it('uses the token here when the link names this page’s own origin', () => {
    const runPage = { origin: 'http://airlock-abcdefghijklmnop.localhost:7700', protocol: 'http:', port: '7700' };
    expect(readPastedAccess(link, runPage)).toStrictEqual({ kind: 'use', token: 'tok_abc' });
  });

  it('never navigates to another host, another port or another scheme a paste names', () => {
    for (const other of [
      'http://example.com:7700/#token=tok_abc',
      'http://localhost:7700/#token=tok_abc',
      'http://airlock-abcdefghijklmnop.localhost:7701/#token=tok_abc',
      'https://airlock-abcdefghijklmnop.localhost:7700/#token=tok_abc',
      'http://airlock-abcdefghijklmnop.localhost.example.com:7700/#token=tok_abc',
    ]) {
      expect(readPastedAccess(other, loopbackPage)).toStrictEqual({ kind: 'use', token: 'tok_abc' });
    }
  });

  it('uses a bare token or a #token= fragment here, as before', () => {
    expect(readPastedAccess(' tok_abc ', loopbackPage)).toStrictEqual({ kind: 'use', token: 'tok_abc' });
    expect(readPastedAccess('#token=tok_abc', loopbackPage)).toStrictEqual({ kind: 'use', token: 'tok_abc' });
  });

  it('refuses a paste with no token', () => {
    expect(readPastedAccess('http://airlock-abcdefghijklmnop.localhost:7700/', loopbackPage)).toBeNull();
    expect(readPastedAccess('', loopbackPage)).toBeNull();
  });
});
