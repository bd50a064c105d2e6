import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { deferred } from '@airlock/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const logged = (word: string) => ({ name: 'terminal', arguments: { command: `echo ${word} | tee -a ran.log` } });

const suite = useBrowserSuite();

function toolMessages(request: Record<string, unknown> | undefined): string[] {
  const messages = (request?.messages ?? []) as { role: string; content: unknown }[];
  return messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
}

/** The lines the terminal calls appended to ran.log, in the order they ran; null when none ran. */
async function ranLog(): Promise<string[] | null> {
  const text = await readFile(join(suite.airlock.workspace, 'ran.log'), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  return text === null ? null : text.split('\n').filter((line) => line !== '');
}

/** Waits until the card asks for a decision with controls of its own. */
async function expectAwaiting(chat: ChatPage, card: Locator, toolName: string): Promise<void> {
  await chat.waitForStatus(card, 'Waiting for your decision');
  const group = card.getByRole('group', { name: `Decision for ${toolName}` });
  // A decision button ignores pointer clicks for a moment after it appears (aria-disabled meanwhile).
  for (const name of [`Allow ${toolName}`, `Deny ${toolName}`]) {
    await vi.waitFor(async () => expect(await group.getByRole('button', { name, exact: true }).isEnabled()).toBe(true), { timeout: 10_000 });
  }
  expect(await group.getByRole('timer').textContent()).toMatch(/^Times out in /);
}

describe('several tool calls waiting at once', () => {
  it('decides each call on its own card, and Allow all allows only what still waits', async () => {
    suite.airlock.model.enqueue({ toolCalls: [logged('one'), logged('two'), logged('three')] }, { text: 'Ran one and three, skipped two.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Log three words');
    const [first, second, third] = [chat.card(0), chat.card(1), chat.card(2)];
    for (const card of [first, second, third]) await expectAwaiting(chat, card, 'terminal');
    await first.getByText('echo one | tee -a ran.log', { exact: true }).waitFor();
    await third.getByText('echo three | tee -a ran.log', { exact: true }).waitFor();
    const bar = chat.page.getByRole('region', { name: 'Waiting tool calls' });
    await bar.getByText('3 tool calls are waiting for your decision.').waitFor();

    await chat.button(second, 'Deny with reason…').click();
    await second.getByRole('textbox', { name: 'Reason, passed to the model' }).fill('two is not needed');
    await chat.button(second, 'Deny with this reason').click();
    // Denied means it will not run: shown at once, though the call before it is still undecided.
    await chat.waitForStatus(second, 'Denied');
    await second.getByText('Your reason: two is not needed').waitFor();
    expect(await second.getByRole('group', { name: 'Decision for terminal' }).count()).toBe(0);
    await expectAwaiting(chat, first, 'terminal');
    await expectAwaiting(chat, third, 'terminal');
    await bar.getByText('2 tool calls are waiting for your decision.').waitFor();

    await bar.getByRole('button', { name: 'Allow all', exact: true }).click();
    await chat.waitForText('Ran one and three, skipped two.');
    await chat.waitForStatus(first, 'Done');
    await chat.waitForStatus(second, 'Denied');
    await chat.waitForStatus(third, 'Done');
    await second.getByText('Your reason: two is not needed').waitFor();
    expect(await first.locator('.result-text').textContent()).toMatch(/^one$/m);
    expect(await third.locator('.result-text').textContent()).toMatch(/^three$/m);
    await bar.waitFor({ state: 'detached' });

    expect(await ranLog()).toStrictEqual(['one', 'three']);
    expect(suite.airlock.model.requests).toHaveLength(2);
    const told = toolMessages(suite.airlock.model.requests[1]);
    expect(told).toHaveLength(3);
    expect(told[0]).toMatch(/^one$/m);
    expect(told[1]).toContain('Their reason, in their own words: two is not needed');
    expect(told[2]).toMatch(/^three$/m);
  });

  it('shows a later call decided in another tab at once, and again after a reload', async () => {
    suite.airlock.model.enqueue({ toolCalls: [logged('one'), logged('two')] }, { text: 'Logged both words.' });
    const tab1 = await ChatPage.open(suite.context, suite.airlock.link);
    await tab1.send('Log two words in order');
    await expectAwaiting(tab1, tab1.card(0), 'terminal');
    await expectAwaiting(tab1, tab1.card(1), 'terminal');

    const tab2 = await ChatPage.open(suite.context, suite.airlock.link);
    await tab2.openSession('Log two words in order');
    await expectAwaiting(tab2, tab2.card(1), 'terminal');
    await tab2.button(tab2.card(1), 'Allow terminal').click();
    await tab2.waitForStatus(tab2.card(1), 'Allowed, waiting its turn');

    // Tab 1 sent nothing: only the run's tool-decision event, reported as the decision was made, moves its card.
    const expectSecondAllowedFirstWaiting = async () => {
      await tab1.waitForStatus(tab1.card(1), 'Allowed, waiting its turn');
      await tab1.card(1).getByText('You allowed it in another tab. It runs once the calls before it are done.').waitFor();
      expect(await tab1.card(1).getByRole('group', { name: 'Decision for terminal' }).count()).toBe(0);
      await expectAwaiting(tab1, tab1.card(0), 'terminal');
      await tab1.page.getByRole('region', { name: 'Waiting tool calls' }).waitFor({ state: 'detached' });
    };
    await expectSecondAllowedFirstWaiting();
    expect(await ranLog()).toBeNull();

    await tab1.page.reload();
    await tab1.connected();
    await expectSecondAllowedFirstWaiting();

    await tab1.button(tab1.card(0), 'Allow terminal').click();
    await tab1.waitForText('Logged both words.');
    await tab1.waitForStatus(tab1.card(0), 'Done');
    await tab1.waitForStatus(tab1.card(1), 'Done');
    await tab2.waitForStatus(tab2.card(0), 'Done');
    expect(await ranLog()).toStrictEqual(['one', 'two']);
  });

  it('denies every waiting call with Deny all and runs none', async () => {
    suite.airlock.model.enqueue({ toolCalls: [logged('one'), logged('two')] }, { text: 'Nothing ran.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Log two words');
    const [first, second] = [chat.card(0), chat.card(1)];
    await expectAwaiting(chat, first, 'terminal');
    await expectAwaiting(chat, second, 'terminal');

    await chat.page.getByRole('region', { name: 'Waiting tool calls' }).getByRole('button', { name: 'Deny all', exact: true }).click();
    await chat.waitForText('Nothing ran.');
    await chat.waitForStatus(first, 'Denied');
    await chat.waitForStatus(second, 'Denied');

    expect(await ranLog()).toBeNull();
    expect(toolMessages(suite.airlock.model.requests[1])).toStrictEqual([
      expect.stringContaining('The person declined this call to "terminal"'),
      expect.stringContaining('The person declined this call to "terminal"'),
    ]);
  });

  it('releases the second read_file call with Always allow on the first', async () => {
    await writeFile(join(suite.airlock.workspace, 'a.txt'), 'alpha line\n');
    await writeFile(join(suite.airlock.workspace, 'b.txt'), 'beta line\n');
    const answer = deferred();
    suite.airlock.model.enqueue(
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }, { name: 'read_file', arguments: { path: 'b.txt' } }] },
      { text: 'Both files read.', hold: answer.promise },
    );
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Read both files');
    const [first, second] = [chat.card(0), chat.card(1)];
    await expectAwaiting(chat, first, 'read_file');
    await expectAwaiting(chat, second, 'read_file');

    await chat.button(first, 'Always allow read_file').click();
    await chat.waitForStatus(first, 'Done');
    await chat.waitForStatus(second, 'Done');
    await second.getByText('Allowed by an “Always allow” in this chat.').waitFor();
    // While the run still goes (the model's answer is held back), the chat lists the new grant.
    await chat.page.getByText('Always allowed in this chat (1)').waitFor();
    answer.resolve();
    await chat.waitForText('Both files read.');
    expect(await first.getByText('Allowed by an “Always allow” in this chat.').count()).toBe(0);
    expect(await first.locator('.result-text').textContent()).toBe('alpha line\n');
    expect(await second.locator('.result-text').textContent()).toBe('beta line\n');
    expect(toolMessages(suite.airlock.model.requests[1])).toStrictEqual(['alpha line\n', 'beta line\n']);
  });
});
