import type { LoopEventOf, ToolInfo } from '@airlock/client';
import { describe, expect, it } from 'vitest';
import { renderAskNote } from './render-tool-call';

const none = { readOnly: false, destructive: false, executesCode: false, exactGrants: false, idempotent: false, openWorld: false };
/** The tool as the client listed it at start: an "Always allow" for it would cover any call. */
const listed: ToolInfo = { name: 'wx__write', description: 'Writes the weather', inputSchema: { type: 'object' }, annotations: none, source: 'mcp:wx' };
const start: LoopEventOf<'tool-start'> = {
  type: 'tool-start',
  toolCallId: 'c1',
  toolName: 'wx__write',
  arguments: { city: 'Paris' },
  approvalId: 'apv_1',
  awaitingConfirmation: true,
  expiresAt: null,
};
const note = (event: LoopEventOf<'tool-start'>) => renderAskNote(event, listed, { columns: 200 }).join(' ').trim();

describe('renderAskNote', () => {
  it('says what "Always" grants for the tool as the call was put up, not as it was listed before it changed', () => {
    expect(note({ ...start, tool: { source: 'mcp:wx', annotations: { ...none, exactGrants: true } } })).toBe('A runs this exact call again without asking, in this chat only');
  });

  it('falls back to the listed tool for a tool-start that does not say what its tool was', () => {
    expect(note(start)).toBe('A runs any wx__write call without asking, in this chat only');
  });
});
