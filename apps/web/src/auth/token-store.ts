const STORAGE_KEY = 'airlock.token';
const MAX_TOKEN_LENGTH = 512;

export interface TokenEnvironment {
  location: Pick<Location, 'hash' | 'pathname' | 'search'>;
  history: Pick<History, 'replaceState' | 'state'>;
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
}

/** The token of a `…#token=…` address, if it carries a plausible one. */
export function tokenFromAddress(address: string): string | null {
  const hashAt = address.indexOf('#');
  const fragment = hashAt === -1 ? address : address.slice(hashAt + 1);
  const token = new URLSearchParams(fragment).get('token')?.trim() ?? '';
  return token !== '' && token.length <= MAX_TOKEN_LENGTH ? token : null;
}

/** What the token screen does with a paste: open the start-up link it names, use the token here, or neither. */
export type PastedAccess = { kind: 'open'; link: string } | { kind: 'use'; token: string } | null;

/**
 * Reads what the person pasted on the token screen: a start-up link (alone or within the line the server printed),
 * a `#token=…` fragment or a bare token. A link naming a `*.localhost` origin on this page's port, other than this
 * page's own, is opened rather than its token used here: the token is then only ever handed to the run's fresh
 * origin, never to one (such as `127.0.0.1:PORT`) a service worker of an earlier holder of the port may control.
 * No other host a paste names is navigated to; its token is used here, as a bare token is.
 */
export function readPastedAccess(pasted: string, here: Pick<Location, 'origin' | 'protocol' | 'port'>): PastedAccess {
  const text = pasted.trim();
  const written = /\bhttps?:\/\/\S+/i.exec(text)?.[0];
  const link = written === undefined ? null : parseUrl(written);
  if (link === null) {
    const token = tokenFromAddress(text.includes('#') ? text : `#token=${text}`);
    return token === null ? null : { kind: 'use', token };
  }
  const token = tokenFromAddress(link.hash);
  if (token === null) return null;
  const freshOriginOnThisPort =
    link.origin !== here.origin && link.hostname.endsWith('.localhost') && link.protocol === here.protocol && link.port === here.port;
  return freshOriginOnThisPort ? { kind: 'open', link: link.href } : { kind: 'use', token };
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/**
 * Takes the token from the address bar into this tab's sessionStorage and removes it from the address,
 * so it does not linger in history, bookmarks or a shared screen. Falls back to the stored one.
 */
export function takeToken(env: TokenEnvironment): string | null {
  const fromUrl = tokenFromAddress(env.location.hash);
  if (fromUrl !== null) {
    env.storage.setItem(STORAGE_KEY, fromUrl);
    env.history.replaceState(env.history.state, '', `${env.location.pathname}${env.location.search}`);
    return fromUrl;
  }
  return env.storage.getItem(STORAGE_KEY);
}

export function storeToken(env: Pick<TokenEnvironment, 'storage'>, token: string): void {
  env.storage.setItem(STORAGE_KEY, token);
}

export function forgetToken(env: Pick<TokenEnvironment, 'storage'>): void {
  env.storage.removeItem(STORAGE_KEY);
}
