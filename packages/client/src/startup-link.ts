import { exchangeLinkCode, type ExchangeLinkCodeOptions } from './link-code';

/** Where to connect and with what token, as read from a start-up link or given separately. */
export interface ServerAddress {
  /** The tRPC WebSocket endpoint, e.g. `ws://127.0.0.1:7700/trpc`. */
  url: string;
  /** The access token; "" when the link carried none. */
  token: string;
}

/** A start-up link's parts: where to connect, and the token or the one-time code to exchange for it. */
export interface StartupLink extends ServerAddress {
  /** The one-time code of a `#code=…` link (see `resolveStartupLink`); absent from a link without one. */
  code?: string;
}

/**
 * Reads a start-up link into the WebSocket endpoint and what it carries: the token of a `…/#token=…` link, or the
 * one-time code of the `…/#code=…` link the server prints at start-up (`resolveStartupLink` exchanges it). A
 * `ws:`/`wss:` URL is taken as the endpoint itself.
 */
export function parseStartupLink(link: string): StartupLink {
  const parsed = new URL(link.trim());
  const fragment = new URLSearchParams(parsed.hash.replace(/^#/, ''));
  const token = fragment.get('token') ?? '';
  const code = fragment.get('code') ?? '';
  parsed.hash = '';
  return { url: socketUrl(parsed.href), token, ...(code === '' ? {} : { code }) };
}

/**
 * Where to connect and with what token, from a start-up link: the printed `…/#code=…` link's code is exchanged
 * with the server, once, for the token (a `LinkCodeError` says why not); a `…/#token=…` link's token is taken as is.
 */
export async function resolveStartupLink(link: string, options: Pick<ExchangeLinkCodeOptions, 'fetch' | 'timeoutMs'> = {}): Promise<ServerAddress> {
  const { url, token, code } = parseStartupLink(link);
  if (token !== '' || code === undefined) return { url, token };
  return { url, token: await exchangeLinkCode({ serverUrl: httpUrl(url), code, ...options }) };
}

/** The server's HTTP origin for its WebSocket endpoint (`ws://host:port/trpc` → `http://host:port`). */
function httpUrl(endpoint: string): string {
  const parsed = new URL(endpoint);
  return `${parsed.protocol === 'wss:' ? 'https:' : 'http:'}//${parsed.host}`;
}

/**
 * The WebSocket endpoint for a server URL: `http://host:port` → `ws://host:port/trpc`; a ws(s) URL is kept, with
 * `/trpc` added when it names no path (`ws://host:port`: the server refuses an upgrade anywhere else). A `*.localhost`
 * name (the server's link names `airlock-<random>.localhost`, a fresh origin for browsers, which resolve it to loopback
 * themselves) becomes 127.0.0.1, which Node reaches and the server accepts as Host.
 */
export function socketUrl(serverUrl: string): string {
  const parsed = new URL(serverUrl.trim());
  parsed.hash = '';
  if (parsed.hostname.endsWith('.localhost')) parsed.hostname = '127.0.0.1';
  if (parsed.protocol === 'ws:' || parsed.protocol === 'wss:') {
    if (parsed.pathname === '/') parsed.pathname = '/trpc';
    return parsed.href;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`expected an http(s) or ws(s) URL, got ${parsed.protocol}`);
  }
  parsed.protocol = parsed.protocol === 'https:' ? 'wss:' : 'ws:';
  parsed.pathname = '/trpc';
  parsed.search = '';
  return parsed.href;
}

/**
 * An address as it may be shown in a message or a status line: the value of every `token` or `code` parameter, in
 * the fragment (`#token=…`, `#code=…`) or the query (`?token=…`), as `<hidden>`. Works on any text, a URL or not
 * (`htp//…#token=…`), since what fails to parse is what gets echoed.
 */
export function shownAddress(address: string): string {
  return address.replace(/([#?&](?:token|code)=)[^&#]*/gi, '$1<hidden>');
}
