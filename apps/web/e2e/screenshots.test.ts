import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { startAirlockUnderTest } from './support/airlock-under-test';
import { launchChromium } from './support/browser';
import { ChatPage } from './support/chat-page';

const OUT = fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url));

/** Pictures of the main states for the docs. Run with AIRLOCK_SCREENSHOTS=1 (`pnpm --filter @airlock/web screenshots`). */
describe.runIf(process.env.AIRLOCK_SCREENSHOTS === '1')('screenshots', () => {
  it('captures the chat, a pending approval, a denied call and the settings', async () => {
    await mkdir(OUT, { recursive: true });
    await using airlock = await startAirlockUnderTest();
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 });
      airlock.model.enqueue(
        {
          reasoning: 'The person wants to know what is in the workspace. Listing it with the terminal is the quickest way.',
          text: 'Let me look at the workspace.',
          toolCalls: [{ name: 'terminal', arguments: { command: 'ls -la' } }],
        },
        { text: 'The workspace is empty. I can add a starter `README.md`:\n\n```markdown\n# My project\n\nWhat it does and how to run it.\n```\n\nShall I write it?' },
      );
      const chat = await ChatPage.open(context, airlock.link);
      await chat.send('What is in this folder?');
      await chat.waitForStatus(chat.card(0), 'Waiting for your decision');
      await chat.button(chat.card(0), 'Allow terminal').click();
      await chat.waitForText('Shall I write it?');

      airlock.model.enqueue({
        text: 'I will write the file and count its lines.',
        toolCalls: [
          {
            name: 'python',
            arguments: { code: "from pathlib import Path\n\nreadme = Path('README.md')\nreadme.write_text('# My project\\n\\nWhat it does and how to run it.\\n')\nprint(len(readme.read_text().splitlines()))" },
          },
        ],
      });
      await chat.send('Yes, write it, then count its lines with Python.');
      const pending = chat.card(1);
      await chat.waitForStatus(pending, 'Waiting for your decision');
      await chat.button(pending, 'Deny with reason…').click();
      await pending.getByRole('textbox').fill('Not yet: show me the text first');
      await chat.page.screenshot({ path: `${OUT}chat-pending-approval.png` });
      await chat.page.emulateMedia({ colorScheme: 'dark' });
      await chat.page.screenshot({ path: `${OUT}chat-pending-approval-dark.png` });
      await chat.page.emulateMedia({ colorScheme: 'light' });

      airlock.model.enqueue({ text: 'Understood, I have not written anything. Here is the text I would put in `README.md`:\n\n> # My project\n>\n> What it does and how to run it.' });
      await chat.button(pending, 'Deny with this reason').click();
      await chat.waitForStatus(pending, 'Denied');
      await chat.waitForText('Here is the text I would put');
      await chat.page.screenshot({ path: `${OUT}chat-denied-call.png` });

      await chat.page.getByRole('button', { name: 'Settings' }).click();
      await chat.page.getByRole('dialog', { name: 'Settings' }).waitFor();
      await chat.page.screenshot({ path: `${OUT}settings.png` });

      const stranger = await context.newPage();
      await stranger.goto(`${airlock.server.url}/#token=expired`);
      await stranger.getByRole('heading', { name: 'Could not confirm this is Airlock' }).waitFor();
      await stranger.screenshot({ path: `${OUT}access-link.png` });
    } finally {
      await browser.close();
    }
  });

  it('captures the calls waiting across chats, with the card in focus', async () => {
    await using airlock = await startAirlockUnderTest();
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 });
      airlock.model.enqueue(
        { text: 'I will check the disk usage first.', toolCalls: [{ name: 'terminal', arguments: { command: 'du -sh .' } }] },
        { text: 'Fetching the release notes.', toolCalls: [{ name: 'web_fetch', arguments: { url: 'https://example.com/releases.json' } }] },
      );
      const chat = await ChatPage.open(context, airlock.link);
      await chat.send('How big is this project?');
      await chat.waitForStatus(chat.card(0), 'Waiting for your decision');
      await chat.page.getByRole('button', { name: 'New chat', exact: true }).click();
      await chat.send('What changed in the last release?');
      await chat.waitForStatus(chat.card(0), 'Waiting for your decision');
      await chat.page.getByRole('heading', { name: /Waiting for you \(2\)/ }).waitFor();
      await chat.page.keyboard.press('Alt+KeyN');
      await chat.page.locator('article:focus').waitFor();
      await chat.page.screenshot({ path: `${OUT}waiting-for-you.png` });
      await chat.page.setViewportSize({ width: 390, height: 844 });
      await chat.page.screenshot({ path: `${OUT}narrow-screen.png` });
    } finally {
      await browser.close();
    }
  });

  it('captures a call being edited before it is allowed', async () => {
    await using airlock = await startAirlockUnderTest();
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 });
      airlock.model.enqueue({ text: 'I will clear the build folder.', toolCalls: [{ name: 'terminal', arguments: { command: 'rm -rf build' } }] });
      const chat = await ChatPage.open(context, airlock.link);
      await chat.send('Clean up the temporary build files');
      const card = chat.card(0);
      await chat.waitForStatus(card, 'Waiting for your decision');
      await chat.button(card, 'Edit arguments of terminal').click();
      const editor = card.getByRole('form', { name: 'Edit the arguments of terminal' });
      await editor.getByRole('textbox', { name: /^command/ }).fill('rm -rf build/tmp');
      await editor.getByRole('group', { name: 'The edited call as it will run' }).waitFor();
      await card.scrollIntoViewIfNeeded();
      await chat.page.screenshot({ path: `${OUT}edit-before-allow.png` });
    } finally {
      await browser.close();
    }
  });
});
