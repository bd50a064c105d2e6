import type { ToolAnnotations } from '../lib/api-types';

export interface ToolBadge {
  label: string;
  /** `warn`: it acts on the machine or the world; `plain`: it only reads; `source` and `claim`: where it comes from and what its server says. */
  tone: 'warn' | 'plain' | 'source' | 'claim';
  title: string;
}

/** What each built-in tool really does, in Airlock's own words. */
const BUILTIN_BADGES = new Map<string, ToolBadge>([
  ['terminal', { label: 'runs code', tone: 'warn', title: 'Runs a shell command on this machine, in the workspace.' }],
  ['python', { label: 'runs code', tone: 'warn', title: 'Runs Python code on this machine, in the workspace.' }],
  ['write_file', { label: 'changes files', tone: 'warn', title: 'Creates or overwrites a file in the workspace.' }],
  ['web_fetch', { label: 'reaches the network', tone: 'warn', title: 'Sends a request to an address on the network: what it sends can leave this machine.' }],
  ['read_file', { label: 'read-only', tone: 'plain', title: 'Only reads a file in the workspace.' }],
  ['list_directory', { label: 'read-only', tone: 'plain', title: 'Only lists a folder in the workspace.' }],
]);

const CLAIM_TITLE = 'The MCP server’s own claim about this tool: Airlock does not check it.';

/**
 * The badges of a tool's card. Built-ins are described by what they do; an MCP tool shows its server and the
 * hints that server gives about it, marked as its own claims.
 */
export function toolBadges(toolName: string, source: string | undefined, annotations: ToolAnnotations | undefined): ToolBadge[] {
  if (source !== undefined && source.startsWith('mcp:')) {
    const server = source.slice(4);
    const claims: ToolBadge[] = [];
    if (annotations?.readOnly) claims.push({ label: `${server} says: read-only`, tone: 'claim', title: CLAIM_TITLE });
    if (annotations?.destructive) claims.push({ label: `${server} says: destructive`, tone: 'claim', title: CLAIM_TITLE });
    if (annotations?.executesCode) claims.push({ label: `${server} says: runs code`, tone: 'claim', title: CLAIM_TITLE });
    if (annotations?.idempotent) claims.push({ label: `${server} says: idempotent`, tone: 'claim', title: CLAIM_TITLE });
    if (annotations?.openWorld) claims.push({ label: `${server} says: reaches beyond this machine`, tone: 'claim', title: CLAIM_TITLE });
    return [{ label: `MCP · ${server}`, tone: 'source', title: `A tool of the MCP server “${server}”.` }, ...claims];
  }
  const builtin = BUILTIN_BADGES.get(toolName);
  if (source === 'builtin' && builtin !== undefined) return [builtin];
  if (annotations?.executesCode) return [{ label: 'runs code', tone: 'warn', title: 'Runs code on this machine.' }];
  if (annotations?.destructive) return [{ label: 'changes things', tone: 'warn', title: 'May change or delete things.' }];
  if (annotations?.readOnly) return [{ label: 'read-only', tone: 'plain', title: 'Only reads.' }];
  return [];
}
