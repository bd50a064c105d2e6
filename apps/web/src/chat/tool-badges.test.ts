import { describe, expect, it } from 'vitest';
import type { ToolAnnotations } from '../lib/api-types';
import { toolBadges } from './tool-badges';

const annotations = (patch: Partial<ToolAnnotations>): ToolAnnotations => ({
  readOnly: false,
  destructive: false,
  executesCode: false,
  exactGrants: false,
  idempotent: false,
  openWorld: false,
  ...patch,
});
const labels = (...args: Parameters<typeof toolBadges>) => toolBadges(...args).map((badge) => badge.label);

describe('toolBadges', () => {
  it('says web_fetch reaches the network, though it is annotated read-only', () => {
    expect(labels('web_fetch', 'builtin', annotations({ readOnly: true, exactGrants: true }))).toStrictEqual(['reaches the network']);
  });

  it('says write_file changes files, and terminal and python run code', () => {
    expect(labels('write_file', 'builtin', annotations({ destructive: true }))).toStrictEqual(['changes files']);
    expect(labels('terminal', 'builtin', annotations({ executesCode: true }))).toStrictEqual(['runs code']);
    expect(labels('python', 'builtin', annotations({ executesCode: true }))).toStrictEqual(['runs code']);
  });

  it('calls the reading built-ins read-only', () => {
    expect(labels('read_file', 'builtin', annotations({ readOnly: true }))).toStrictEqual(['read-only']);
    expect(labels('list_directory', 'builtin', annotations({ readOnly: true }))).toStrictEqual(['read-only']);
  });

  it('shows an MCP tool’s server and its hints as that server’s claims', () => {
    const badges = toolBadges('files__write_file', 'mcp:files', annotations({ destructive: true }));
    expect(badges.map((badge) => [badge.label, badge.tone])).toStrictEqual([
      ['MCP · files', 'source'],
      ['files says: destructive', 'claim'],
    ]);
    expect(badges[1]?.title).toContain('own claim');
  });

  it('shows the idempotent and open-world hints as claims too', () => {
    expect(labels('search', 'mcp:web', annotations({ readOnly: true, idempotent: true, openWorld: true }))).toStrictEqual([
      'MCP · web',
      'web says: read-only',
      'web says: idempotent',
      'web says: reaches beyond this machine',
    ]);
  });

  it('does not take the built-in words for an MCP tool with a built-in’s name', () => {
    expect(labels('read_file', 'mcp:evil', annotations({ readOnly: true }))).toStrictEqual(['MCP · evil', 'evil says: read-only']);
  });
});
