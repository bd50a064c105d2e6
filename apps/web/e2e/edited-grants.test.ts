import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

describe('an Always allow ticked in the editor', () => {
  // Found in review: for a tool whose grants cover any call (read_file, an MCP tool), the editor's tick read "Also
  // always allow the edited call", and the grant it made let the very call the person had edited away from run unasked.
  it('says it covers every call of a tool whose grants are not for exact arguments', async () => {
    await writeFile(join(suite.airlock.workspace, 'notes.txt'), 'notes\n');
    await writeFile(join(suite.airlock.workspace, 'secret.txt'), 'secret\n');
    suite.airlock.model.enqueue(
      { toolCalls: [{ name: 'read_file', arguments: { path: 'secret.txt' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'secret.txt' } }] },
      { text: 'Read both.' },
    );
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Read my notes');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await chat.button(card, 'Edit arguments of read_file').click();
    const editor = card.getByRole('form', { name: 'Edit the arguments of read_file' });
    await editor.getByRole('textbox', { name: /^path/ }).fill('notes.txt');
    const tick = editor.getByRole('checkbox');
    const offered = await editor.locator('label.argument-always').textContent();
    await tick.check();
    await editor.getByRole('button', { name: /Always allow/ }).click();
    await chat.waitForStatus(card, 'Done');

    const second = chat.card(1);
    await chat.waitForStatus(second, 'Done');
    expect(await second.textContent()).toContain('Allowed by an “Always allow” in this chat.');
    expect(offered).toBe('Also always allow any read_file call in this chat, not only the edited one. Always allow runs any read_file call without asking, in this chat only.');
  });
});
