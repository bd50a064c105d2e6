import path from 'node:path';
import { errorMessage, type ToolContext, type ToolOutput } from '@airlock/core';
import { browserPlaces } from './browser-profiles';
import { callTimeoutMs, type ResolvedToolsOptions } from './builtin-tools-options';
import { buildChildEnv, PROCESS_GIT_CONFIG, withGitConfig } from './child-env';
import { checkGitMetadata, gitMetadataReport, snapshotGitMetadata, type GitMetadataSnapshot } from './git-metadata-snapshot';
import { runProcess, type ProcessResult } from './process-runner';
import { processToolOutput } from './process-tool-output';
import { filesMountedOver, restoreFile, watchReplacements } from './replaced-files-watch';
import type { BubblewrapSandbox } from './sandbox/bubblewrap-confinement';
import { oneLine } from './one-line';
import { HiddenFoldersTooLargeError, HiddenPathLinkedError, HiddenPathMovedError, refuseLinkedHiddenFiles, type HiddenMask } from './hidden-paths';
import { hostLayout } from './sandbox/host-layout';
import { homeSocketFolders, liveSocketMasks, type HomeSocketFolders } from './sandbox/live-sockets';
import { isOwnMountPoint, maskedNow } from './sandbox/missing-git-paths-mask';
import { CALL_OWN_FOLDERS, foldersOnTheWay, masksBesideVeils, veiledFolders, type VeiledFolder } from './sandbox/veiled-folders';
import { resolveToolSandbox, type ToolSandbox } from './sandbox/tool-sandbox';
import { withScratchFolder } from './scratch-folder';
import { toolFailure } from './tool-failure';
import { userHiddenPaths } from './user-hidden-paths';
import { isWithin } from './path-within';
import type { WorkspacePaths } from './workspace-paths';

export interface ToolProcess {
  file: string;
  args: readonly string[];
  /** Variables the tool sets on top of the allowlisted environment. */
  extraEnv?: Readonly<Record<string, string>>;
  /** Files or folders outside the workspace the process reads, visible at the same path in the sandbox. */
  readOnlyPaths?: readonly string[];
  /** Written to the process's standard input, then closed. Default none: stdin is /dev/null. */
  input?: string;
}

/** Runs a process for a tool call: in the workspace, in the sandbox, with the filtered environment, the call's timeout and signal. */
export async function runToolProcess(
  options: ResolvedToolsOptions,
  paths: WorkspacePaths,
  command: ToolProcess,
  context: ToolContext,
): Promise<ToolOutput> {
  const cwd = await paths.root();
  const sandbox = await toolSandbox(options);
  let hidden: HiddenMask[] = [];
  const own = sandbox.kind === 'bubblewrap' ? sandboxOwnFolders() : [];
  const homeSockets = sandbox.kind === 'bubblewrap' ? socketFoldersOfHome(options) : { veiled: [], covered: [] };
  if (sandbox.kind === 'bubblewrap') {
    try {
      hidden = withLiveSockets([...paths.hidden.masks(), ...coveredWhole(homeSockets, [cwd, ...own])], [cwd], own);
      refuseLinkedHiddenFiles(hidden, cwd);
    } catch (error) {
      if (!(error instanceof HiddenPathMovedError) && !(error instanceof HiddenPathLinkedError) && !(error instanceof HiddenFoldersTooLargeError)) throw error;
      options.log(`Tool call of session ${context.sessionId}: ${error.message}`);
      return toolFailure(error.message);
    }
  }
  const gitBefore = await snapshotGitMetadata(cwd);
  // A file hidden or held read-only by a mount over it is uncovered in the call when the host replaces it: the call
  // is killed at once, with no grace, and says why.
  const kill = new AbortController();
  let replaced: string | undefined;
  // A hidden file in a veiled folder is simply not in the call's view of it: the host replacing it uncovers nothing.
  const veiled = sandbox.kind === 'bubblewrap' ? veiledFolders(cwd, hidden, own, alwaysVeiled(options, homeSockets, hidden)) : [];
  const mounted = sandbox.kind === 'bubblewrap' ? filesMountedOver(cwd, masksBesideVeils(hidden, veiled)) : undefined;
  const watch =
    mounted !== undefined
      ? watchReplacements(
          mounted.files,
          (file) => {
            replaced = file;
            kill.abort(`${oneLine(file)} was replaced while the call ran, which lifts the call's mask or read-only hold on it, so the call was killed`);
          },
          // A missing config's mask is lifted only while a call masks it, and not by the server making its mount point.
          (file) => mounted.missing.has(file) && (!maskedNow(file) || isOwnMountPoint(file)),
        )
      : undefined;
  const result = await runProcess({
    file: command.file,
    args: command.args,
    cwd,
    env: withGitConfig(buildChildEnv({ source: options.env, secretValues: options.secretValues, cwd, workspace: cwd, extra: command.extraEnv }), PROCESS_GIT_CONFIG),
    signal: context.signal,
    killSignal: kill.signal,
    timeoutMs: callTimeoutMs(context.timeoutMs, options.defaultTimeoutMs),
    clock: options.clock,
    maxOutputBytes: options.maxOutputBytes,
    killGraceMs: options.killGraceMs,
    ...(command.input === undefined ? {} : { input: command.input }),
    ...(sandbox.kind === 'bubblewrap' ? { sandbox: bubblewrapFor(sandbox, cwd, command, hidden, veiled, options) } : {}),
  }).finally(() => watch?.close());
  const output = processToolOutput(result);
  // The kill takes a moment: what the call did in it is not known. A config held read-only is put back as it was
  // when the call started, whatever was written to it since (a core.fsmonitor the call slipped in would run at the
  // person's next git status); a secret it may have read is only said.
  const before = replaced === undefined ? undefined : mounted?.held.get(replaced);
  const restored = replaced === undefined || before === undefined ? undefined : restoreFile(replaced, before);
  const lifted =
    replaced === undefined
      ? undefined
      : restored !== undefined
        ? `Airlock: ${oneLine(replaced)} was replaced while this call ran, which lifted its read-only hold; the call was killed at once and the file put back as it was when the call started, since the call may have written it in that moment.${restored.kept === undefined ? '' : ` What was there, a change made meanwhile (git config, git push -u, git remote add…), is kept as ${oneLine(restored.kept)}: look at it before putting it back.`}`
        : `Airlock: ${oneLine(replaced)} was replaced while this call ran, which lifted its mask or read-only hold; the call was killed at once, but may have read or written it in that moment: look at it before running git or using what it holds.`;
  const report = [await gitMetadataAfterCall(cwd, gitBefore), lifted].filter((line) => line !== undefined).join('\n') || undefined;
  if (report === undefined) return output;
  options.log(`Tool call of session ${context.sessionId}: ${report}`);
  return { ...output, content: `${output.content}\n${report}` };
}

