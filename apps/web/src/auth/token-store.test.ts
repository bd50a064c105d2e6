import { describe, expect, it } from 'vitest';
import { exchangeCodeHere, keepTabCredential, readPastedAccess, takeAccess, takeLinkCode, tokenFromAddress, type TokenEnvironment } from './token-store';

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

const CREDENTIAL = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde';

describe('takeAccess', () => {
  it('takes the token from the address into memory only: off the address bar, and never into sessionStorage', () => {
    const { env, storage, replaced } = environment('#token=tok_abc');
    expect(takeAccess(env)).toStrictEqual({ kind: 'token', token: 'tok_abc' });
    expect(storage.size).toBe(0);
    expect(replaced).toStrictEqual(['/?x=1']);
  });

  it('removes a token an earlier version kept in sessionStorage, and does not use it', () => {
    const { env, storage } = environment('', 'tok_saved');
    expect(takeAccess(env)).toBeNull();
    expect(storage.size).toBe(0);
  });

  it('after a reload, connects with the tab credential kept, not a token', () => {
    const { env, storage, replaced } = environment('');
    keepTabCredential(env, CREDENTIAL);
    expect([...storage]).toStrictEqual([['airlock.tab', CREDENTIAL]]);
    expect(takeAccess(env)).toStrictEqual({ kind: 'tab', credential: CREDENTIAL });
    expect(replaced).toStrictEqual([]);
  });

  it('has nothing to connect with when neither the address nor storage has anything', () => {
    expect(takeAccess(environment('').env)).toBeNull();
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

describe('a start-up link’s one-time code', () => {
  const CODE = 'AbCdEfGhIjKlMnOpQrStUvWxYz0';

  it('is taken off the address bar before it is exchanged, and stores nothing itself', () => {
    const { env, storage, replaced } = environment(`#code=${CODE}`);
    expect(takeLinkCode(env)).toBe(CODE);
    expect(replaced).toStrictEqual(['/?x=1']);
    expect(storage.size).toBe(0);
    expect(takeLinkCode(environment('').env)).toBeNull();
    expect(takeLinkCode(environment('#code=<script>').env)).toBeNull();
  });

  it('pasted, is exchanged on the run’s own page and opened from another', () => {
    const link = `http://airlock-abcdefghijklmnop.localhost:7700/#code=${CODE}`;
    const runPage = { origin: 'http://airlock-abcdefghijklmnop.localhost:7700', protocol: 'http:', port: '7700' };
    expect(readPastedAccess(`Airlock is running at ${link}`, runPage)).toStrictEqual({ kind: 'exchange', code: CODE });
    expect(readPastedAccess(`#code=${CODE}`, runPage)).toStrictEqual({ kind: 'exchange', code: CODE });
    expect(readPastedAccess(link, { origin: 'http://127.0.0.1:7700', protocol: 'http:', port: '7700' })).toStrictEqual({ kind: 'open', link });
  });

  it('is posted to this page’s own server, and a refusal is told in words', async () => {
    const posted: string[] = [];
    const answering = (status: number, body: unknown): typeof fetch => async (input, init) => {
      posted.push(`${(input as URL).href} ${init?.body as string}`);
      return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
    };
    const origin = 'http://airlock-abcdefghijklmnop.localhost:7700';

    expect(await exchangeCodeHere(CODE, origin, answering(200, { token: 'tok_abc' }))).toStrictEqual({ kind: 'token', token: 'tok_abc' });
    expect(posted).toStrictEqual([`${origin}/link-code {"code":"${CODE}"}`]);
    expect(await exchangeCodeHere(CODE, origin, answering(410, { problem: 'expired', newLinkPrinted: true }))).toStrictEqual({
      kind: 'problem',
      message: 'this start-up link expired (a link opens Airlock within 10 minutes of being printed). Airlock printed a new link in the terminal where it runs: open that one',
    });
    expect(await exchangeCodeHere(CODE, origin, answering(404, { problem: 'unknown' }))).toMatchObject({ kind: 'problem', message: expect.stringMatching(/^this start-up link is not one the running Airlock made/) });
  });
});
