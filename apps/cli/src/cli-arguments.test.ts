import { describe, expect, it } from 'vitest';
import { parseCliArguments, UsageError } from './cli-arguments';

const noFile = () => {
  throw new Error('ENOENT');
};
const parse = (argv: string[], env: Record<string, string> = {}, readFile: (path: string) => string = noFile) => parseCliArguments(argv, { env, readFile });

describe('parseCliArguments', () => {
  it('takes the start-up link whole, or a URL and a token', () => {
    expect(parse(['chat', 'http://127.0.0.1:7700/#token=abc'])).toStrictEqual({
      kind: 'chat',
      address: { url: 'ws://127.0.0.1:7700/trpc', token: 'abc' },
      sessionId: undefined,
      tokenOnCommandLine: true,
    });
    expect(parse(['chat', '--url', 'ws://h:1/trpc', '--token=t', '--session', 'chat_1'])).toStrictEqual({
      kind: 'chat',
      address: { url: 'ws://h:1/trpc', token: 't' },
      sessionId: 'chat_1',
      tokenOnCommandLine: true,
    });
  });

  it('says when the token came from the command line, where other users can read it, and not when it came from a file', () => {
    const file = (path: string) => (path === '/run/t' ? 'from-file\n' : '');
    expect(parse(['chat', 'http://h:2/', '--token-file', '/run/t'], {}, file)).toMatchObject({ address: { token: 'from-file' }, tokenOnCommandLine: false });
    // Not used, yet on the command line all the same.
    expect(parse(['chat', 'http://h:2/#token=in-link'], { AIRLOCK_TOKEN_FILE: '/run/t' }, file)).toMatchObject({ address: { token: 'from-file' }, tokenOnCommandLine: true });
    expect(parse(['chat', '--url', 'http://h:2'], { AIRLOCK_TOKEN: 'env' })).toMatchObject({ tokenOnCommandLine: false });
    expect(() => parse(['chat', '--url', 'http://h:2', '--token-file', '/nope'])).toThrow(/--token-file: cannot read \/nope/);
  });

  it('reads AIRLOCK_URL, AIRLOCK_TOKEN and AIRLOCK_TOKEN_FILE, flags first', () => {
    expect(parse(['chat'], { AIRLOCK_URL: 'http://h:2', AIRLOCK_TOKEN: 'env' })).toMatchObject({ address: { url: 'ws://h:2/trpc', token: 'env' } });
    expect(parse(['chat', '--token', 'flag'], { AIRLOCK_URL: 'http://h:2', AIRLOCK_TOKEN: 'env' })).toMatchObject({ address: { token: 'flag' } });
    expect(parse(['chat'], { AIRLOCK_URL: 'http://h:2', AIRLOCK_TOKEN_FILE: '/run/t' }, (path) => (path === '/run/t' ? 'from-file\n' : ''))).toMatchObject({
      address: { token: 'from-file' },
    });
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
});
