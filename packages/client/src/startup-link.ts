/** Where to connect and with what token, as read from a start-up link or given separately. */
export interface ServerAddress {
  /** The tRPC WebSocket endpoint, e.g. `ws://127.0.0.1:7700/trpc`. */
  url: string;
  /** The access token; "" when the link carried none. */
  token: string;
}

/**
 * Reads the link the server prints at start-up, `http://127.0.0.1:7700/#token=…`, into the WebSocket endpoint
 * and the token. A `ws:`/`wss:` URL is taken as the endpoint itself.
 */
export function parseStartupLink(link: string): ServerAddress {
  const parsed = new URL(link.trim());
  const token = new URLSearchParams(parsed.hash.replace(/^#/, '')).get('token') ?? '';
  parsed.hash = '';
  return { url: socketUrl(parsed.href), token };
}

/**
 * The WebSocket endpoint for a server URL: `http://host:port` → `ws://host:port/trpc`; a ws(s) URL is kept. A
 * `*.localhost` name (the server's link names `airlock-<random>.localhost`, a fresh origin for browsers, which
 * resolve it to loopback themselves) becomes 127.0.0.1, which Node reaches and the server accepts as Host.
 */
export function socketUrl(serverUrl: string): string {
  const parsed = new URL(serverUrl.trim());
  parsed.hash = '';
  if (parsed.hostname.endsWith('.localhost')) parsed.hostname = '127.0.0.1';
  if (parsed.protocol === 'ws:' || parsed.protocol === 'wss:') return parsed.href;
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`expected an http(s) or ws(s) URL, got ${parsed.protocol}`);
  }
  parsed.protocol = parsed.protocol === 'https:' ? 'wss:' : 'ws:';
  parsed.pathname = '/trpc';
  parsed.search = '';
  return parsed.href;
}

/**
 * An address as it may be shown in a message or a status line: the value of every `token` parameter, in the
 * fragment (`#token=…`) or the query (`?token=…`), as `<hidden>`. Works on any text, a URL or not (`htp//…#token=…`),
 * since what fails to parse is what gets echoed.
 */
export function shownAddress(address: string): string {
  return address.replace(/([#?&]token=)[^&#]*/gi, '$1<hidden>');
}
