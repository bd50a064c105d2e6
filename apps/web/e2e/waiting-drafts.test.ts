import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator, WebSocketRoute } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

const PROPOSED = 'echo proposed-by-model | tee -a ran.log';
const EDITED = 'echo edited-by-person | tee -a edited.log';
const RESTORED_NOTE = /^Restored draft: /;

function toolMessages(request: Record<string, unknown> | undefined): string[] {
  const messages = (request?.messages ?? []) as { role: string; content: unknown }[];
  return messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
}

/** The drafts this tab keeps, by storage key. */
async function keptDrafts(chat: ChatPage): Promise<string[]> {
  return chat.page.evaluate(() => Object.keys(window.sessionStorage).filter((key) => key.startsWith('airlock.draft.')));
}

async function reload(chat: ChatPage): Promise<void> {
  await chat.page.reload();
  await chat.connected();
}

function note(card: Locator): Locator {
  return card.getByRole('note').filter({ hasText: RESTORED_NOTE });
}

function readJson(message: string | Buffer): unknown {
  try {
    return JSON.parse(String(message)) as unknown;
  } catch {
    return undefined;
  }
}

/** Holds back the server's answers to tools.list on the page's next connections until `release`, as a slow tool list does. */
async function holdToolList(chat: ChatPage): Promise<{ release: () => void }> {
  const asked = new Set<unknown>();
  const held: { page: WebSocketRoute; message: string | Buffer }[] = [];
  let holding = true;
  await chat.page.routeWebSocket(/\/trpc/, (page: WebSocketRoute) => {
    const server = page.connectToServer();
    page.onMessage((message) => {
      for (const request of [readJson(message)].flat() as ({ id?: unknown; params?: { path?: unknown } } | undefined)[]) {
        if (request?.params?.path === 'tools.list') asked.add(request.id);
      }
      server.send(message);
    });
    server.onMessage((message) => {
      const answer = readJson(message) as { id?: unknown } | undefined;
      if (holding && answer !== undefined && asked.has(answer.id)) held.push({ page, message });
      else page.send(message);
    });
  });
  return {
    release: () => {
      holding = false;
      for (const { page, message } of held.splice(0)) page.send(message);
    },
  };
}