/**
 * Runs a process a tool needs before its call, out of the workspace's reach: in `/` rather than the workspace, and in
 * the sandbox with a new folder of the server's as the one folder it may write (the workspace is seen read-only, the
 * hidden paths masked), made outside the workspace and removed after (see withScratchFolder). A program that picks
 * what to run by the files of the folder it starts in (a version manager's shim) finds none there.
 */
export async function runOutsideWorkspace(
  options: ResolvedToolsOptions,
  paths: WorkspacePaths,
  command: ToolProcess,
  context: ToolContext,
): Promise<ProcessResult> {
  const workspace = await paths.root();
  const sandbox = await toolSandbox(options);
  const cwd = '/';
  const run = (sandboxed: BubblewrapSandbox | undefined) =>
    runProcess({
      file: command.file,
      args: command.args,
      cwd,
      env: buildChildEnv({ source: options.env, secretValues: options.secretValues, cwd, workspace, extra: command.extraEnv }),
      signal: context.signal,
      timeoutMs: callTimeoutMs(context.timeoutMs, options.defaultTimeoutMs),
      clock: options.clock,
      maxOutputBytes: options.maxOutputBytes,
      killGraceMs: options.killGraceMs,
      ...(sandboxed === undefined ? {} : { sandbox: sandboxed }),
    });
  if (sandbox.kind !== 'bubblewrap') return run(undefined);
  const own = sandboxOwnFolders();
  const homeSockets = socketFoldersOfHome(options);
  // The workspace is seen read-only here: a socket folder too big to veil is covered in it too (the scratch folder, new, holds none).
  const hidden = withLiveSockets([...paths.hidden.masks(), ...coveredWhole(homeSockets, own)], [workspace, ...(command.readOnlyPaths ?? [])], own);
  refuseLinkedHiddenFiles(hidden, workspace);
  return withScratchFolder(workspace, 'airlock-ask-', (scratch) =>
    run(
      bubblewrapFor(
        sandbox,
        scratch,
        { ...command, readOnlyPaths: [workspace, ...(command.readOnlyPaths ?? [])] },
        hidden,
        veiledFolders(scratch, hidden, own, alwaysVeiled(options, homeSockets, hidden)),
        options,
      ),
    ),
  );
}

/** Checks the workspace's Git metadata once the call's processes are gone (see `checkGitMetadata`); a line to report, if any. */
async function gitMetadataAfterCall(workspace: string, before: GitMetadataSnapshot): Promise<string | undefined> {
  try {
    return gitMetadataReport(await checkGitMetadata(workspace, before));
  } catch (error) {
    return `Airlock: the workspace's Git metadata could not be checked after this call (${oneLine(errorMessage(error))}); look at .git before running git in the workspace.`;
  }
}

