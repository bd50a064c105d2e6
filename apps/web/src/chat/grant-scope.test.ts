import { describe, expect, it } from 'vitest';
import { grantScope } from './grant-scope';

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
