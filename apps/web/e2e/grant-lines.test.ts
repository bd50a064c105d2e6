import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

const COMMAND = 'echo ok # then\ntouch pwned.txt';

describe('an exact grant in the Always allowed panel', () => {
  // Found in review: the panel drew the command's line break as a space, so a grant that runs `touch pwned.txt`
  // read as `echo ok` and a comment, and was left in place.
  it('draws each line of the command on a line of its own', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: COMMAND } }] }, { text: 'Done.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Say ok');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await chat.button(card, 'Always allow terminal').click();
    await chat.waitForStatus(card, 'Done');
    const panel = chat.page.getByText('Always allowed in this chat (1)');
    await panel.click();
    const grant = chat.page.locator('.grant-args');
    await grant.waitFor();
    expect(await grant.evaluate((element) => (element as HTMLElement).innerText)).toBe(COMMAND);
  });
});
