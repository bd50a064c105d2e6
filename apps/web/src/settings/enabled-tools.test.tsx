import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolInfo } from '../lib/api-types';
import { EnabledTools } from './enabled-tools';

afterEach(cleanup);

const tool = (name: string, source: string, annotations: Partial<ToolInfo['annotations']>): ToolInfo => ({
  name,
  description: `The ${name} tool.`,
  source,
  inputSchema: { type: 'object' },
  annotations: { readOnly: false, destructive: false, executesCode: false, exactGrants: false, idempotent: false, openWorld: false, ...annotations },
});

const badgesOf = (name: string) =>
  [...screen.getByRole('checkbox', { name: new RegExp(`^${name}`) }).closest('label')!.querySelectorAll('.badge')].map((badge) => [
    badge.textContent,
    badge.getAttribute('title'),
  ]);

describe('EnabledTools', () => {
  it('gives each tool the badges of its card: honest words for built-ins, the server’s own claims for MCP tools', () => {
    render(
      <EnabledTools
        tools={[
          tool('web_fetch', 'builtin', { readOnly: true, exactGrants: true }),
          tool('write_file', 'builtin', { destructive: true }),
          tool('notes__read_note', 'mcp:notes', { readOnly: true, idempotent: true, exactGrants: true }),
        ]}
        servers={[{ name: 'notes', state: 'ready', toolCount: 1 }]}
        disabled={[]}
        onChange={() => undefined}
      />,
    );
    expect(badgesOf('web_fetch')).toStrictEqual([['reaches the network', 'Sends a request to an address on the network: what it sends can leave this machine.']]);
    expect(badgesOf('write_file')).toStrictEqual([['changes files', 'Creates or overwrites a file in the workspace.']]);
    expect(badgesOf('notes__read_note')).toStrictEqual([
      ['notes says: read-only', 'The MCP server’s own claim about this tool: Airlock does not check it.'],
      ['notes says: idempotent', 'The MCP server’s own claim about this tool: Airlock does not check it.'],
    ]);
  });

  it('shows off each tool a name turned off may mean now, and turning one on keeps the other off under its own name', () => {
    // `a__b__c` named server a's tool `b__c` until a server `a__b` offering `c` was added: both are hashed now.
    const ofA = { ...tool('a__b__c_11111111', 'mcp:a', {}), otherNames: ['a__b__c', 'a__b__c_22222222'] };
    const ofAB = { ...tool('a__b__c_33333333', 'mcp:a__b', {}), otherNames: ['a__b__c', 'a__b__c_44444444'] };
    const changes: string[][] = [];
    render(
      <EnabledTools
        tools={[ofA, ofAB, tool('other__c', 'mcp:other', {})]}
        servers={[]}
        disabled={['a__b__c']}
        onChange={(disabled) => changes.push(disabled)}
      />,
    );
    const box = (name: string) => screen.getByRole<HTMLInputElement>('checkbox', { name: new RegExp(`^${name}`) });
    expect([box(ofA.name).checked, box(ofAB.name).checked, box('other__c').checked]).toStrictEqual([false, false, true]);
    fireEvent.click(box(ofA.name));
    expect(changes).toStrictEqual([[ofAB.name]]);
  });
});