/** The sandbox the tools use: the one given, or the mode's, resolved once per process (bubblewrap is probed once). */
export function toolSandbox(options: Pick<ResolvedToolsOptions, 'sandbox' | 'network'>): Promise<ToolSandbox> {
  return typeof options.sandbox === 'string' ? resolveToolSandbox({ mode: options.sandbox, network: options.network }) : Promise.resolve(options.sandbox);
}

/**
 * The call's hidden masks with the Unix sockets listening now that it could otherwise reach (see liveSocketMasks),
 * those inside a hidden folder left out (masked whole already). `shown`: what is bound into the call over `own`, the
 * folders it has its own of.
 */
function withLiveSockets(hidden: readonly HiddenMask[], shown: readonly string[], own: readonly string[]): HiddenMask[] {
  const known = new Set(hidden.map((mask) => mask.path));
  const folders = hidden.filter((mask) => mask.folder).map((mask) => mask.path);
  const sockets = liveSocketMasks(own, shown).filter(
    (socket) => !known.has(socket.path) && !folders.some((folder) => socket.path.startsWith(`${folder}${path.sep}`)),
  );
  return [...hidden, ...sockets];
}

/**
 * The folders veiled whether or not they hold a hidden file as the call starts: the home folder, where the shells and
 * interpreters write their histories, so that one written for the first time while the call runs (bash's, zsh's,
 * python's…, then missing, so not masked) is not in the call's view of it; then its socket folders; then each folder
 * on the way to a hidden path, there or not, in the home folder (see foldersOnTheWay), for the histories written in
 * its folders.
 */
function alwaysVeiled(options: ResolvedToolsOptions, homeSockets: HomeSocketFolders, hidden: readonly HiddenMask[]): string[] {
  const places = browserPlaces(options.env);
  const paths = [...options.hiddenPaths, ...options.outputFiles(), ...userHiddenPaths(places, options.env), ...hidden.map((mask) => mask.path)];
  return [places.home, ...homeSockets.veiled, ...foldersOnTheWay(places.home, paths)];
}

/** The folders of the server's home folder where programs make their Unix sockets, and those inside them (see homeSocketFolders). */
function socketFoldersOfHome(options: ResolvedToolsOptions): HomeSocketFolders {
  return homeSocketFolders(browserPlaces(options.env).home);
}

/**
 * Masks for the home folder's socket folders too big to veil (see HomeSocketFolders): an empty tmpfs over each, as
 * over a hidden folder, unless it lies in `notIn`: the writable workspace (whose sockets are masked one by one and
 * watched, as when such a folder is not veiled there) or a folder the call has its own of, as for a veil.
 */
function coveredWhole(homeSockets: HomeSocketFolders, notIn: readonly string[]): HiddenMask[] {
  return homeSockets.covered.filter((folder) => !notIn.some((outer) => isWithin(outer, folder))).map((folder) => ({ path: folder, folder: true }));
}

/** The folders a sandboxed call has its own of: a veil inside one would put the host's entries back. */
function sandboxOwnFolders(): string[] {
  return [...CALL_OWN_FOLDERS, ...hostLayout().maskedFolders];
}

function bubblewrapFor(
  sandbox: Extract<ToolSandbox, { kind: 'bubblewrap' }>,
  workspace: string,
  command: ToolProcess,
  hidden: readonly HiddenMask[],
  veiled: readonly VeiledFolder[],
  { maxProcesses, maxOpenFiles, tmpfsMiB }: Pick<ResolvedToolsOptions, 'maxProcesses' | 'maxOpenFiles' | 'tmpfsMiB'>,
): BubblewrapSandbox {
  const tmpfs = sandbox.unsizedTmpfs ? {} : { tmpfsBytes: tmpfsMiB * 1024 * 1024 };
  const policy = { workspace, readOnly: command.readOnlyPaths ?? [], hidden, veiled, network: sandbox.network, ...tmpfs };
  return { bwrap: sandbox.bwrap, policy, maxProcesses, maxOpenFiles, sharedMemoryBytes: tmpfsMiB * 1024 * 1024, ...('unshare' in sandbox ? { unshare: sandbox.unshare, ...(sandbox.ipcUnbounded === undefined ? {} : { ipcUnbounded: true }) } : {}) };
}

/**
 * The PATH as inherited (before `cleanSearchPath`), to look for interpreters on: the python tool skips relative and
 * workspace entries itself, and says which it passed over.
 */
export function childSearchPath(options: ResolvedToolsOptions): string | undefined {
  return buildChildEnv({ source: options.env, secretValues: options.secretValues, cwd: '/' }).PATH;
}
