import { statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';

/**
 * How another user may change a file Airlock takes on trust (the token, the API key), or put one of their own in its
 * place: whoever can chooses what Airlock reads. Each caller words it with what that choice gives them.
 */
export type ChangeableByOthers =
  | { kind: 'owner'; uid: number; ownUid: number }
  | { kind: 'mode'; mode: string }
  | { kind: 'folder-owner'; folder: string; uid: number }
  | { kind: 'folder-mode'; folder: string; mode: string };

/**
 * Who besides this process's user (and root) may change the file at `path` (a real path; `info` its stat): its owner,
 * its group or others by its write bits, or the owner of its folder or those who may write that folder without the
 * sticky bit, who may rename or replace the file. Undefined when no one may; always so where there are no user ids.
 */
export function changeableByOthers(path: string, info: Stats, ownUid: number | undefined = process.getuid?.()): ChangeableByOthers | undefined {
  if (ownUid === undefined) return undefined;
  // Root may change anything: a file of root's is as safe as one of this user's.
  const othersOwn = (stats: Stats) => stats.uid !== ownUid && stats.uid !== 0;
  if (othersOwn(info)) return { kind: 'owner', uid: info.uid, ownUid };
  if ((info.mode & 0o022) !== 0) return { kind: 'mode', mode: modeText(info) };
  const folder = dirname(path);
  const folderInfo = statSync(folder);
  if (othersOwn(folderInfo)) return { kind: 'folder-owner', folder, uid: folderInfo.uid };
  if ((folderInfo.mode & 0o022) !== 0 && (folderInfo.mode & 0o1000) === 0) return { kind: 'folder-mode', folder, mode: modeText(folderInfo) };
  return undefined;
}

function modeText(info: Stats): string {
  return (info.mode & 0o7777).toString(8).padStart(4, '0');
}
