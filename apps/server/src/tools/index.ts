import type { AnyTool } from '@airlock/core';
import { resolveToolsOptions, type BuiltinToolsOptions } from './builtin-tools-options';
import { createListDirectoryTool } from './list-directory-tool';
import { createPythonTool } from './python-tool';
import { createReadFileTool } from './read-file-tool';
import { createTerminalTool } from './terminal-tool';
import { createWebFetchTool } from './web-fetch-tool';
import { browserPlaces, FolderScans } from './browser-profiles';
import { HiddenPaths } from './hidden-paths';
import { userHiddenPaths } from './user-hidden-paths';
import { WorkspacePaths } from './workspace-paths';
import { createWriteFileTool } from './write-file-tool';

export type { BuiltinToolsOptions } from './builtin-tools-options';
export { buildChildEnv } from './child-env';
export { htmlToText } from './html-to-text';
export { runProcess, type ProcessResult, type RunProcessOptions } from './process-runner';
export { isWithin } from './path-within';
export { HiddenPathError, OutsideWorkspaceError, UncheckablePathError, WorkspacePaths } from './workspace-paths';
export { resolveToolSandbox, SandboxUnavailableError, type SandboxMode, type ToolSandbox } from './sandbox/tool-sandbox';
export { callOpenFiles, DEFAULT_MAX_OPEN_FILES, DEFAULT_MAX_PROCESSES, ownHostUserId, ownOpenFilesHardLimit, processLimitWarning } from './sandbox/process-limit';
export { DEFAULT_TMPFS_MIB, UNSIZED_TMPFS_WARNING } from './sandbox/tmpfs-size';
export { unboundedNamespaceWarning } from './sandbox/namespace-limits';
export { unboundedIpcWarning } from './sandbox/ipc-limits';

/**
 * The tools every session has: terminal, python, read_file, write_file, list_directory and web_fetch, all bound to one
 * workspace. The hidden paths, the server's output files, and the browser profiles, shell and interpreter histories,
 * editors' swap, undo and backup folders and default Airlock data and config folders of the user whose HOME is in `env`
 * are out of their reach.
 */
export function createBuiltinTools(options: BuiltinToolsOptions): AnyTool[] {
  const resolved = resolveToolsOptions(options);
  const places = browserPlaces(resolved.env);
  const scans = new FolderScans();
  const others = () => [...userHiddenPaths(places, resolved.env, scans), ...resolved.outputFiles()];
  const paths = new WorkspacePaths(resolved.workspace, new HiddenPaths(resolved.hiddenPaths, { others, scans }));
  return [
    createTerminalTool(resolved, paths),
    createPythonTool(resolved, paths),
    createReadFileTool(resolved, paths),
    createWriteFileTool(resolved, paths),
    createListDirectoryTool(resolved, paths),
    createWebFetchTool(resolved),
  ];
}
