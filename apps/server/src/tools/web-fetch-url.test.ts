import { argumentIssues } from '@airlock/core';
import { describe, expect, test } from 'vitest';
import { createBuiltinTools } from './index';
import { toolNamed } from './test-support';

const webFetch = toolNamed(createBuiltinTools({ workspace: '/tmp' }), 'web_fetch');

/** How the schema check the loop makes before putting a call up for a decision answers for this URL. */
const issues = (url: string) => argumentIssues(webFetch, { url });

const refused = (message: string) => [{ path: 'url', message }];

function hostRefusal(written: string, reached: string, reason: string, canonical: string): string {
  return `the host is written as "${written}" but reached as ${reached}${reason}; write the URL as ${canonical}, so the card shows where it goes`;
}

const SAME_ADDRESS = ' (the same IP address, written another way)';
const IN_IPV6 = ' (an IPv4 address written as an IPv6 one)';
const THIS_MACHINE = ' (a connection to 0.0.0.0 or [::] goes to this machine)';
const NOT_ASCII = ' (characters outside ASCII are reached by their ASCII form, and some can pass for others)';

/** The form a refusal asks for: "… as <url>" at its end, or before a closing ", so …". */
function suggested(message: string): string {
  const url = / as (\S+?)(?:, [a-z ]+)?$/u.exec(message)?.[1];
  if (url === undefined) throw new Error(`no suggested URL in: ${message}`);
  return url;
}

