import { createAirlockClient, parseStartupLink } from '@airlock/client';
import { namedMcpServerCommand } from '@airlock/server/testing';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

// `a` offering `b__c` and `a__b` offering `c` would both be `a__b__c`: each is offered with a hash of its server and tool.
const suite = useBrowserSuite({ mcpServers: { a: namedMcpServerCommand('b__c'), a__b: namedMcpServerCommand('c') } });

const hashed = (server: string, tool: string) => `a__b__c_${createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8)}`;
const ofA = hashed('a', 'b__c');
const ofAB = hashed('a__b', 'c');

function offeredTools(request: Record<string, unknown> | undefined): string[] {
  const tools = (request?.tools ?? []) as { function: { name: string } }[];
  return tools.map((tool) => tool.function.name);
}

describe('a tool turned off under the name it had before the hash', () => {
  it('stays off, as does the other tool the name may mean, in the dialog and for the model, until turned on', async () => {
    // Turned off when `a` was the only server, so its tool was `a__b__c`.
    const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket });
    try {
      await client.trpc.settings.update.mutate({ disabledTools: ['a__b__c'] });

      const chat = await ChatPage.open(suite.context, suite.airlock.link);
      await chat.page.getByRole('button', { name: 'Settings', exact: true }).click();
      const dialog = chat.page.getByRole('dialog', { name: 'Settings' });
      const box = (name: string) => dialog.getByRole('checkbox', { name: new RegExp(`^${name}`) });
      await box(ofA).waitFor();
      expect([await box(ofA).isChecked(), await box(ofAB).isChecked(), await box('python').isChecked()]).toStrictEqual([false, false, true]);
      await chat.page.keyboard.press('Escape');

      suite.airlock.model.enqueue({ text: 'Neither of them.' });
      await chat.send('What can you use?');
      await chat.waitForText('Neither of them.');
      const first = offeredTools(suite.airlock.model.requests[0]);
      expect(first).toContain('python');
      expect(first.filter((name) => name.startsWith('a__b__c'))).toStrictEqual([]);

      // Turning one on leaves the other off, under its own name now.
      await chat.page.getByRole('button', { name: 'Settings', exact: true }).click();
      await box(ofA).check();
      await box(ofA).and(dialog.getByRole('checkbox', { checked: true })).waitFor();
      expect(await box(ofAB).isChecked()).toBe(false);
      await expect.poll(async () => (await client.trpc.settings.get.query()).settings.disabledTools).toStrictEqual([ofAB]);
      await chat.page.keyboard.press('Escape');

      const requestsBefore = suite.airlock.model.requests.length;
      suite.airlock.model.enqueue({ text: 'One of them.' });
      await chat.send('And now?');
      await chat.waitForText('One of them.');
      const second = offeredTools(suite.airlock.model.requests[requestsBefore]);
      expect(second.filter((name) => name.startsWith('a__b__c'))).toStrictEqual([ofA]);
    } finally {
      await client.close();
    }
  });
});
