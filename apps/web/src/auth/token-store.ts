import { exchangeLinkCode, LinkCodeError } from '@airlock/client';

/** Where this tab keeps the per-tab credential the server gave it: never the token, which stays in memory only. */
const TAB_CREDENTIAL_KEY = 'airlock.tab';
/** Where earlier versions kept the token itself: removed at start-up. */
const OLD_TOKEN_KEY = 'airlock.token';
const MAX_TOKEN_LENGTH = 512;
const TAB_CREDENTIAL_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * What this page connects with: the token, held in memory only (from the start-up link, a `#token=` address or a
 * paste), or after a reload the per-tab credential it kept, which the server takes once in the token's place.
 */
export type PageAccess = { kind: 'token'; token: string } | { kind: 'tab'; credential: string };

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

const CODE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** The one-time code of a `…#code=…` start-up link, if it carries a plausible one. */
export function codeFromAddress(address: string): string | null {
  const hashAt = address.indexOf('#');
  const fragment = hashAt === -1 ? address : address.slice(hashAt + 1);
  const code = new URLSearchParams(fragment).get('code')?.trim() ?? '';
  return CODE_PATTERN.test(code) ? code : null;
}

/**
 * What the token screen does with a paste: open the start-up link it names, use the token here, exchange the
 * link's one-time code here for the token, or neither.
 */
export type PastedAccess = { kind: 'open'; link: string } | { kind: 'use'; token: string } | { kind: 'exchange'; code: string } | null;

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
    if (token !== null) return { kind: 'use', token };
    const code = text.includes('#') ? codeFromAddress(text) : null;
    return code === null ? null : { kind: 'exchange', code };
  }
  const token = tokenFromAddress(link.hash);
  const code = codeFromAddress(link.hash);
  if (token === null && code === null) return null;
  const freshOriginOnThisPort =
    link.origin !== here.origin && link.hostname.endsWith('.localhost') && link.protocol === here.protocol && link.port === here.port;
  if (freshOriginOnThisPort) return { kind: 'open', link: link.href };
  return token === null ? { kind: 'exchange', code: code! } : { kind: 'use', token };
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/**
 * What this page connects with at start-up: the token of a `#token=` address, taken off the address so it does not
 * linger in history, bookmarks or a shared screen, else the tab credential kept over a reload. The token is never
 * written to sessionStorage, which browsers keep in the profile folder on disk while the tab is open; one an earlier
 * version wrote there is removed.
 */
export function takeAccess(env: TokenEnvironment): PageAccess | null {
  env.storage.removeItem(OLD_TOKEN_KEY);
  const fromUrl = tokenFromAddress(env.location.hash);
  if (fromUrl !== null) {
    env.history.replaceState(env.history.state, '', `${env.location.pathname}${env.location.search}`);
    return { kind: 'token', token: fromUrl };
  }
  const credential = env.storage.getItem(TAB_CREDENTIAL_KEY);
  return credential !== null && TAB_CREDENTIAL_PATTERN.test(credential) ? { kind: 'tab', credential } : null;
}

/**
 * Takes a start-up link's one-time code out of the address bar: it is removed from the address at once, before it
 * is exchanged, so the address a reload, a bookmark or a shared screen sees holds neither code nor token. Null
 * when the address has none.
 */
export function takeLinkCode(env: Pick<TokenEnvironment, 'location' | 'history'>): string | null {
  const code = codeFromAddress(env.location.hash);
  if (code === null) return null;
  env.history.replaceState(env.history.state, '', `${env.location.pathname}${env.location.search}`);
  return code;
}

/** What exchanging a start-up link's code gave: the token, or what to tell the person (a sentence, no final stop). */
export type LinkExchange = { kind: 'token'; token: string } | { kind: 'problem'; message: string };

/** Exchanges a start-up link's one-time code with the server that served this page (`origin`), for the token. */
export async function exchangeCodeHere(code: string, origin: string, fetch: typeof globalThis.fetch = globalThis.fetch.bind(globalThis)): Promise<LinkExchange> {
  try {
    return { kind: 'token', token: await exchangeLinkCode({ serverUrl: origin, code, fetch }) };
  } catch (error) {
    const message = error instanceof LinkCodeError ? error.message : `could not reach Airlock to open this link (${error instanceof Error ? error.message : String(error)})`;
    return { kind: 'problem', message };
  }
}

/** Keeps the tab credential the server gave this connection, in place of the last: what a reload connects with. */
export function keepTabCredential(env: Pick<TokenEnvironment, 'storage'>, credential: string): void {
  env.storage.setItem(TAB_CREDENTIAL_KEY, credential);
}

export function forgetTabCredential(env: Pick<TokenEnvironment, 'storage'>): void {
  env.storage.removeItem(TAB_CREDENTIAL_KEY);
}
