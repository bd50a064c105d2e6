import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

const PROPOSED = 'echo proposed-by-model | tee -a ran.log';
const EDITED = 'echo edited-by-person | tee -a edited.log';

function toolMessages(request: Record<string, unknown> | undefined): string[] {
  const messages = (request?.messages ?? []) as { role: string; content: unknown }[];
  return messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
}

describe('editing a call before allowing it, in the browser', () => {
  it('runs the edited command, tells the model what ran, and shows both versions, also after a reload', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: PROPOSED } }] }, { text: 'The edited command ran.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Say something from the shell');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');

    await chat.button(card, 'Edit arguments of terminal').click();
    const editor = card.getByRole('form', { name: 'Edit the arguments of terminal' });
    const allowEdited = editor.getByRole('button', { name: 'Allow edited', exact: true });
    // Raw JSON that breaks the tool's schema is refused right there, before anything is sent.
    await editor.getByRole('button', { name: 'Raw JSON', exact: true }).click();
    await editor.getByRole('textbox', { name: 'Arguments as JSON' }).fill('{"command": 5}');
    await editor.getByText('command: Must be text.').waitFor();
    expect(await allowEdited.isDisabled()).toBe(true);
    await editor.getByRole('textbox', { name: 'Arguments as JSON' }).fill(JSON.stringify({ command: PROPOSED }));
    await editor.getByRole('button', { name: 'Form', exact: true }).click();

    const command = editor.getByRole('textbox', { name: /^command/ });
    expect(await command.inputValue()).toBe(PROPOSED);
    await command.fill(EDITED);
    await editor.getByRole('group', { name: 'The edited call as it will run' }).getByText(EDITED, { exact: true }).waitFor();
    await allowEdited.click();

    await chat.waitForStatus(card, 'Done');
    await chat.waitForText('The edited command ran.');
    expect(await card.locator('.result-text').textContent()).toContain('edited-by-person');
    expect(await readFile(join(suite.airlock.workspace, 'edited.log'), 'utf8')).toBe('edited-by-person\n');
    expect(await suite.airlock.runCount()).toBe(0);

    // What the model received: the person edited the call, the arguments that ran, then the output.
    expect(suite.airlock.model.requests).toHaveLength(2);
    const [told] = toolMessages(suite.airlock.model.requests[1]);
    expect(told).toMatch(/^The person edited the arguments before allowing this call\. It ran with: /);
    expect(told).toContain(JSON.stringify({ command: EDITED }));
    expect(told).toContain('edited-by-person');

    const expectBothVersions = async () => {
      await card.getByRole('group', { name: 'Proposed arguments' }).getByText(PROPOSED, { exact: true }).waitFor();
      const edited = card.getByRole('group', { name: 'Edited arguments' });
      await edited.getByText(EDITED, { exact: true }).waitFor();
      expect(await edited.locator('.version-label').textContent()).toBe('Ran with · edited by you');
    };
    await expectBothVersions();

    await chat.page.reload();
    await chat.connected();
    await chat.waitForText('The edited command ran.');
    await chat.waitForStatus(card, 'Done');
    await expectBothVersions();
    expect(await card.getByRole('group', { name: 'Decision for terminal' }).count()).toBe(0);
  });

  it('says, in the tab whose editor held a change, that the edit was not used when another tab allowed the proposal first', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: PROPOSED } }] }, { text: 'The proposal ran.' });
    const editing = await ChatPage.open(suite.context, suite.airlock.link);
    await editing.send('Edit it in one tab');
    const card = editing.card();
    await editing.waitForStatus(card, 'Waiting for your decision');
    await editing.button(card, 'Edit arguments of terminal').click();
    const editor = card.getByRole('form', { name: 'Edit the arguments of terminal' });
    await editor.getByRole('textbox', { name: /^command/ }).fill(EDITED);
    await editor.getByRole('group', { name: 'The edited call as it will run' }).getByText(EDITED, { exact: true }).waitFor();

    const other = await ChatPage.open(suite.context, suite.airlock.link);
    await other.openSession('Edit it in one tab');
    await other.button(other.card(), 'Allow terminal').click();

    await editing.waitForStatus(card, 'Done');
    await editing.waitForText('The proposal ran.');
    expect(await card.getByRole('form').count()).toBe(0);
    expect(await card.getByRole('alert').textContent()).toBe('This call was decided elsewhere, perhaps in another tab, before your edit was sent: your edit was not used.');
    expect(await readFile(join(suite.airlock.workspace, 'ran.log'), 'utf8')).toContain('proposed-by-model\n');
    await other.page.close();
  });
});
