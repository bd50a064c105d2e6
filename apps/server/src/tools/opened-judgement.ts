import type { OpenedPath, ToolContext, ToolOutput } from '@airlock/core';
import { toolFailure } from './tool-failure';

/**
 * The rules' word on what a file tool has opened for `requested` (`context.judgeOpened`), asked before anything of it
 * is read: undefined to go on, or the refusal to answer. `nothing` says what was not done ("Nothing was read.").
 */
export async function refusalOfOpened(context: ToolContext, requested: string, opened: OpenedPath, nothing: string): Promise<ToolOutput | undefined> {
  const refused = await context.judgeOpened?.(opened);
  if (refused === undefined) return undefined;
  switch (refused.kind) {
    case 'denied': {
      const origin = refused.fromWorkspaceFile ? " That rule comes from the workspace's rules file (.airlock/rules.json), not from the person." : '';
      return toolFailure(`Refused: "${requested}" is covered by a deny rule as it was opened: ${sentence(refused.reason)}${origin} ${nothing}`);
    }
    case 'changed': {
      const why = refused.reason === undefined ? '' : ` ${sentence(refused.reason)}`;
      return refused.allowedBy === 'rule'
        ? toolFailure(`Refused: "${requested}" changed since a rule allowed it: the rule does not cover it as it is now.${why} ${nothing} Call again to have it judged as it is.`)
        : toolFailure(`Refused: "${requested}" changed since the rules judged it: as it is now, the person would be asked about it.${why} ${nothing} Call again to have them asked.`);
    }
  }
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
