import type { ToolContext, ToolOutput } from '@airlock/core';
import { callTimeoutMs, type ResolvedToolsOptions } from './builtin-tools-options';
import { buildChildEnv } from './child-env';
import { runProcess } from './process-runner';
import { processToolOutput } from './process-tool-output';
import type { WorkspacePaths } from './workspace-paths';

export interface ToolProcess {
  file: string;
  args: readonly string[];
  /** Variables the tool sets on top of the allowlisted environment. */
  extraEnv?: Readonly<Record<string, string>>;
}

/** Runs a process for a tool call: in the workspace, with the filtered environment, the call's timeout and signal. */
export async function runToolProcess(
  options: ResolvedToolsOptions,
  paths: WorkspacePaths,
  command: ToolProcess,
  context: ToolContext,
): Promise<ToolOutput> {
  const cwd = await paths.root();
  const result = await runProcess({
    file: command.file,
    args: command.args,
    cwd,
    env: buildChildEnv({ source: options.env, secretValues: options.secretValues, cwd, extra: command.extraEnv }),
    signal: context.signal,
    timeoutMs: callTimeoutMs(context.timeoutMs, options.defaultTimeoutMs),
    maxOutputBytes: options.maxOutputBytes,
    killGraceMs: options.killGraceMs,
  });
  return processToolOutput(result);
}

/** The environment a command will see; used to find interpreters on the same PATH the child gets. */
export function childSearchPath(options: ResolvedToolsOptions): string | undefined {
  return buildChildEnv({ source: options.env, secretValues: options.secretValues, cwd: '/' }).PATH;
}
