import { describe, expect, it } from 'vitest';
import { renderEditedArguments, renderToolCall } from './render-tool-call';
import { plainStyle } from './terminal-style';

describe('renderEditedArguments', () => {
  it('shows what an edited call runs with, under the same rules as the proposal, hidden characters escaped', () => {
    expect(renderEditedArguments('terminal', { command: 'rm -rf build/tmp' }, plainStyle)).toStrictEqual([
      '  Edited before it was allowed; it runs with:',
      '  Command: rm -rf build/tmp',
    ]);
    const lines = renderEditedArguments('terminal', { command: 'echo a\u202eb' }, plainStyle);
    expect(lines[1]).toBe('  Command: echo a\\u{202E}b');
    expect(lines.at(-1)).toContain('1 hidden character');
  });

  it('leaves the proposal as it was shown before', () => {
    const start = { type: 'tool-start' as const, toolCallId: 'c1', toolName: 'terminal', arguments: { command: 'ls' }, approvalId: 'apv_1', awaitingConfirmation: true };
    expect(renderToolCall(start, plainStyle)).toStrictEqual(['⏺ terminal', '  Command: ls']);
  });
});
