import { turnedOffTools } from '@airlock/api';
import type { AnyTool } from '@airlock/core';

/** Tools one log line names for a setting; the rest are counted. */
const MAX_TOOLS_NAMED = 10;

/**
 * A line for each name of the settings' `disabledTools` that is no tool's name now but another name of tools offered
 * (`Tool.otherNames`): an MCP tool's plain `<server>__<tool>`, hashed now since it would read as another server's
 * tool, or its hashed name, plain again. Each of those tools stays off (`turnedOffTools`); the line says which.
 */
export function renamedDisabledTools(disabledTools: readonly string[], tools: readonly AnyTool[]): string[] {
  const own = new Set(tools.map((tool) => tool.name));
  const lines: string[] = [];
  for (const name of disabledTools) {
    if (own.has(name)) continue;
    const meant = tools.filter((tool) => turnedOffTools([name], [tool]).has(tool.name));
    if (meant.length === 0) continue;
    const more = meant.length > MAX_TOOLS_NAMED ? ` and ${meant.length - MAX_TOOLS_NAMED} more` : '';
    const named = meant
      .slice(0, MAX_TOOLS_NAMED)
      .map((tool) => `${tool.name} (MCP server ${JSON.stringify(tool.source?.slice(4))}, tool ${JSON.stringify(tool.remoteName)})`)
      .join(', ');
    const which = meant.length === 1 ? 'it stays off' : 'each of them stays off';
    lines.push(`The tool settings turn off ${JSON.stringify(name)}, which no tool is named now; offered now as ${named}${more}: ${which}`);
  }
  return lines;
}
