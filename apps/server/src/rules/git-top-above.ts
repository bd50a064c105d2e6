import { existsSync, statSync } from 'node:fs';
import path from 'node:path';

/** The work tree git finds from a folder of the workspace when its top lies above the workspace (`PathFacts.gitTopAbove`). */
export interface GitTopAbove {
  /** Its top: a folder above the workspace, absolute. */
  top: string;
  /**
   * Whether a file or folder is at an absolute path now: git takes a word before `--` that names one for a path,
   * and one that names none for a revision (or refuses it).
   */
  holds: (absolute: string) => boolean;
}

/**
 * Where git finds the top of its work tree from a folder of `workspace`, as its discovery goes (a `.git` folder that
 * is a Git directory, or a `.git` file, in that folder or the nearest one above it): `GitTopAbove` when that is above
 * the workspace (the workspace lies in a larger repository), undefined when it is in the workspace or there is none.
 * Given no folder (a command before may have changed the file system, and removed the workspace's own `.git`), the
 * repository above the workspace counts whatever lies inside. Looked up on the file system as it is now, at each call.
 */
export function gitTopAboveWorkspace(workspace: string): (folder: string | undefined) => GitTopAbove | undefined {
  return (folder) => {
    if (folder !== undefined && (folder === workspace || folder.startsWith(`${workspace}/`))) {
      for (let at = folder; at.length >= workspace.length; at = path.dirname(at)) if (marksTop(at)) return undefined;
    }
    for (let at = path.dirname(workspace); ; at = path.dirname(at)) {
      if (marksTop(at)) return { top: at, holds: (absolute) => existsSync(absolute) };
      if (at === path.dirname(at)) return undefined;
    }
  };
}

/**
 * Whether git takes `folder` for the top of a work tree: its `.git` is a file (a gitfile, which git follows or dies
 * on) or leads to a folder git tells for a Git directory (`HEAD`, with `objects` and `refs`); an empty `.git` folder
 * git passes by, going further up.
 */
function marksTop(folder: string): boolean {
  const dotGit = path.join(folder, '.git');
  const info = statOrUndefined(dotGit);
  if (info === undefined) return false;
  if (info.isFile()) return true;
  return info.isDirectory() && statOrUndefined(path.join(dotGit, 'HEAD'))?.isFile() === true && existsSync(path.join(dotGit, 'objects')) && existsSync(path.join(dotGit, 'refs'));
}

function statOrUndefined(file: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
