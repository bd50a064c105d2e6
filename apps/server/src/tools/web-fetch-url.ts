import { isIPv4 } from 'node:net';
import { ipv4InIPv6 } from './public-address';

const DEFAULT_PORTS = new Map([
  ['http:', '80'],
  ['https:', '443'],
]);

/** The scheme and the authority (credentials, host, port) as written: what decides where the request goes. */
const WRITTEN_AUTHORITY = /^https?:\/\/([^/?#]*)/iu;

/**
 * Why a web_fetch URL may not be put up for a decision, or undefined when it may. The card shows the URL as the
 * model wrote it, and the parser reads some spellings as another address than a person would: `2130706433`,
 * `0x7f.0.0.1`, `017700000001` and `127.1` are all 127.0.0.1, `аpple.com` with a Cyrillic `а` is `xn--pple-43d.com`,
 * `http://example.com@evil.test/` goes to evil.test, `[::ffff:a9fe:a9fe]` is 169.254.169.254 and `0.0.0.0` is this
 * machine. So the scheme, host and port must be written exactly as they are reached, in their plain form (letters in
 * any case, and an explicit default port, are fine), with no credentials, and nothing the parser drops. The path,
 * query and fragment may be written freely: the parser only escapes or tidies them, on the same host.
 * Each refusal names the form to write instead, so the next call's card shows the real destination.
 */
export function webFetchUrlIssue(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a valid URL; write it in full, as https://example.com/page';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `only http and https URLs can be fetched, not ${parsed.protocol} URLs`;
  }
  const plain = plainUrl(parsed);
  if (hasDroppedCharacters(url)) {
    return `the URL has a tab or line break, or a space or control character at an end, which are dropped before it is fetched; write it as ${plain.href}`;
  }
  if (parsed.username !== '' || parsed.password !== '') {
    const bare = new URL(plain.href);
    bare.username = '';
    bare.password = '';
    return (
      `web_fetch sends no user name or password, and one before "@" makes the host hard to read ` +
      `(http://example.com@evil.test/ goes to evil.test); write the URL without it, as ${bare.href}`
    );
  }
  const written = WRITTEN_AUTHORITY.exec(url)?.[1];
  if (written === undefined) return `write the URL as ${plain.href}, which is how it is read`;
  if (isReachedAs(asciiLowerCase(written), plain)) return undefined;
  return `the host is written as "${written}" but reached as ${plain.host}${spelling(written, parsed, plain)}; write the URL as ${plain.href}, so the card shows where it goes`;
}

/**
 * The URL with its host written as a person reads where it goes: an IPv4 address carried in an IPv6 one
 * (`[::ffff:7f00:1]`, `[64:ff9b::7f00:1]`) as that IPv4 address, and the unspecified address (`0.0.0.0`, `[::]`),
 * which a connection takes for this machine, as loopback.
 */
export function plainUrl(url: URL): URL {
  const plain = new URL(url.href);
  const carried = url.hostname.startsWith('[') ? ipv4InIPv6(url.hostname.slice(1, -1)) : undefined;
  if ((carried ?? url.hostname) === '0.0.0.0') plain.hostname = '127.0.0.1';
  else if (carried !== undefined) plain.hostname = carried;
  else if (url.hostname === '[::]') plain.hostname = '[::1]';
  return plain;
}

function isReachedAs(written: string, parsed: URL): boolean {
  if (written === parsed.host) return true;
  return parsed.port === '' && written === `${parsed.hostname}:${DEFAULT_PORTS.get(parsed.protocol) ?? ''}`;
}

function spelling(written: string, parsed: URL, plain: URL): string {
  if (plain.hostname !== parsed.hostname) {
    return parsed.hostname.startsWith('[') && plain.hostname !== '[::1]'
      ? ' (an IPv4 address written as an IPv6 one)'
      : ' (a connection to 0.0.0.0 or [::] goes to this machine)';
  }
  if (written.includes('\\')) return ' (a backslash ends the host, as a slash does)';
  if (!isAscii(written)) return ' (characters outside ASCII are reached by their ASCII form, and some can pass for others)';
  if (isIPv4(parsed.hostname)) return ' (the same IP address, written another way)';
  return '';
}

/** What the URL parser drops before it reads a URL: tabs and line breaks anywhere, controls and spaces at either end. */
function hasDroppedCharacters(url: string): boolean {
  const isControlOrSpace = (code: number | undefined) => code !== undefined && code <= 0x20;
  return /[\t\n\r]/u.test(url) || isControlOrSpace(url.codePointAt(0)) || isControlOrSpace(url.codePointAt(url.length - 1));
}

function isAscii(text: string): boolean {
  return [...text].every((character) => (character.codePointAt(0) ?? 0) < 0x80);
}

/** Lower case for ASCII letters only: `toLowerCase` also turns some other letters into ASCII ones (the Kelvin sign into `k`). */
function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]/gu, (letter) => letter.toLowerCase());
}
