import path from 'node:path';
import type { BrowserPlaces } from './browser-profiles';

/**
 * The folders any Airlock of this user keeps its chats in when started without `--data-dir`: `airlock` in
 * XDG_DATA_HOME and in `~/.local/share`. Another instance's data folder holds every chat, tool result, decision and
 * rule it kept, and this instance's own hidden paths name only its own data folder: one started with `--data-dir`
 * beside one started without would otherwise let its calls read the other's whole history.
 */
export function defaultDataFolders(places: Pick<BrowserPlaces, 'home' | 'dataHome'>): string[] {
  const bases = new Set([places.dataHome, path.join(places.home, '.local', 'share')].filter((folder) => folder !== undefined));
  return [...bases].map((base) => path.join(base, 'airlock'));
}

/**
 * The folders `airlock` in XDG_CONFIG_HOME and in `~/.config`, where the README keeps the terminal client's token file
 * (`AIRLOCK_TOKEN_FILE=~/.config/airlock/token airlock chat`) and where a person is likely to put Airlock's MCP file:
 * the server hides only its own token file, so a token given to the server another way (its environment, a service's)
 * was read from the client's file by any call.
 */
export function airlockConfigFolders(places: Pick<BrowserPlaces, 'home' | 'configHome'>): string[] {
  const bases = new Set([places.configHome, path.join(places.home, '.config')].filter((folder) => folder !== undefined));
  return [...bases].map((base) => path.join(base, 'airlock'));
}
