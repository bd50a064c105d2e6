import { describe, expect, it } from 'vitest';
import { parseCliArguments, UsageError, type CliEnvironment } from './cli-arguments';
import { DECISION_GUARD_MS } from './line-reader';

const noFile = (): never => {
  throw new Error('ENOENT');
};
/** Files readable by their owner alone (mode 0600), each path's text as given. */
const files =
  (texts: Record<string, string>, mode = 0o100600) =>
  (path: string) => {
    if (!Object.hasOwn(texts, path)) return noFile();
    return { text: texts[path]!, mode };
  };
const parse = (argv: string[], env: Record<string, string> = {}, readFile: CliEnvironment['readFile'] = noFile) => parseCliArguments(argv, { env, readFile });

describe('parseCliArguments', () => {
  it('takes the start-up link whole, or a URL and a token', () => {
    expect(parse(['chat', 'http://127.0.0.1:7700/#token=abc'])).toStrictEqual({
      kind: 'chat',
      address: { url: 'ws://127.0.0.1:7700/trpc', token: 'abc' },
      sessionId: undefined,
      tokenOnCommandLine: true,
      codeOnCommandLine: false,
      decisionGuardMs: DECISION_GUARD_MS,
    });
    expect(parse(['chat', '--url', 'ws://h:1/trpc', '--token=t', '--session', 'chat_1'])).toStrictEqual({
      kind: 'chat',
      address: { url: 'ws://h:1/trpc', token: 't' },
      sessionId: 'chat_1',
      tokenOnCommandLine: true,
      codeOnCommandLine: false,
      decisionGuardMs: DECISION_GUARD_MS,
    });
  });

  it('takes the start-up link as printed, whose one-time code is exchanged for the token, unless a token is given otherwise', () => {
    const link = 'http://airlock-abcdefghij234567.localhost:7700/#code=AbCdEfGhIjKlMnOpQrStUvWxYz0';
    expect(parse(['chat', link])).toStrictEqual({
      kind: 'chat',
      address: { codeLink: link },
      sessionId: undefined,
      tokenOnCommandLine: false,
      // Until this client spends it, another user reading the command line (ps) could: said, with AIRLOCK_URL instead.
      codeOnCommandLine: true,
      decisionGuardMs: DECISION_GUARD_MS,
    });
    expect(parse(['chat'], { AIRLOCK_URL: link })).toMatchObject({ address: { codeLink: link }, codeOnCommandLine: false });
    expect(parse(['chat', '--url', link])).toMatchObject({ address: { codeLink: link }, codeOnCommandLine: true });
    // A token given otherwise is used, and the code is left unspent.
    expect(parse(['chat', link], { AIRLOCK_TOKEN: 'env' })).toMatchObject({ address: { url: 'ws://127.0.0.1:7700/trpc', token: 'env' }, codeOnCommandLine: false });
  });

  it('says when the token came from the command line, where other users can read it, and not when it came from a file', () => {
    const file = files({ '/run/t': 'from-file\n' });
    expect(parse(['chat', 'http://h:2/', '--token-file', '/run/t'], {}, file)).toMatchObject({ address: { token: 'from-file' }, tokenOnCommandLine: false });
    // Not used, yet on the command line all the same.
    expect(parse(['chat', 'http://h:2/#token=in-link'], { AIRLOCK_TOKEN_FILE: '/run/t' }, file)).toMatchObject({ address: { token: 'from-file' }, tokenOnCommandLine: true });
    expect(parse(['chat', '--url', 'http://h:2'], { AIRLOCK_TOKEN: 'env' })).toMatchObject({ tokenOnCommandLine: false });
    // A link given as --url is on the command line as much as one given bare; in AIRLOCK_URL it is not.
    expect(parse(['chat', '--url', 'http://h:2/#token=in-link'])).toMatchObject({ address: { token: 'in-link' }, tokenOnCommandLine: true });
    expect(parse(['chat', '--url=http://h:2/#token=in-link'], { AIRLOCK_TOKEN_FILE: '/run/t' }, file)).toMatchObject({ address: { token: 'from-file' }, tokenOnCommandLine: true });
    expect(parse(['chat'], { AIRLOCK_URL: 'http://h:2/#token=in-env' })).toMatchObject({ address: { token: 'in-env' }, tokenOnCommandLine: false });
    expect(() => parse(['chat', '--url', 'http://h:2', '--token-file', '/nope'])).toThrow(/--token-file: cannot read \/nope/);
  });

  it('reads AIRLOCK_URL, AIRLOCK_TOKEN and AIRLOCK_TOKEN_FILE, flags first', () => {
    expect(parse(['chat'], { AIRLOCK_URL: 'http://h:2', AIRLOCK_TOKEN: 'env' })).toMatchObject({ address: { url: 'ws://h:2/trpc', token: 'env' } });
    expect(parse(['chat', '--token', 'flag'], { AIRLOCK_URL: 'http://h:2', AIRLOCK_TOKEN: 'env' })).toMatchObject({ address: { token: 'flag' } });
    expect(parse(['chat'], { AIRLOCK_URL: 'http://h:2', AIRLOCK_TOKEN_FILE: '/run/t' }, files({ '/run/t': 'from-file\n' }))).toMatchObject({
      address: { token: 'from-file' },
    });
  });

  it('refuses a token file other users may read or change, as the server does, saying how to fix it', () => {
    for (const mode of [0o100644, 0o100640, 0o100620, 0o100602]) {
      const file = files({ "/run/my token's": 'secret\n' }, mode);
      expect(() => parse(['chat', '--url', 'http://h:2', '--token-file', "/run/my token's"], {}, file)).toThrow(
        new UsageError(`--token-file: /run/my token's is open to other users (mode 0${(mode & 0o777).toString(8)}); make it readable by you alone: chmod 600 '/run/my token'\\''s'`),
      );
      expect(() => parse(['chat', '--url', 'http://h:2'], { AIRLOCK_TOKEN_FILE: "/run/my token's" }, file)).toThrow(/^AIRLOCK_TOKEN_FILE: .* is open to other users/);
    }
    expect(parse(['chat', '--url', 'http://h:2', '--token-file', '/run/t'], {}, files({ '/run/t': 'secret' }, 0o100400))).toMatchObject({ address: { token: 'secret' } });
  });

  it('reads the decision guard from AIRLOCK_DECISION_GUARD_MS, and refuses a value that is not a number of milliseconds', () => {
    const env = { AIRLOCK_URL: 'http://h:2', AIRLOCK_TOKEN: 'env' };
    expect(parse(['chat'], env)).toMatchObject({ decisionGuardMs: 600 });
    expect(parse(['chat'], { ...env, AIRLOCK_DECISION_GUARD_MS: '0' })).toMatchObject({ decisionGuardMs: 0 });
    expect(parse(['chat'], { ...env, AIRLOCK_DECISION_GUARD_MS: '1500' })).toMatchObject({ decisionGuardMs: 1500 });
    for (const value of ['', '-1', '0.5', 'soon', '10001']) {
      expect(() => parse(['chat'], { ...env, AIRLOCK_DECISION_GUARD_MS: value })).toThrow(`AIRLOCK_DECISION_GUARD_MS must be a whole number of milliseconds from 0 to 10000, got "${value}"`);
    }
  });

  it('says what is missing or wrong', () => {
    expect(() => parse(['chat'])).toThrow(new UsageError('no server given: pass the start-up link, or --url (or AIRLOCK_URL)'));
    expect(() => parse(['chat', '--url', 'http://h:2'])).toThrow(/no token given/);
    expect(() => parse(['chat', '--url', 'ftp://h'])).toThrow(/is not a server address/);
    expect(() => parse(['chat', '--frobnicate'])).toThrow('unknown option --frobnicate');
    expect(() => parse(['serve'])).toThrow(/unknown command "serve"/);
    expect(() => parse(['chat'], { AIRLOCK_URL: 'http://h:2', AIRLOCK_TOKEN_FILE: '/nope' })).toThrow(/cannot read \/nope/);
    expect(parse([])).toStrictEqual({ kind: 'help' });
  });

  it('refuses a --session no chat can have before it connects, saying what a chat id holds', () => {
    const rule = 'a chat id is 1 to 128 of the letters A-Z and a-z, digits and _ : . -';
    expect(() => parse(['chat', 'http://h:2/#token=t', '--session', 'me@example.test'])).toThrow(new UsageError(`--session "me@example.test" is not a chat id: ${rule}`));
    expect(() => parse(['chat', 'http://h:2/#token=t', '--session', 'x'.repeat(129)])).toThrow(new UsageError(`--session "${'x'.repeat(129)}" is not a chat id: ${rule}`));
    // Shown escaped, as every client shows what it did not write itself.
    expect(() => parse(['chat', 'http://h:2/#token=t', '--session', 'a\u001b[2Jb'])).toThrow(new UsageError(`--session "a\\u{1B}[2Jb" is not a chat id: ${rule}`));
    expect(parse(['chat', 'http://h:2/#token=t', '--session', `chat_1:a.b-${'x'.repeat(117)}`])).toMatchObject({ sessionId: `chat_1:a.b-${'x'.repeat(117)}` });
  });

  it('echoes an address it cannot read without the token the address carries', () => {
    const failure = (argv: string[], env: Record<string, string> = {}) => {
      try {
        parse(argv, env);
      } catch (error) {
        return error instanceof UsageError ? error.message : `not a usage error: ${String(error)}`;
      }
      return 'parsed';
    };
    expect(failure(['chat', 'htp//127.0.0.1:47811/#token=SECRET'])).toBe('"htp//127.0.0.1:47811/#token=<hidden>" is not a server address: Invalid URL');
    expect(failure(['chat'], { AIRLOCK_URL: 'htp//127.0.0.1:47811/#token=SECRET' })).toBe('"htp//127.0.0.1:47811/#token=<hidden>" is not a server address: Invalid URL');
    expect(failure(['chat', '--url', 'ftp://h/trpc?token=SECRET'])).toBe('"ftp://h/trpc?token=<hidden>" is not a server address: expected an http(s) or ws(s) URL, got ftp:');
  });
});
