import type { ToolAnnotations } from '../lib/api-types';

/** Exactly what "Always allow" grants for this tool, in words a person can check before clicking. */
export function grantScope(toolName: string, annotations: ToolAnnotations | undefined): string {
  if (annotations === undefined) {
    return `Always allow lets ${toolName} run with these exact arguments without asking again, in this chat only.`;
  }
  if (!grantsAnyCall(annotations)) {
    return `Always allow runs ${exactThing(toolName)} again without asking, in this chat only. Any other ${toolName} call still asks.`;
  }
  return `Always allow runs any ${toolName} call without asking, in this chat only.`;
}

/**
 * Whether an "Always allow" of this tool covers any call of it in the chat, not only the arguments it was given for
 * (a tool that runs no code, writes no file and fetches nothing, such as read_file; an MCP server's tools are granted
 * for exact arguments): then so does one ticked in the editor, the model's proposal the person edited away from too. Unknown annotations: false, as the
 * server grants a tool it does not know only for exact arguments.
 */
export function grantsAnyCall(annotations: ToolAnnotations | undefined): boolean {
  return annotations !== undefined && annotations.executesCode !== true && annotations.exactGrants !== true;
}

/** What the editor's "Also always allow" tick grants, in words: the edited call, or any call of the tool. */
export function editedGrantLabel(toolName: string, annotations: ToolAnnotations | undefined): string {
  return grantsAnyCall(annotations) ? `Also always allow any ${toolName} call in this chat, not only the edited one.` : 'Also always allow the edited call.';
}

function exactThing(toolName: string): string {
  if (toolName === 'terminal') return 'this exact command';
  if (toolName === 'python') return 'this exact code';
  if (toolName === 'write_file') return 'this write to this exact file with this exact content';
  if (toolName === 'web_fetch') return 'a fetch of this exact URL';
  return 'this call with these exact arguments';
}
