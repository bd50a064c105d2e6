import type { Rule } from '@airlock/api';
import type { AnyTool } from '@airlock/core';
import { mcpToolName, mcpToolOtherNames } from '../mcp/mcp-tool';

/** Tools one log line names for a rule; the rest are counted. */
const MAX_TOOLS_NAMED = 10;

/**
 * A line for each exact-arguments rule that names no tool offered now, saying what it still covers. Such a rule is
 * the only kind that names a tool by its offered name (an MCP tool rule names its server and its name there). A name
 * `<server>__<tool>` offered now with a hash, since it would read as another server's tool, is still denied by a deny
 * rule written for it, each of the tools it may mean, and allowed by no allow rule (`evaluateRules`); so is a name
 * with the hash of its server, the tool's name plain again since the other server went. Any other name matches
 * nothing until a tool of that name is offered again (its MCP server may be down).
 */
export function staleToolNames(rules: readonly Rule[], tools: readonly AnyTool[]): string[] {
  const offered = new Set(tools.map((tool) => tool.name));
  const hashed = new Map<string, AnyTool[]>();
  const plainAgain = new Map<string, AnyTool[]>();
  for (const tool of tools) {
    const server = tool.source?.startsWith('mcp:') ? tool.source.slice(4) : undefined;
    if (server === undefined || tool.remoteName === undefined) continue;
    const plain = mcpToolName(server, tool.remoteName);
    if (plain !== tool.name) hashed.set(plain, [...(hashed.get(plain) ?? []), tool]);
    else for (const other of mcpToolOtherNames(server, tool.remoteName)) plainAgain.set(other, [...(plainAgain.get(other) ?? []), tool]);
  }
  const lines: string[] = [];
  for (const rule of rules) {
    if (rule.match.kind !== 'exact-arguments' || offered.has(rule.tool)) continue;
    const what = `The ${rule.effect} rule ${rule.id} (${rule.scope.kind}${rule.source === 'workspace-file' ? ", from the workspace's rules file" : ''}) names the tool ${JSON.stringify(rule.tool)}`;
    const unhashed = plainAgain.get(rule.tool);
    if (unhashed !== undefined) {
      const named = unhashed.map((tool) => `${tool.name} (MCP server ${JSON.stringify(tool.source?.slice(4))}, tool ${JSON.stringify(tool.remoteName)})`).join(', ');
      lines.push(
        rule.effect === 'deny'
          ? `${what}, offered now as ${named}, since the name would no longer read as another server's tool: it denies it`
          : `${what}, offered now as ${named}, since the name would no longer read as another server's tool: it allows it no more; write it again for the name it has now`,
      );
      continue;
    }
    const meant = hashed.get(rule.tool);
    if (meant === undefined) {
      lines.push(`${what}, which no tool is now: it matches no call until a tool of that name is offered again (an MCP server that is down offers none)`);
      continue;
    }
    const more = meant.length > MAX_TOOLS_NAMED ? ` and ${meant.length - MAX_TOOLS_NAMED} more` : '';
    const named = `${meant
      .slice(0, MAX_TOOLS_NAMED)
      .map((tool) => `${tool.name} (MCP server ${JSON.stringify(tool.source?.slice(4))}, tool ${JSON.stringify(tool.remoteName)})`)
      .join(', ')}${more}`;
    lines.push(
      rule.effect === 'deny'
        ? `${what}, offered now as ${named}, since the name would read as another server's tool: it denies each of them`
        : `${what}, offered now as ${named}, since the name would read as another server's tool: it allows none of them, as the name does not say which; write it again for the one meant`,
    );
  }
  return lines;
}
