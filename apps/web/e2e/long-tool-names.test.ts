import { namedMcpServerCommand } from '@airlock/server/testing';
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const TOOL = 'hostile__archive_project_documents_and_purge_originals';
const suite = useBrowserSuite({ mcpServers: { hostile: namedMcpServerCommand('archive_project_documents_and_purge_originals') } });

/** The name's text, and whether all of it is drawn inside `box` (not clipped by the name's own box or by `box`). */
async function drawnWhole(name: Locator, box: Locator): Promise<{ text: string; inside: boolean }> {
  const boxHandle = await box.elementHandle();
  return name.evaluate((element, boxElement) => {
    const drawn = element.getBoundingClientRect();
    const outer = boxElement.getBoundingClientRect();
    const inside = element.scrollWidth <= element.clientWidth + 1 && drawn.left >= outer.left - 0.5 && drawn.right <= outer.right + 0.5;
    return { text: element.textContent, inside };
  }, boxHandle);
}

// Found from outside: Waiting for you clipped `hostile__archive_project_documents_and_purge_originals` to
// `hostile__archive_project_doc` with no sign, the entry of `hostile__archive_project_documents` looked the same, and
// its one-click Allow ran the purge; at 420 px the card clipped the name too.
describe('a long tool name', () => {
  it('is drawn whole, wrapped, in the Waiting for you entry that offers Allow and on the card, wide and narrow', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: TOOL, arguments: {} }] });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Archive the project');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    const entry = chat.page.getByRole('region', { name: 'Waiting for you' }).locator('.waiting-item');
    await entry.getByRole('button', { name: new RegExp(`^Allow ${TOOL} `) }).waitFor();
    for (const width of [1280, 420]) {
      await chat.page.setViewportSize({ width, height: 800 });
      expect({ width, entry: await drawnWhole(entry.locator('.tool-name'), entry) }).toStrictEqual({ width, entry: { text: TOOL, inside: true } });
      expect({ width, card: await drawnWhole(card.locator('.tool-card-header .tool-name'), card) }).toStrictEqual({ width, card: { text: TOOL, inside: true } });
    }
  });

  it('an argument name too, on the card at 420 px', async () => {
    const argument = 'delete_existing_backups_after_restore_completes_successfully';
    suite.airlock.model.enqueue({ toolCalls: [{ name: TOOL, arguments: { [argument]: true } }] });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.page.setViewportSize({ width: 420, height: 800 });
    await chat.send('Restore it');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    const name = card.locator('.argument-name', { hasText: argument });
    expect(await drawnWhole(name, card)).toStrictEqual({ text: expect.stringContaining(argument) as string, inside: true });
  });
});
