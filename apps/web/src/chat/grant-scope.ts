import type { ToolAnnotations } from '../lib/api-types';

/** Exactly what "Always allow" grants for this tool, in words a person can check before clicking. */
export function grantScope(toolName: string, annotations: ToolAnnotations | undefined): string {
  if (annotations === undefined) {
    return `Always allow lets ${toolName} run with these exact arguments without asking again, in this chat only.`;
  }
  if (annotations.executesCode || annotations.exactGrants) {
    return `Always allow runs ${exactThing(toolName)} again without asking, in this chat only. Any other ${toolName} call still asks.`;
  }
  return `Always allow runs any ${toolName} call without asking, in this chat only.`;
}

function exactThing(toolName: string): string {
  if (toolName === 'terminal') return 'this exact command';
  if (toolName === 'python') return 'this exact code';
  if (toolName === 'write_file') return 'this write to this exact file with this exact content';
  if (toolName === 'web_fetch') return 'a fetch of this exact URL';
  return 'this call with these exact arguments';
}
