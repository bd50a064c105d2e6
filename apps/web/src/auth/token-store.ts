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
