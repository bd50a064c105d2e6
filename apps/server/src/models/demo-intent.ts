/** A plain request the demo model understands, as the tool call it becomes. */
export interface DemoIntent {
  tool: 'list_directory' | 'terminal' | 'read_file' | 'web_fetch' | 'write_file';
  arguments: Record<string, string>;
  /** The phrase that was recognised, for the reasoning text. */
  phrase: string;
}

/** Bounded so that no pattern runs over a pasted document. */
const MAX_REQUEST_CHARS = 4_000;

/**
 * Recognises the few requests the demo model acts on: listing, reading, running, fetching and writing.
 * Anything else is undefined. The first matching pattern wins, most specific first.
 */
export function parseDemoIntent(request: string): DemoIntent | undefined {
  const text = request.trim().replace(/^(?:please|can you|could you)\s+/i, '');
  if (text === '' || text.length > MAX_REQUEST_CHARS) return undefined;

  const link = /\b(?:fetch|get|download|open|visit)\s+<?(https?:\/\/[^\s<>]+)/i.exec(text)?.[1];
  if (link !== undefined) {
    const url = link.replace(/[.,;:!?)]+$/, '');
    return { tool: 'web_fetch', arguments: { url }, phrase: `fetch ${url}` };
  }

  const write = /^write\s+([\s\S]+?)\s+(?:to|into)\s+(?:the\s+file\s+)?([\w./-]+)!?$/i.exec(text);
  const target = write?.[2] === undefined ? undefined : fileLike(write[2]);
  if (write?.[1] !== undefined && target !== undefined) {
    return { tool: 'write_file', arguments: { path: target, content: unquote(write[1]) }, phrase: `write … to ${target}` };
  }

  const quotedCommand = /\brun\s+`([^`]+)`/i.exec(text)?.[1];
  const command = quotedCommand ?? /^run\s+(.+)$/is.exec(text)?.[1];
  if (command !== undefined && command.trim() !== '') {
    const line = unquote(command.trim());
    return { tool: 'terminal', arguments: { command: line }, phrase: `run ${line}` };
  }

  const ls = /^(?:ls|dir)(?:\s+([\w./-]+))?$/i.exec(text);
  const listFiles = /\b(?:list|show)\b.*\bfiles\b(?:\s+in\s+(?:the\s+)?(?:folder\s+)?([\w./-]+))?/i.exec(text);
  const listing = ls ?? listFiles;
  if (listing) {
    const path = listing[1]?.replace(/[.]$/, '') || '.';
    return { tool: 'list_directory', arguments: { path }, phrase: ls ? 'ls' : 'list the files' };
  }

  const named = /\b(?:read|show|cat|open|print)\s+(?:me\s+)?(?:the\s+)?(?:file\s+)?[`'"]?([\w./-]+)/i.exec(text)?.[1];
  const file = named === undefined ? undefined : fileLike(named);
  if (file !== undefined) return { tool: 'read_file', arguments: { path: file }, phrase: `read ${file}` };

  return undefined;
}

/** A token that names a file: it has a dot or a slash in it, and a sentence's final dot is not part of it. */
function fileLike(token: string): string | undefined {
  const path = token.replace(/\.+$/, '');
  return /[./]/.test(path) && /\w/.test(path) ? path : undefined;
}

function unquote(text: string): string {
  const match = /^(["'`])([\s\S]*)\1$/.exec(text.trim());
  return match?.[2] ?? text.trim();
}
