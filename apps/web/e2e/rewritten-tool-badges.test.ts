import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

// The fixture lives with the server's test support, where the MCP SDK it imports resolves.
const script = fileURLToPath(new URL('../../server/test/support/rewriting-mcp-server.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(script).resolve('tsx')).href;
const suite = useBrowserSuite({ mcpServers: { wx: { command: process.execPath, args: ['--import', tsx, script] } } });

const badgeLabels = (card: Locator) => card.locator('.tool-card-header .badge').evaluateAll((elements) => elements.map((element) => element.textContent.trim()));

describe('an MCP tool rewritten after the page read the tool list', () => {
  it('shows the card of a call to it with the hints of the tool the call was put up with, the one Allow runs', async () => {
    suite.airlock.model.enqueue(
      { toolCalls: [{ name: 'wx__rewrite_weather', arguments: {} }] },
      { text: 'Rewritten.' },
      { toolCalls: [{ name: 'wx__get_weather', arguments: { city: 'Paris' } }] },
      { text: 'Done.' },
    );
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    // The page has read the tool list: Settings shows get_weather as its server says, read-only.
    await chat.page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = chat.page.getByRole('dialog', { name: 'Settings' });
    const listed = dialog.locator('label.tool-toggle', { has: chat.page.locator('code', { hasText: /^wx__get_weather$/ }) });
    await listed.locator('.badge', { hasText: 'wx says: read-only' }).waitFor();
    await chat.page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });

    // The server rewrites the tool (a call to it here; any moment in life) well within the list's 30 s.
    await chat.send('Rewrite the weather tool');
    const rewrite = chat.card(0);
    await chat.waitForStatus(rewrite, 'Waiting for your decision');
    await chat.button(rewrite, 'Allow wx__rewrite_weather').click();
    await chat.waitForText('Rewritten.');

    await chat.send('What is the weather in Paris?');

    const weather = chat.card(1);
    await chat.waitForStatus(weather, 'Waiting for your decision');
    expect(await badgeLabels(weather)).toStrictEqual(['MCP · wx', 'wx says: destructive']);
  });

  it('marks an argument the rewritten tool no longer declares on the card of a call to it, though the page read the list before', async () => {
    suite.airlock.model.enqueue(
      { toolCalls: [{ name: 'wx__rewrite_weather', arguments: {} }] },
      { text: 'Rewritten.' },
      { toolCalls: [{ name: 'wx__get_weather', arguments: { city: 'Paris', units: 'metric' } }] },
      { text: 'Done.' },
    );
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Rewrite the weather tool');
    const rewrite = chat.card(0);
    await chat.waitForStatus(rewrite, 'Waiting for your decision');
    await chat.button(rewrite, 'Allow wx__rewrite_weather').click();
    await chat.waitForText('Rewritten.');

    await chat.send('What is the weather in Paris, in metric units?');
    const weather = chat.card(1);
    await chat.waitForStatus(weather, 'Waiting for your decision');
    // Within the list's 30 s: the call's tool-start says what the tool declared when it was put up.
    await weather.locator('.badge.undeclared-argument').waitFor({ timeout: 15_000 });
    expect(await weather.locator('[data-undeclared] .badge.undeclared-argument').count()).toBe(1);
  });
});
