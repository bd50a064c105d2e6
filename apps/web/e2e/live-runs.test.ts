import type { WebSocketRoute } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { RECORDING_COMMAND } from './support/airlock-under-test';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const runTerminal = { toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] };

const suite = useBrowserSuite();

/** A chat.stream message (a tracked event or the end of the stream), as opposed to the answer to a query or mutation. */
function isRunEvent(message: string | Buffer): boolean {
  try {
    const parsed = JSON.parse(String(message)) as { result?: { id?: unknown; type?: unknown } };
    return typeof parsed.result?.id === 'string' || parsed.result?.type === 'stopped';
  } catch {
    return false;
  }
}

/** Starts a chat whose first call waits for a decision, in a new tab. */
async function chatWithPendingCall(title: string): Promise<ChatPage> {
  suite.airlock.model.enqueue(runTerminal, { text: 'All done.' });
  const chat = await ChatPage.open(suite.context, suite.airlock.link);
  await chat.send(title);
  await chat.waitForStatus(chat.card(), 'Waiting for your decision');
  return chat;
}

describe('runs that outlive a tab or a socket', () => {
  it('brings the card and its controls back after a reload mid-approval', async () => {
    const chat = await chatWithPendingCall('Greet after reload');
    await chat.page.reload();
    await chat.connected();
    await chat.page.getByText('Greet after reload').first().waitFor();
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await chat.button(card, 'Allow terminal').click();
    await chat.waitForStatus(card, 'Done');
    await chat.waitForText('All done.');
    expect(await suite.airlock.runCount()).toBe(1);
  });

  it('shows a decision made in a second tab in the first at once', async () => {
    const first = await chatWithPendingCall('Greet from two tabs');
    const second = await ChatPage.open(suite.context, suite.airlock.link);
    await second.openSession('Greet from two tabs');
    await second.waitForStatus(second.card(), 'Waiting for your decision');
    await second.button(second.card(), 'Allow terminal').click();
    await first.waitForStatus(first.card(), 'Done');
    await first.waitForText('All done.');
    await second.waitForStatus(second.card(), 'Done');
    expect(await suite.airlock.runCount()).toBe(1);
  });

  it('shows a new chat and its run in a tab that follows no run, as they start in another tab', async () => {
    suite.airlock.model.enqueue({ text: 'Hello there.' });
    const first = await ChatPage.open(suite.context, suite.airlock.link);
    await first.send('Chat seen from two tabs');
    await first.waitForText('Hello there.');
    const second = await ChatPage.open(suite.context, suite.airlock.link);
    await second.openSession('Chat seen from two tabs');
    await second.waitForText('Hello there.');

    // A chat started in the first tab appears in the second tab's list.
    suite.airlock.model.enqueue({ text: 'Another answer.' });
    await first.page.getByRole('button', { name: 'New chat', exact: true }).click();
    await first.send('A chat of its own');
    await first.waitForText('Another answer.');
    await second.page.getByRole('navigation', { name: 'Chats' }).getByText('A chat of its own').waitFor();

    // A run of the first tab that ends at once, in the chat the second tab shows, appears there all the same.
    suite.airlock.model.enqueue({ text: 'Over as soon as it began.' });
    await first.openSession('Chat seen from two tabs');
    await first.waitForText('Hello there.');
    await first.send('A quick one');
    await second.waitForText('Over as soon as it began.');

    // A run started in the first tab, in the chat the second tab shows, appears there and can be decided there.
    suite.airlock.model.enqueue(runTerminal, { text: 'All done.' });
    await first.send('Now run the command');
    await second.waitForStatus(second.card(), 'Waiting for your decision');
    await second.button(second.card(), 'Allow terminal').click();
    await second.waitForText('All done.');
    await first.waitForStatus(first.card(), 'Done');
    expect(await suite.airlock.runCount()).toBe(1);
  });

  it('keeps the buttons with a retry hint when the decision cannot be sent, and the retry works', async () => {
    let dropNextDecision = true;
    const chat = await chatWithPendingCall('Greet over a flaky network');
    // The socket drops exactly as the decision leaves the page, like a network that fails mid-request.
    await chat.page.routeWebSocket(/\/trpc/, (ws: WebSocketRoute) => {
      const server = ws.connectToServer();
      ws.onMessage((message) => {
        if (dropNextDecision && String(message).includes('"chat.confirmTool"')) {
          dropNextDecision = false;
          void ws.close({ code: 4000, reason: 'test drops the connection' });
          return;
        }
        server.send(message);
      });
    });
    await chat.page.reload();
    await chat.connected();
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await chat.button(card, 'Allow terminal').click();
    await card.getByRole('alert').getByText('No answer came to your decision', { exact: false }).waitFor();
    await chat.waitForStatus(card, 'Waiting for your decision');
    expect(await suite.airlock.runCount()).toBe(0);
    await chat.connected();
    await chat.button(card, 'Allow terminal').click();
    await chat.waitForStatus(card, 'Done');
    await chat.waitForText('All done.');
    expect(await suite.airlock.runCount()).toBe(1);
  });

  it('says what was decided when another tab decided first', async () => {
    const held: (string | Buffer)[] = [];
    let holding = false;
    let page: WebSocketRoute | undefined;
    const first = await chatWithPendingCall('Greet with a slow tab');
    // From the decision on, the first tab's run events are held back, as on a slow connection.
    await first.page.routeWebSocket(/\/trpc/, (ws: WebSocketRoute) => {
      page = ws;
      const server = ws.connectToServer();
      server.onMessage((message) => {
        const runEvent = isRunEvent(message);
        holding ||= runEvent && String(message).includes('"tool-decision"');
        if (holding && runEvent) held.push(message);
        else ws.send(message);
      });
    });
    await first.page.reload();
    await first.connected();
    await first.waitForStatus(first.card(), 'Waiting for your decision');

    const second = await ChatPage.open(suite.context, suite.airlock.link);
    await second.openSession('Greet with a slow tab');
    await second.button(second.card(), 'Deny terminal').click();
    await second.waitForStatus(second.card(), 'Denied');

    await first.button(first.card(), 'Allow terminal').click();
    await first.card().getByRole('alert').getByText('This call was already decided: denied in another tab. This card updates as the run goes on.', { exact: true }).waitFor();
    expect(await first.card().getByTestId('tool-status').textContent()).toBe('Waiting for your decision');

    holding = false;
    for (const message of held.splice(0)) page?.send(message);
    await first.waitForStatus(first.card(), 'Denied');
    expect(await suite.airlock.runCount()).toBe(0);
  });

  it('stops a run with Stop', async () => {
    const chat = await chatWithPendingCall('Greet, then stop');
    await chat.page.getByRole('button', { name: 'Stop', exact: true }).click();
    await chat.waitForStatus(chat.card(), 'Cancelled');
    await chat.page.getByRole('note').getByText('Stopped.').waitFor();
    await chat.page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    expect(suite.airlock.model.requests).toHaveLength(1);
    expect(await suite.airlock.runCount()).toBe(0);
  });
});