describe('what was typed on a waiting card, across a reload', () => {
  it('gives back an edit in progress, marked as a restored draft, which Allow edited then runs; nothing once decided', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: PROPOSED } }] }, { text: 'The edited command ran.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Say something from the shell');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await chat.button(card, 'Edit arguments of terminal').click();
    const editor = card.getByRole('form', { name: 'Edit the arguments of terminal' });
    await editor.getByRole('textbox', { name: /^command/ }).fill(EDITED);
    await editor.getByRole('group', { name: 'The edited call as it will run' }).getByText(EDITED, { exact: true }).waitFor();
    expect(await note(card).count()).toBe(0);

    // The card shows before the tool list, whose schema makes the form: the edit waits for it, kept, rather than lost.
    const toolList = await holdToolList(chat);
    await reload(chat);
    await chat.waitForStatus(card, 'Waiting for your decision');
    await card.getByText('Your edit of the arguments, kept from before this card was last shown, goes back into its form once', { exact: false }).waitFor();
    expect(await note(card).count()).toBe(0);
    expect(await keptDrafts(chat)).toHaveLength(1);
    expect(await card.getByRole('button', { name: 'Allow terminal', exact: true }).isDisabled()).toBe(true);
    toolList.release();
    expect(await note(card).textContent()).toBe(
      'Restored draft: your edit of the arguments, as you left it before this card was last shown. Nothing has been sent yet.',
    );
    expect(await editor.getByRole('textbox', { name: /^command/ }).inputValue()).toBe(EDITED);
    await editor.getByRole('group', { name: 'The edited call as it will run' }).getByText(EDITED, { exact: true }).waitFor();
    // Restoring sent nothing: the call still waits, and the proposal's Allow is off while the editor holds a change.
    expect(await card.getByRole('button', { name: 'Allow terminal', exact: true }).isDisabled()).toBe(true);
    expect(suite.airlock.model.requests).toHaveLength(1);

    await chat.button(editor, 'Allow edited').click();
    await chat.waitForStatus(card, 'Done');
    await chat.waitForText('The edited command ran.');
    expect(await readFile(join(suite.airlock.workspace, 'edited.log'), 'utf8')).toBe('edited-by-person\n');
    expect(await suite.airlock.runCount()).toBe(0);
    const [told] = toolMessages(suite.airlock.model.requests[1]);
    expect(told).toContain(JSON.stringify({ command: EDITED }));
    expect(await keptDrafts(chat)).toStrictEqual([]);

    await reload(chat);
    await chat.waitForText('The edited command ran.');
    await chat.waitForStatus(card, 'Done');
    expect(await note(card).count()).toBe(0);
    expect(await card.getByRole('form').count()).toBe(0);
  });

  it('offers no Allow of the proposal in Waiting for you while its edit is kept, its chat left for another; Review opens the card with the edit', async () => {
    const proposed = 'echo model | tee -a left-ran.log';
    const edited = 'echo person | tee -a left-edited.log';
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: proposed } }] }, { text: 'The edited command ran.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await chat.send('Say it from the shell');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    const waiting = page.getByRole('region', { name: 'Waiting for you' });
    const allowInList = waiting.getByRole('button', { name: `Allow terminal “${proposed}” in Say it from the shell`, exact: true });
    const reviewInList = waiting.getByRole('button', { name: `Review terminal “${proposed}” in Say it from the shell`, exact: true });
    await allowInList.waitFor();
    await chat.button(card, 'Edit arguments of terminal').click();
    const editor = card.getByRole('form', { name: 'Edit the arguments of terminal' });
    await editor.getByRole('textbox', { name: /^command/ }).fill(edited);
    await reviewInList.waitFor();

    await page.getByRole('button', { name: 'New chat', exact: true }).click();
    await card.waitFor({ state: 'detached' });
    expect(await keptDrafts(chat)).toHaveLength(1);
    expect(await reviewInList.count()).toBe(1);
    expect(await allowInList.count()).toBe(0);

    await reviewInList.click();
    await chat.waitForStatus(card, 'Waiting for your decision');
    expect(await note(card).textContent()).toBe('Restored draft: your edit of the arguments, as you left it before this card was last shown. Nothing has been sent yet.');
    await chat.button(editor, 'Allow edited').click();
    await chat.waitForStatus(card, 'Done');
    expect(await readFile(join(suite.airlock.workspace, 'left-edited.log'), 'utf8')).toBe('person\n');
    await expect(readFile(join(suite.airlock.workspace, 'left-ran.log'), 'utf8')).rejects.toThrow();
  });

  it("keeps a deny reason for its own call only, and drops it once that call is denied", async () => {
    const call = (word: string) => ({ name: 'terminal', arguments: { command: `echo ${word} | tee -a ran.log` } });
    suite.airlock.model.enqueue({ toolCalls: [call('one'), call('two')] }, { text: 'Both were denied.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Log two words');
    const [first, second] = [chat.card(0), chat.card(1)];
    await chat.waitForStatus(first, 'Waiting for your decision');
    await chat.waitForStatus(second, 'Waiting for your decision');
    await chat.button(second, 'Deny with reason…').click();
    await second.getByRole('textbox', { name: 'Reason, passed to the model' }).fill('two is not needed');

    await reload(chat);
    await chat.waitForStatus(second, 'Waiting for your decision');
    expect(await note(second).textContent()).toBe('Restored draft: your deny reason, as you left it before this card was last shown. Nothing has been sent yet.');
    const reason = second.getByRole('textbox', { name: 'Reason, passed to the model' });
    expect(await reason.inputValue()).toBe('two is not needed');
    await chat.waitForStatus(first, 'Waiting for your decision');
    expect(await note(first).count()).toBe(0);
    expect(await first.getByRole('textbox', { name: 'Reason, passed to the model' }).count()).toBe(0);

    await chat.button(second, 'Deny with this reason').click();
    await chat.waitForStatus(second, 'Denied');
    await second.getByText('Your reason: two is not needed').waitFor();
    expect(await keptDrafts(chat)).toStrictEqual([]);
    await reload(chat);
    await chat.waitForStatus(second, 'Denied');
    await chat.waitForStatus(first, 'Waiting for your decision');
    expect(await note(first).count()).toBe(0);
    expect(await note(second).count()).toBe(0);

    await chat.button(first, 'Deny terminal').click();
    await chat.waitForText('Both were denied.');
    expect(await keptDrafts(chat)).toStrictEqual([]);
  });
});
