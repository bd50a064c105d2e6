import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { shellQuoted } from './shell-quoted';
import { isStrictlyWithin } from './tools/path-within';

/**
 * The files of the installation at `installation` (Airlock's root folder) that the server runs or reads to load its
 * code: the launcher, the build's scripts (apps/server/dist, when built), and for each package the server depends on
 * (apps/server/package.json, the list the build leaves external: build-options.ts) its package.json and any native
 * addon node-gyp built for it (build/Release/*.node: better-sqlite3's). A workspace package it depends on
 * (`workspace:`) is followed in turn: run from its sources through tsx, the server loads that package's own
 * dependencies from its folder.
 *
 * Not the file each package's name resolves to: asking Node's require for it (`require.resolve`) left the server's
 * own later `import('undici')` with an empty module (Node 20: undici's exports read as `{}`, its Agent undefined),
 * and every start with a model server that answered failed. The manifest stands for the package as well.
 *
 * These, not every file under node_modules (tens of thousands: a walk would cost start-up more than all the rest), are
 * enough. pnpm imports every file of an installation the same way (its packageImportMethod), so an installation that
 * shares files with a project shares essentially all of them, these among them. And no call can give one of them a
 * name it did not have at start-up: the installation lies outside the workspace (config.ts refuses one that overlaps
 * it), a sandboxed call sees it read-only if at all, and link(2) across mounts fails with EXDEV.
 */
export function installationFiles(installation: string): string[] {
  const server = join(installation, 'apps', 'server');
  const files = [join(server, 'bin', 'airlock.mjs'), ...filesIn(join(server, 'dist')).filter((name) => name.endsWith('.js'))];
  const visited = new Set<string>();
  const visit = (folder: string) => {
    const manifest = join(folder, 'package.json');
    const require = createRequire(manifest);
    for (const [name, version] of Object.entries(dependenciesOf(manifest))) {
      const found = packageFolder(require, name);
      if (found === undefined || visited.has(found)) continue;
      visited.add(found);
      files.push(join(found, 'package.json'));
      const built = join(found, 'build', 'Release');
      files.push(...filesIn(built).filter((file) => file.endsWith('.node')));
      if (version.startsWith('workspace:')) visit(found);
    }
  };
  visit(server);
  return files;
}

/**
 * Why the installation at `installation` shares a file it runs (see installationFiles) with the workspace at the
 * real path `workspace`; undefined when it shares none. A file shared so is one a call allowed in the workspace can
 * change, and the server runs it at its next start, unsandboxed, as the person: with their token file in reach.
 * - The file has more than one name (hard links) on a file system the workspace is on, its own or one mounted inside
 *   it: pnpm links each package file from its store into every project installed from that store (on the same disk,
 *   the default ~/.local/share/pnpm), so a project in the workspace may hold the very file, and a call that writes
 *   into it in place (`>>`, an editor) writes Airlock's. Where the other names are would take a walk of the disk to
 *   find; a file with more than one, there, is refused. A paths-only check sees none of this: a hard link has no path
 *   in common with the file. The one exception: names a native addon has in its own package's build folder, where
 *   node-gyp's make copies it with `ln -f` (build/Release/obj.target/x.node and build/Release/x.node, when the addon
 *   was built here for want of a prebuilt one); a file all of whose names are there is Airlock's alone.
 * - Its real path lies inside the workspace: node_modules linked into a store the workspace holds.
 */