describe('web_fetch URLs are refused before anyone is asked when the card would not show where they go', () => {
  test('an IPv4 address written as one number, in hex, in octal or shortened is refused, naming the dotted form', () => {
    expect(issues('http://2130706433:17701/healthz')).toStrictEqual(
      refused(hostRefusal('2130706433:17701', '127.0.0.1:17701', SAME_ADDRESS, 'http://127.0.0.1:17701/healthz')),
    );
    expect(issues('http://0x7f.0.0.1:17701/healthz')).toStrictEqual(
      refused(hostRefusal('0x7f.0.0.1:17701', '127.0.0.1:17701', SAME_ADDRESS, 'http://127.0.0.1:17701/healthz')),
    );
    expect(issues('http://017700000001:17701/healthz')).toStrictEqual(
      refused(hostRefusal('017700000001:17701', '127.0.0.1:17701', SAME_ADDRESS, 'http://127.0.0.1:17701/healthz')),
    );
    expect(issues('http://127.1:17701/healthz')).toStrictEqual(
      refused(hostRefusal('127.1:17701', '127.0.0.1:17701', SAME_ADDRESS, 'http://127.0.0.1:17701/healthz')),
    );
    expect(issues('http://2852039166/latest/meta-data/')).toStrictEqual(
      refused(hostRefusal('2852039166', '169.254.169.254', SAME_ADDRESS, 'http://169.254.169.254/latest/meta-data/')),
    );
    expect(issues('http://0/')).toStrictEqual(refused(hostRefusal('0', '127.0.0.1', THIS_MACHINE, 'http://127.0.0.1/')));
    expect(issues('http://%31%32%37.0.0.1/')).toStrictEqual(refused(hostRefusal('%31%32%37.0.0.1', '127.0.0.1', SAME_ADDRESS, 'http://127.0.0.1/')));
    expect(issues('http://127.0.0.1./')).toStrictEqual(refused(hostRefusal('127.0.0.1.', '127.0.0.1', SAME_ADDRESS, 'http://127.0.0.1/')));
  });

  test('an IPv4 address written as an IPv6 one (mapped, NAT64, compatible) is refused, naming the IPv4 address', () => {
    expect(issues('http://[::ffff:a9fe:a9fe]/latest/meta-data/')).toStrictEqual(
      refused(hostRefusal('[::ffff:a9fe:a9fe]', '169.254.169.254', IN_IPV6, 'http://169.254.169.254/latest/meta-data/')),
    );
    expect(issues('http://[::ffff:169.254.169.254]/latest/')).toStrictEqual(
      refused(hostRefusal('[::ffff:169.254.169.254]', '169.254.169.254', IN_IPV6, 'http://169.254.169.254/latest/')),
    );
    expect(issues('http://[::ffff:7f00:1]:7864/mapped')).toStrictEqual(
      refused(hostRefusal('[::ffff:7f00:1]:7864', '127.0.0.1:7864', IN_IPV6, 'http://127.0.0.1:7864/mapped')),
    );
    expect(issues('http://[::FFFF:127.0.0.1]:7864/')).toStrictEqual(
      refused(hostRefusal('[::FFFF:127.0.0.1]:7864', '127.0.0.1:7864', IN_IPV6, 'http://127.0.0.1:7864/')),
    );
    expect(issues('http://[64:ff9b::a9fe:a9fe]/')).toStrictEqual(refused(hostRefusal('[64:ff9b::a9fe:a9fe]', '169.254.169.254', IN_IPV6, 'http://169.254.169.254/')));
    expect(issues('https://[::7f00:1]/')).toStrictEqual(refused(hostRefusal('[::7f00:1]', '127.0.0.1', IN_IPV6, 'https://127.0.0.1/')));
    expect(issues('http://[::ffff:8.8.8.8]/')).toStrictEqual(refused(hostRefusal('[::ffff:8.8.8.8]', '8.8.8.8', IN_IPV6, 'http://8.8.8.8/')));
  });

  test('the unspecified address, 0.0.0.0 or [::], which a connection takes for this machine, is refused, naming loopback', () => {
    expect(issues('http://0.0.0.0:7864/zero')).toStrictEqual(refused(hostRefusal('0.0.0.0:7864', '127.0.0.1:7864', THIS_MACHINE, 'http://127.0.0.1:7864/zero')));
    expect(issues('http://[::]:7864/')).toStrictEqual(refused(hostRefusal('[::]:7864', '[::1]:7864', THIS_MACHINE, 'http://[::1]:7864/')));
    expect(issues('http://[::ffff:0:0]/')).toStrictEqual(refused(hostRefusal('[::ffff:0:0]', '127.0.0.1', IN_IPV6, 'http://127.0.0.1/')));
    expect(issues('http://0.0.0.0@169.254.169.254/')).toStrictEqual(
      refused(
        'web_fetch sends no user name or password, and one before "@" makes the host hard to read (http://example.com@evil.test/ goes to evil.test); write the URL without it, as http://169.254.169.254/',
      ),
    );
    expect(issues('http://u@[::ffff:7f00:1]/')).toStrictEqual(
      refused(
        'web_fetch sends no user name or password, and one before "@" makes the host hard to read (http://example.com@evil.test/ goes to evil.test); write the URL without it, as http://127.0.0.1/',
      ),
    );
  });

  test('a host with characters outside ASCII is refused, naming its ASCII (punycode) form', () => {
    expect(issues('https://\u0430pple.com/')).toStrictEqual(refused(hostRefusal('\u0430pple.com', 'xn--pple-43d.com', NOT_ASCII, 'https://xn--pple-43d.com/')));
    expect(issues('http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/')).toStrictEqual(
      refused(hostRefusal('\uff11\uff12\uff17.\uff10.\uff10.\uff11', '127.0.0.1', NOT_ASCII, 'http://127.0.0.1/')),
    );
    // The Kelvin sign lower-cases to an ASCII k in JavaScript: case is compared for ASCII letters only.
    expect(issues('http://\u212Aelvin.example/')).toStrictEqual(refused(hostRefusal('\u212Aelvin.example', 'kelvin.example', NOT_ASCII, 'http://kelvin.example/')));
  });

  test('a user name or password is refused, naming the URL without it and so the host it really goes to', () => {
    const message = (canonical: string) =>
      `web_fetch sends no user name or password, and one before "@" makes the host hard to read (http://example.com@evil.test/ goes to evil.test); write the URL without it, as ${canonical}`;
    expect(issues('http://example.com@127.0.0.1:17701/healthz')).toStrictEqual(refused(message('http://127.0.0.1:17701/healthz')));
    expect(issues('https://user:secret@example.com/page')).toStrictEqual(refused(message('https://example.com/page')));
    expect(issues('http://@example.com/')).toStrictEqual(refused(hostRefusal('@example.com', 'example.com', '', 'http://example.com/')));
  });

  test('what the parser reads differently around the host is refused: backslashes, missing slashes, dropped characters, IPv6 spellings', () => {
    expect(issues('http://127.0.0.1\\@evil.test/')).toStrictEqual(
      refused(hostRefusal('127.0.0.1\\@evil.test', '127.0.0.1', ' (a backslash ends the host, as a slash does)', 'http://127.0.0.1/@evil.test/')),
    );
    expect(issues('http:example.com/page')).toStrictEqual(refused('write the URL as http://example.com/page, which is how it is read'));
    expect(issues('http:\\\\example.com\\page')).toStrictEqual(refused('write the URL as http://example.com/page, which is how it is read'));
    const dropped = 'the URL has a tab or line break, or a space or control character at an end, which are dropped before it is fetched; write it as http://example.com/';
    for (const url of ['http://exa\tmple.com/', 'http://exa\nmple.com/', ' http://example.com/', 'http://example.com/\u0000']) {
      expect(issues(url)).toStrictEqual(refused(dropped));
    }
    expect(issues('http://[0:0:0:0:0:0:0:1]:8080/')).toStrictEqual(refused(hostRefusal('[0:0:0:0:0:0:0:1]:8080', '[::1]:8080', '', 'http://[::1]:8080/')));
    expect(issues('http://example.com:0080/')).toStrictEqual(refused(hostRefusal('example.com:0080', 'example.com', '', 'http://example.com/')));
  });

  test('an invalid URL and a scheme other than http and https are refused before anyone is asked', () => {
    expect(issues('not a url')).toStrictEqual(refused('not a valid URL; write it in full, as https://example.com/page'));
    for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/x', 'data:text/plain,hi', 'javascript:alert(1)']) {
      expect(issues(url)).toStrictEqual(refused(`only http and https URLs can be fetched, not ${new URL(url).protocol} URLs`));
    }
  });

  test('each form a refusal names is accepted, and goes where the refused URL went', () => {
    const refusedUrls = [
      'http://2130706433:17701/healthz',
      'http://2852039166/latest/meta-data/',
      'https://\u0430pple.com/',
      'http://example.com@127.0.0.1:17701/healthz',
      'http://127.0.0.1\\@evil.test/',
      'http:\\\\example.com\\page',
      'http://exa\tmple.com/',
      'http://[0:0:0:0:0:0:0:1]:8080/',
    ];
    for (const url of refusedUrls) {
      const [issue] = issues(url);
      const canonical = suggested(issue?.message ?? '');
      expect([url, issues(canonical)]).toStrictEqual([url, []]);
      expect(new URL(canonical).host).toBe(new URL(url).host);
    }
    const carried = [
      ['http://[::ffff:127.0.0.1]:7864/', '127.0.0.1:7864'],
      ['http://[64:ff9b::a9fe:a9fe]/', '169.254.169.254'],
      ['http://0/', '127.0.0.1'],
      ['http://0.0.0.0:7864/', '127.0.0.1:7864'],
      ['http://[::]/', '[::1]'],
    ];
    for (const [url = '', host] of carried) {
      const canonical = suggested(issues(url)[0]?.message ?? '');
      expect([url, issues(canonical), new URL(canonical).host]).toStrictEqual([url, [], host]);
    }
  });

  test('URLs as models ordinarily write them are accepted: any path, query or fragment, letters in any case, an explicit default port, IP addresses written plainly', () => {
    const accepted = [
      'https://example.com',
      'https://example.com/',
      'https://docs.example.com:8443/guide/intro.html?lang=en&page=2#install',
      'https://example.com/search?q=hello world&lang=fr',
      'https://en.wikipedia.org/wiki/Z\u00fcrich',
      'https://example.com/a/../b\\c',
      'HTTPS://Example.COM/Path',
      'http://example.com:80/',
      'https://example.com:443/x',
      'https://example.com./',
      'https://xn--pple-43d.com/',
      'http://localhost:3000/api?x=1',
      'http://127.0.0.1:17701/healthz',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]:8080/',
      'http://[FE80::1]/',
      'http://[2606:4700:4700::1111]/',
      'https://example.com/redirect?to=http://2130706433/',
    ];
    for (const url of accepted) expect([url, issues(url)]).toStrictEqual([url, []]);
  });
});
