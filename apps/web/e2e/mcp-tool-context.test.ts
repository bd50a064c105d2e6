import { annotatedMcpServerCommand } from '@airlock/server/testing';
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite({ mcpServers: { notes: annotatedMcpServerCommand() } });

const CLAIM_TITLE = 'The MCP server’s own claim about this tool: Airlock does not check it.';

function readBadges(badges: Locator): Promise<{ label: string; kind: string | null; title: string | null }[]> {
  return badges.evaluateAll((elements) =>
    elements.map((element) => ({ label: element.textContent.trim(), kind: element.className, title: element.getAttribute('title') })),
  );
}

async function badges(card: Locator): Promise<{ label: string; kind: string | null; title: string | null }[]> {
  // The tool list arrives on its own query: wait for the source badge before reading the others.
  await card.locator('.badge-source').waitFor();
  return readBadges(card.locator('.tool-card-header .badge'));
}

function toolMessages(request: Record<string, unknown> | undefined): string[] {
  const messages = (request?.messages ?? []) as { role: string; content: unknown }[];
  return messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
}

const claim = (label: string) => ({ label: `notes says: ${label}`, kind: 'badge badge-claim', title: CLAIM_TITLE });

describe('an MCP tool’s context on its card', () => {
  it('names the server and shows each hint as that server’s own claim, and runs the real tool once allowed', async () => {
    suite.airlock.model.enqueue(
      {
        toolCalls: [
          { name: 'notes__read_note', arguments: { name: 'groceries' } },
          { name: 'notes__publish_note', arguments: { name: 'groceries' } },
        ],
      },
      { text: 'Read and published.' },
    );
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Read my groceries note, then publish it');
    const reader = chat.card(0);
    const publisher = chat.card(1);
    await chat.waitForStatus(publisher, 'Waiting for your decision');

    const source = { label: 'MCP · notes', kind: 'badge badge-source', title: 'A tool of the MCP server “notes”.' };
    expect(await badges(reader)).toStrictEqual([source, claim('read-only'), claim('idempotent')]);
    expect(await badges(publisher)).toStrictEqual([source, claim('destructive'), claim('reaches beyond this machine')]);

    await chat.button(reader, 'Allow notes__read_note').click();
    await chat.waitForStatus(reader, 'Done');
    await chat.button(publisher, 'Allow notes__publish_note').click();
    await chat.waitForStatus(publisher, 'Done');
    await chat.waitForText('Read and published.');
    expect(await reader.locator('.result-text').textContent()).toBe('Note "groceries" reads: milk, eggs.');
    expect(await publisher.locator('.result-text').textContent()).toBe('Note "groceries" published to the board.');
    expect(toolMessages(suite.airlock.model.requests[1])).toStrictEqual([
      expect.stringContaining('Note "groceries" reads: milk, eggs.'),
      expect.stringContaining('Note "groceries" published to the board.'),
    ]);
  });

  it('lists the server’s tools in Settings with the same claims, and web_fetch as reaching the network', async () => {
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = chat.page.getByRole('dialog', { name: 'Settings' });
    const group = dialog.getByRole('group', { name: /^MCP: notes/ });
    const entry = (scope: Locator, name: string) => scope.locator('label.tool-toggle', { has: chat.page.locator('code', { hasText: new RegExp(`^${name}$`) }) });
    await entry(group, 'notes__publish_note').waitFor();
    expect(await readBadges(entry(group, 'notes__read_note').locator('.badge'))).toStrictEqual([claim('read-only'), claim('idempotent')]);
    expect(await readBadges(entry(group, 'notes__publish_note').locator('.badge'))).toStrictEqual([claim('destructive'), claim('reaches beyond this machine')]);
    const builtins = dialog.getByRole('group', { name: 'Built-in tools' });
    expect((await readBadges(entry(builtins, 'web_fetch').locator('.badge'))).map((badge) => badge.label)).toStrictEqual(['reaches the network']);
  });
});