export function sharedInstallationFile(workspace: string, installation: string): string | undefined {
  const devices = workspaceDevices(workspace);
  for (const file of installationFiles(installation)) {
    let info: Stats;
    let real: string;
    try {
      info = statSync(file);
      real = realpathSync(file);
    } catch {
      continue;
    }
    if (isStrictlyWithin(workspace, real)) {
      return `"${workspace}" holds ${real}, a file Airlock runs: a call allowed there could change code Airlock runs outside any sandbox. Choose a folder that does not hold it with --workspace`;
    }
    if (info.nlink > 1 && devices.has(info.dev)) {
      const own = addonBuildNames(file, info);
      if (own >= info.nlink) continue;
      return (
        `"${workspace}" is on the file system of ${file}, a file Airlock runs, which has ${info.nlink} names there (hard links)` +
        `${own > 1 ? `, ${own} of them in its package's build folder` : ''}: ` +
        'pnpm links the files of a package from its store into every project installed from it, so a project in the workspace may ' +
        "hold this very file, and a call that writes into that project's node_modules would change code Airlock runs outside any sandbox. " +
        `Reinstall Airlock's packages as copies: cd ${shellQuoted(resolve(installation))} && rm -rf node_modules && pnpm install ` +
        '(its pnpm-workspace.yaml has pnpm copy them; pnpm install --force would keep the links)'
      );
    }
  }
  return undefined;
}

/**
 * The mount points strictly inside `folder` (a real path), from the text of /proc/self/mountinfo: its fifth field,
 * with the kernel's octal escapes (`\040` for a space) undone.
 */
export function mountPointsWithin(folder: string, mountinfo: string): string[] {
  const points: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const field = line.split(' ')[4];
    if (field === undefined) continue;
    const point = field.replace(/\\([0-7]{3})/g, (_, code: string) => String.fromCharCode(Number.parseInt(code, 8)));
    if (isStrictlyWithin(folder, point)) points.push(point);
  }
  return points;
}

/** The devices of the file systems a call can write through the workspace: its own and those mounted inside it. */
function workspaceDevices(workspace: string): Set<number> {
  const devices = new Set([statSync(workspace).dev]);
  let mountinfo = '';
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    // No /proc: the workspace's own file system only.
  }
  for (const point of mountPointsWithin(workspace, mountinfo)) {
    try {
      devices.add(statSync(point).dev);
    } catch {
      // Mounted over, or gone since: nothing there to reach.
    }
  }
  return devices;
}

function dependenciesOf(manifest: string): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(manifest, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || !('dependencies' in parsed)) return {};
    const { dependencies } = parsed;
    if (typeof dependencies !== 'object' || dependencies === null) return {};
    return Object.fromEntries(Object.entries(dependencies).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  } catch {
    return {};
  }
}

/** The real path of the folder Node finds the package `name` in, looking from `require`'s module; undefined when none. */
function packageFolder(require: NodeJS.Require, name: string): string | undefined {
  for (const modules of require.resolve.paths(name) ?? []) {
    const folder = join(modules, name);
    if (existsSync(join(folder, 'package.json'))) return realpathSync(folder);
  }
  return undefined;
}

/** Entries at most that addonBuildNames looks at: a build folder holds tens; a bigger one is not looked through. */
const BUILD_FOLDER_ENTRIES = 10_000;

/**
 * How many names the file `file` (a native addon, `<package>/build/Release/<name>.node`, of Stats `info`) has in its
 * package's build folder, links not followed; 1 for any other file (its own), and for a build folder too big to look through.
 */
function addonBuildNames(file: string, info: Stats): number {
  const release = dirname(file);
  if (!file.endsWith('.node') || basename(release) !== 'Release' || basename(dirname(release)) !== 'build') return 1;
  let names = 0;
  let seen = 0;
  const folders = [dirname(release)];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    seen += entries.length;
    if (seen > BUILD_FOLDER_ENTRIES) return 1;
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) folders.push(path);
      else if (entry.isFile()) {
        try {
          const other = lstatSync(path);
          if (other.ino === info.ino && other.dev === info.dev) names++;
        } catch {
          // Gone since: not a name.
        }
      }
    }
  }
  return Math.max(names, 1);
}

function filesIn(folder: string): string[] {
  try {
    return readdirSync(folder).map((name) => join(folder, name));
  } catch {
    return [];
  }
}
