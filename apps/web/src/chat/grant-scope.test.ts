import { describe, expect, it } from 'vitest';
import { editedGrantLabel, grantScope } from './grant-scope';

const plain = { readOnly: true, destructive: false, executesCode: false, exactGrants: false, idempotent: false, openWorld: false };

describe('grantScope', () => {
  it('says a grant for a plain tool covers any call of it', () => {
    expect(grantScope('read_file', plain)).toBe('Always allow runs any read_file call without asking, in this chat only.');
  });

  it('says a grant for a file write or a fetch covers only that exact call', () => {
    expect(grantScope('write_file', { ...plain, readOnly: false, exactGrants: true })).toContain('this exact file');
    expect(grantScope('web_fetch', { ...plain, exactGrants: true })).toContain('this exact URL');
    expect(grantScope('files__move', { ...plain, exactGrants: true })).toContain('Any other files__move call still asks');
  });
});

describe('editedGrantLabel', () => {
  // Found in review: the tick read "the edited call" for every tool, and for read_file or an MCP tool the grant it
  // made covered any call, so the proposal the person had edited away from then ran unasked.
  it('says the tick in the editor covers any call of a tool whose grants are not for exact arguments', () => {
    expect(editedGrantLabel('read_file', plain)).toBe('Also always allow any read_file call in this chat, not only the edited one.');
    expect(editedGrantLabel('list_directory', plain)).toBe('Also always allow any list_directory call in this chat, not only the edited one.');
  });

  it('says the tick covers the edited call of a tool whose grants are for exact arguments, or one not known', () => {
    expect(editedGrantLabel('terminal', { ...plain, executesCode: true, exactGrants: true })).toBe('Also always allow the edited call.');
    expect(editedGrantLabel('write_file', { ...plain, exactGrants: true })).toBe('Also always allow the edited call.');
    // The server grants an MCP server's tool for exact arguments, whatever its hints claim.
    expect(editedGrantLabel('docs__deploy', { ...plain, readOnly: false, destructive: true, exactGrants: true })).toBe('Also always allow the edited call.');
    expect(editedGrantLabel('gone__tool', undefined)).toBe('Also always allow the edited call.');
  });
});
