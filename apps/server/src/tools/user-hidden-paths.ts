import { airlockConfigFolders, defaultDataFolders } from './airlock-data-folders';
import { browserProfileFolders, type BrowserPlaces, type FolderScans } from './browser-profiles';
import { editorStatePaths } from './editor-state-paths';
import { keptWhileSame } from './kept-paths';
import { historyFiles } from './shell-histories';

/**
 * The folders and files of the user whose HOME is in `env` that no tool may reach, there now or not: the browser
 * profiles, another Airlock's default data and config folders, the shell and interpreter histories, the editors'
 * copies and histories. With `scans`, the folders looked through for them are read only when they change (see
 * FolderScans).
 */
export function userHiddenPaths(places: BrowserPlaces, env: Readonly<Record<string, string | undefined>>, scans?: FolderScans): string[] {
  return [...browserProfileFolders(places, scans), ...fixedPaths(places, env), ...editorStatePaths(places, env, scans)];
}

/** The paths no folder's entries decide (another Airlock's folders, the histories): made again only when their places or variables change. */
const fixedPaths = keptWhileSame((places, env) => [...defaultDataFolders(places), ...airlockConfigFolders(places), ...historyFiles(places, env)]);
