import { describe, expect, it } from 'vitest';
import { argumentPreview } from './argument-preview';

describe('argumentPreview', () => {
  it('shows a short command whole', () => {
    expect(argumentPreview('terminal', { command: 'ls -la' })).toBe('ls -la');
  });

  it('cuts after the first line and says how many lines there are', () => {
    expect(argumentPreview('python', { code: 'import os\nprint(os.getcwd())\n' })).toBe('import os… (3 lines)');
  });

  it('cuts a long line with an ellipsis', () => {
    expect(argumentPreview('terminal', { command: 'x'.repeat(100) }, 10)).toBe(`${'x'.repeat(10)}…`);
  });

  it('shows hidden and direction characters as codes, never raw', () => {
    const preview = argumentPreview('terminal', { command: 'echo safe\u202E; rm -rf ~' });
    expect(preview).not.toContain('\u202E');
    expect(preview).toContain('\\u{202E}');
  });

  it('names the argument of a tool without a code argument', () => {
    expect(argumentPreview('read_file', { path: 'notes.md' })).toBe('path: notes.md');
  });
});
