import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { unshownDefaultsNote } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

// The fixture lives with the server's MCP test servers, where the MCP SDK it imports resolves: its `notify` tool takes
// an anyOf whose branches give `urgent` different defaults, told apart only by a pattern.
const script = fileURLToPath(new URL('../../server/src/mcp/fixtures/hostile-server.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(script).resolve('tsx')).href;
const suite = useBrowserSuite({ mcpServers: { ops: { command: process.execPath, args: ['--import', tsx, script], env: { HOSTILE: 'defaults' } } } });

describe('a call to an MCP tool that may run on a default its card does not show', () => {
  it('says so on the card and why, and the bar over several waiting calls says one of them may', async () => {
    suite.airlock.model.enqueue(
      {
        toolCalls: [
          { name: 'ops__notify', arguments: { to: '#ops@example.test' } },
          { name: 'ops__notify', arguments: { to: '#ops@example.test', urgent: false } },
        ],
      },
      { text: 'Done.' },
    );
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Tell ops');
    const unsure = chat.card(0);
    const sure = chat.card(1);
    await chat.waitForStatus(unsure, 'Waiting for your decision');
    await chat.waitForStatus(sure, 'Waiting for your decision');

    const note = unsure.locator('.unshown-defaults-warning');
    expect(await note.textContent()).toBe(unshownDefaultsNote(['ambiguous']));
    expect(await note.getAttribute('role')).toBe('note');
    expect(await note.textContent()).toContain('several of its alternatives fit this call');
    expect(await sure.locator('.unshown-defaults-warning').count()).toBe(0);
    const bar = chat.page.getByRole('region', { name: 'Waiting tool calls' });
    expect(await bar.locator('.unshown-defaults-warning').textContent()).toBe('One of them may run with defaults its card does not show (said on its card). Read its card before you allow all.');

    // After a reload the card is drawn from the ledger, which kept it.
    await chat.page.reload();
    await chat.connected();
    await chat.waitForStatus(chat.card(0), 'Waiting for your decision');
    expect(await chat.card(0).locator('.unshown-defaults-warning').textContent()).toBe(unshownDefaultsNote(['ambiguous']));
    expect(await chat.card(1).locator('.unshown-defaults-warning').count()).toBe(0);
  });
});
