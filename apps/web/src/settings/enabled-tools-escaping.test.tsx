import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolInfo } from '../lib/api-types';
import { EnabledTools } from './enabled-tools';

afterEach(cleanup);

/** Reordering and zero-width characters. */
const HIDDEN = /[\u202a-\u202e\u2066-\u2069\u200b-\u200f]/u;

const weather: ToolInfo = {
  name: 'wx__get_weather',
  description: 'Reads the weather \u202eevitcurtsed\u202c \u200bhidden\u200b',
  source: 'mcp:wx',
  inputSchema: { type: 'object' },
  annotations: { readOnly: true, destructive: false, executesCode: false, exactGrants: false, idempotent: false, openWorld: false },
};

describe('EnabledTools: what an MCP server writes', () => {
  it('shows a tool’s description and a server’s error with their reordering and invisible characters as visible codes', () => {
    render(
      <EnabledTools
        tools={[weather]}
        servers={[
          { name: 'wx', state: 'ready', toolCount: 1 },
          { name: 'broken', state: 'failed', toolCount: 0, error: 'exited: \u202egnorw\u202c\u200b' },
        ]}
        disabled={[]}
        onChange={() => undefined}
      />,
    );
    const description = document.querySelector('.tool-description')!;
    expect(description.textContent).not.toMatch(HIDDEN);
    expect(description.textContent).toContain('\\u{202E}');
    expect(description.textContent).toContain('\\u{200B}');
    expect(description.textContent).toContain('Reads the weather');
    const legend = screen.getByText(/MCP: broken/).closest('legend')!;
    expect(legend.textContent).not.toMatch(HIDDEN);
    expect(legend.textContent).toContain('\\u{202E}');
  });
});
