import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WebSocketRoute } from 'playwright-core';
import { createAirlockClient, parseStartupLink } from '@airlock/client';
import { writeDatabase } from '@airlock/server/testing';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { RECORDING_COMMAND, startAirlockUnderTest } from './support/airlock-under-test';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

const GRANT_DETAIL = 'Allowed by an “Always allow” in this chat.';
const RAN_UNASKED = 'Ran without asking: confirmation is off for this chat.';
const BANNER = 'Confirmation is off for this chat: tool calls run without asking.';

function parseFrame(text: string): { id?: unknown; result?: { id?: unknown } } {
  try {
    return JSON.parse(text) as { id?: unknown; result?: { id?: unknown } };
  } catch {
    return {};
  }
}

function parseRequests(text: string): { id?: unknown; params?: { path?: unknown } } | { id?: unknown; params?: { path?: unknown } }[] {
  try {
    return JSON.parse(text) as { id?: unknown; params?: { path?: unknown } } | { id?: unknown; params?: { path?: unknown } }[];
  } catch {
    return {};
  }
}

async function reload(chat: ChatPage): Promise<void> {
  await chat.page.reload();
  await chat.connected();
}

describe('a chat read back after a reload', () => {
  it('shows a denied call as denied with its reason and a call released by a grant as allowed by it', async () => {
    await writeFile(join(suite.airlock.workspace, 'a.txt'), 'alpha\n');
    await writeFile(join(suite.airlock.workspace, 'b.txt'), 'beta\n');
    suite.airlock.model.enqueue(
      {
        toolCalls: [
          { name: 'terminal', arguments: { command: RECORDING_COMMAND } },
          { name: 'read_file', arguments: { path: 'a.txt' } },
          { name: 'read_file', arguments: { path: 'b.txt' } },
        ],
      },
      { text: 'Turn over.' },
    );
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Three calls to reload');
    const [terminal, first, second] = [chat.card(0), chat.card(1), chat.card(2)];
    await chat.waitForStatus(second, 'Waiting for your decision');
    await chat.button(terminal, 'Deny with reason…').click();
    await terminal.getByRole('textbox', { name: 'Reason, passed to the model' }).fill('not on this machine');
    await chat.button(terminal, 'Deny with this reason').click();
    // The denied card loses its buttons and the cards below move up: a decision button that moved ignores a click
    // for a moment, so the next click waits for the page to settle, as a person's eye would.
    await chat.waitForStatus(terminal, 'Denied');
    await chat.button(first, 'Always allow read_file').click();
    await chat.waitForText('Turn over.');

    await reload(chat);
    await chat.waitForText('Turn over.');
    await chat.waitForStatus(terminal, 'Denied');
    await terminal.getByText('Your reason: not on this machine').waitFor();
    await chat.waitForStatus(first, 'Done');
    await chat.waitForStatus(second, 'Done');
    await second.getByText(GRANT_DETAIL).waitFor();
    expect(await first.getByText(GRANT_DETAIL).count()).toBe(0);
    expect(await chat.page.getByTestId('tool-status').allTextContents()).toStrictEqual(['Denied', 'Done', 'Done']);
    expect(await suite.airlock.runCount()).toBe(0);
  });

  it('keeps a waiting call decidable after a reload, and shows the decision after the next one', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] }, { text: 'Understood.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Wait through a reload');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');

    await reload(chat);
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await card.getByRole('timer').waitFor();
    expect(await chat.page.getByRole('article').count()).toBe(1);
    await chat.button(card, 'Deny with reason…').click();
    await card.getByRole('textbox', { name: 'Reason, passed to the model' }).fill('ask me tomorrow');
    await chat.button(card, 'Deny with this reason').click();
    await chat.waitForText('Understood.');

    await reload(chat);
    await chat.waitForText('Understood.');
    await chat.waitForStatus(chat.card(), 'Denied');
    await chat.card().getByText('Your reason: ask me tomorrow').waitFor();
    expect(await chat.card().getByRole('group', { name: 'Decision for terminal' }).count()).toBe(0);
    expect(await suite.airlock.runCount()).toBe(0);
  });
});

describe('who decided a call, as this browser knows it', () => {
  it('says a deny was yours after a reload, yours in another tab in a new tab, and another client’s in another browser', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] }, { text: 'Understood.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Decide in one tab');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    await chat.button(chat.card(), 'Deny with reason…').click();
    await chat.card().getByRole('textbox', { name: 'Reason, passed to the model' }).fill('not today');
    await chat.button(chat.card(), 'Deny with this reason').click();
    await chat.waitForText('Understood.');

    // A tab opened since: the decision was this browser's, made in another tab.
    const newTab = await ChatPage.open(suite.context, suite.airlock.link);
    await newTab.openSession('Decide in one tab');
    await newTab.waitForStatus(newTab.card(), 'Denied');
    await newTab.card().getByText('Your reason, given in another tab: not today', { exact: true }).waitFor();

    await reload(chat);
    await chat.waitForStatus(chat.card(), 'Denied');
    await chat.card().getByText('Your reason: not today', { exact: true }).waitFor();

    // Another browser profile shares nothing with this one.
    const otherContext = await suite.browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const otherBrowser = await ChatPage.open(otherContext, suite.airlock.link);
      await otherBrowser.openSession('Decide in one tab');
      await otherBrowser.waitForStatus(otherBrowser.card(), 'Denied');
      await otherBrowser.card().getByText('Reason given in another browser or client, or before the server restarted: not today', { exact: true }).waitFor();
    } finally {
      await otherContext.close();
    }
  });
});

describe('a chat after a server restart', () => {
  it('keeps a waiting call waiting and decidable, runs it once when allowed, and shows it done after a reload', async () => {
    await using airlock = await startAirlockUnderTest({ keepData: true });
    airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] }, { text: 'Ran after the restart.' });
    const before = await ChatPage.open(suite.context, airlock.link);
    await before.send('Wait through a restart');
    await before.waitForStatus(before.card(), 'Waiting for your decision');

    await airlock.restart();
    // The restarted server is a new run on a new origin: the old tab says so, and the person opens the new link.
    await before.page.getByRole('heading', { name: 'Airlock was restarted on a new address' }).waitFor();
    await before.page.getByText(/^The Airlock server was restarted and is now at a new address/).waitFor();
    await before.page.close();
    const chat = await ChatPage.open(suite.context, airlock.link);
    await chat.openSession('Wait through a restart');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await card.getByRole('timer').waitFor();
    await chat.button(card, 'Allow terminal').click();
    await chat.waitForStatus(card, 'Done');
    await chat.waitForText('Ran after the restart.');
    expect(await airlock.runCount()).toBe(1);

    await reload(chat);
    await chat.waitForText('Ran after the restart.');
    await chat.waitForStatus(chat.card(), 'Done');
    expect(await chat.page.getByRole('article').count()).toBe(1);
    expect(await airlock.runCount()).toBe(1);
  });
});

describe('a chat one of whose ledger rows is damaged', () => {
  // Found in review: with run 1's row left out of the page, run 1's card showed run 2's row (the model reused the call
  // id), and nothing said a record was left out.
  it('shows each call by its own row, marks the one whose row is damaged, and says what was left out', async () => {
    await using airlock = await startAirlockUnderTest({ keepData: true });
    const call = (command: string) => ({ toolCalls: [{ id: 'call_0', name: 'terminal', arguments: { command } }] });
    airlock.model.enqueue(call('ls'), { text: 'Not listed.' }, call(RECORDING_COMMAND), { text: 'Said hello.' });
    const chat = await ChatPage.open(suite.context, airlock.link);
    await chat.send('List the files');
    await chat.waitForStatus(chat.card(0), 'Waiting for your decision');
    await chat.button(chat.card(0), 'Deny terminal').click();
    await chat.waitForText('Not listed.');
    await chat.send('Say hello');
    await chat.waitForStatus(chat.card(1), 'Waiting for your decision');
    await chat.button(chat.card(1), 'Allow terminal').click();
    await chat.waitForText('Said hello.');
    let damaged = 0;
    await airlock.restart(() => (damaged = writeDatabase(airlock.dataDir!, "UPDATE tool_calls SET decision = 'allox' WHERE decision = 'deny'")));
    expect(damaged).toBe(1);

    await chat.page.close();
    const reopened = await ChatPage.open(suite.context, airlock.link);
    await reopened.openSession('List the files');
    await reopened.waitForStatus(reopened.card(1), 'Done');
    await reopened.waitForStatus(reopened.card(0), 'Record damaged');
    await reopened.card(0).getByText('ls', { exact: true }).waitFor();
    const notice = reopened.page.locator('.left-out');
    await notice.getByText(/^A stored record of this chat is damaged and left out when the chat is read \(the decision of call call_0 of run /).waitFor();
    expect(await notice.textContent()).toContain("the model was told the call has no recorded result and may have done part or all of its work");
    expect(await airlock.runCount()).toBe(1);
  });
});

describe('a run whose stream fails', () => {
  it('reads the chat again instead of leaving the card decidable on stale buttons', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] }, { text: 'Fine, not then.' });
    const first = await ChatPage.open(suite.context, suite.airlock.link);
    await first.send('Lose the stream');
    await first.waitForStatus(first.card(), 'Waiting for your decision');
    // From the decision on, the server's answer to this tab's run subscription is an error in place of its events.
    let failing = false;
    await first.page.routeWebSocket(/\/trpc/, (ws: WebSocketRoute) => {
      const server = ws.connectToServer();
      server.onMessage((message) => {
        const text = String(message);
        const parsed = parseFrame(text);
        const runEvent = typeof parsed.result?.id === 'string';
        if (runEvent && !failing && text.includes('"tool-decision"')) {
          failing = true;
          ws.send(JSON.stringify({ id: parsed.id, error: { message: 'test breaks the stream', code: -32603, data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500 } } }));
          return;
        }
        if (!(failing && runEvent)) ws.send(message);
      });
    });
    await first.page.reload();
    await first.connected();
    await first.waitForStatus(first.card(), 'Waiting for your decision');

    const second = await ChatPage.open(suite.context, suite.airlock.link);
    await second.openSession('Lose the stream');
    await second.button(second.card(), 'Deny terminal').click();
    await second.waitForText('Fine, not then.');

    await first.page.getByRole('alert').getByText('test breaks the stream').waitFor();
    await first.waitForStatus(first.card(), 'Denied');
    expect(await first.card().getByRole('group', { name: 'Decision for terminal' }).count()).toBe(0);
    expect(await suite.airlock.runCount()).toBe(0);
  });
});

describe('confirmation per chat', () => {
  it('says so on the chat while it is off, in every tab and after a reload, and asks again once turned back on', async () => {
    suite.airlock.model.enqueue({ text: 'Hello.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('A chat that stops asking');
    await chat.waitForText('Hello.');
    expect(await chat.page.getByText(BANNER).count()).toBe(0);

    await chat.page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = chat.page.getByRole('dialog', { name: 'Settings' });
    await dialog.getByRole('checkbox', { name: 'Confirm tool calls' }).uncheck();
    await dialog.getByRole('checkbox', { name: 'Confirm tool calls', checked: false }).waitFor();
    await dialog.getByRole('button', { name: 'Close settings', exact: true }).click();
    await chat.page.getByText(BANNER).waitFor();

    const other = await ChatPage.open(suite.context, suite.airlock.link);
    await other.openSession('A chat that stops asking');
    await other.page.getByText(BANNER).waitFor();

    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] }, { text: 'Ran it.' });
    await chat.send('Run it unasked');
    await chat.waitForText('Ran it.');
    await chat.waitForStatus(chat.card(), 'Done');
    await chat.card().getByText(RAN_UNASKED).waitFor();
    expect(await suite.airlock.runCount()).toBe(1);

    await reload(chat);
    await chat.page.getByText(BANNER).waitFor();
    await chat.waitForStatus(chat.card(), 'Done');
    await chat.card().getByText(RAN_UNASKED).waitFor();

    await chat.page.getByRole('button', { name: 'Ask again', exact: true }).click();
    await chat.page.getByText(BANNER).waitFor({ state: 'detached' });
    await other.page.getByText(BANNER).waitFor({ state: 'detached' });
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] }, { text: 'Asked.' });
    await chat.send('Ask this time');
    await chat.waitForStatus(chat.card(1), 'Waiting for your decision');
  });
});

describe('a chat opened again before the server has told of it', () => {
  it('says it is loading, not "New chat", and shows no setting for it until the server answers', async () => {
    const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket });
    try {
      suite.airlock.model.enqueue({ text: 'Hello.' });
      for await (const event of client.startRun({ sessionId: 'quiet-chat', message: 'A chat that stops asking', options: { confirmToolCalls: false } })) if (event.type === 'run-end') break;
    } finally {
      await client.close();
    }
    // The tab returns to that chat, as after a reload; the server's answers about chats are held until released.
    const page = await suite.context.newPage();
    page.setDefaultTimeout(25_000);
    await page.addInitScript(() => {
      if (window.sessionStorage.getItem('airlock.session') === null) window.sessionStorage.setItem('airlock.session', 'quiet-chat');
    });
    const asked = new Set<unknown>();
    const held: { ws: WebSocketRoute; message: string | Buffer }[] = [];
    let holding = true;
    await page.routeWebSocket(/\/trpc/, (ws: WebSocketRoute) => {
      const server = ws.connectToServer();
      ws.onMessage((message) => {
        // A frame of the client is one request or a batch of them.
        for (const request of [parseRequests(String(message))].flat()) {
          if (request.params?.path === 'sessions.get' || request.params?.path === 'sessions.list') asked.add(request.id);
        }
        server.send(message);
      });
      server.onMessage((message) => {
        if (holding && asked.has(parseFrame(String(message)).id)) held.push({ ws, message });
        else ws.send(message);
      });
    });
    await page.goto(suite.airlock.link);
    const chat = new ChatPage(page);
    await chat.connected();
    await expect.poll(() => held.length).toBeGreaterThan(0);

    const heading = page.getByRole('heading', { level: 1 });
    await page.getByRole('heading', { name: 'Loading chat…', level: 1 }).waitFor();
    expect(await heading.allTextContents()).toStrictEqual(['Loading chat…']);
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    const setting = dialog.getByRole('checkbox', { name: 'Confirm tool calls' });
    expect([await setting.isDisabled(), await setting.isChecked()]).toStrictEqual([true, false]);
    await dialog.getByText('Reading this chat’s setting…').waitFor();
    expect(await dialog.getByRole('alert').count()).toBe(0);
    await dialog.getByRole('button', { name: 'Close settings', exact: true }).click();
    expect(await page.getByText(BANNER).count()).toBe(0);

    holding = false;
    for (const { ws, message } of held.splice(0)) ws.send(message);
    await page.getByRole('heading', { name: 'A chat that stops asking', level: 1 }).waitFor();
    await page.getByText(BANNER).waitFor();
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await dialog.getByRole('checkbox', { name: 'Confirm tool calls', checked: false }).waitFor();
    expect(await setting.isDisabled()).toBe(false);
  });

  it('claims no setting for it when the read of it failed: confirmation is not shown on, and cannot be changed as a new chat’s', async () => {
    const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket });
    try {
      suite.airlock.model.enqueue({ text: 'Hello.' });
      for await (const event of client.startRun({ sessionId: 'unread-chat', message: 'A chat that stops asking', options: { confirmToolCalls: false } })) if (event.type === 'run-end') break;
    } finally {
      await client.close();
    }
    const page = await suite.context.newPage();
    page.setDefaultTimeout(25_000);
    await page.addInitScript(() => {
      if (window.sessionStorage.getItem('airlock.session') === null) window.sessionStorage.setItem('airlock.session', 'unread-chat');
    });
    // The chat's own read fails (as when the connection goes under it); the lists, which would name it, never answer.
    const listed = new Set<unknown>();
    let failed = 0;
    await page.routeWebSocket(/\/trpc/, (ws: WebSocketRoute) => {
      const server = ws.connectToServer();
      ws.onMessage((message) => {
        const parsed = parseRequests(String(message));
        const requests = [parsed].flat();
        const reads = requests.filter((request) => request.params?.path === 'sessions.get');
        for (const request of requests) if (request.params?.path === 'sessions.list') listed.add(request.id);
        for (const request of reads) {
          failed++;
          ws.send(JSON.stringify({ id: request.id, error: { message: 'the read failed', code: -32603, data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500, path: 'sessions.get' } } }));
        }
        if (reads.length === 0) server.send(message);
        else if (Array.isArray(parsed)) {
          const rest = parsed.filter((request) => request.params?.path !== 'sessions.get');
          if (rest.length > 0) server.send(JSON.stringify(rest));
        }
      });
      server.onMessage((message) => {
        if (!listed.has(parseFrame(String(message)).id)) ws.send(message);
      });
    });
    await page.goto(suite.airlock.link);
    const chat = new ChatPage(page);
    await chat.connected();
    await expect.poll(() => failed).toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    const setting = dialog.getByRole('checkbox', { name: 'Confirm tool calls' });
    await dialog.getByText('Reading this chat’s setting…').waitFor();
    expect([await setting.isDisabled(), await setting.isChecked()]).toStrictEqual([true, false]);
    await dialog.getByRole('button', { name: 'Close settings', exact: true }).click();
    expect(await page.getByText(BANNER).count()).toBe(0);
  });

  it('says when the read of it failed, with a Retry, and reads it again when clicked and when the connection comes back', async () => {
    const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket });
    try {
      suite.airlock.model.enqueue({ text: 'Hello.' });
      for await (const event of client.startRun({ sessionId: 'failed-read-chat', message: 'A chat read again', options: {} })) if (event.type === 'run-end') break;
    } finally {
      await client.close();
    }
    const page = await suite.context.newPage();
    page.setDefaultTimeout(25_000);
    await page.addInitScript(() => {
      if (window.sessionStorage.getItem('airlock.session') === null) window.sessionStorage.setItem('airlock.session', 'failed-read-chat');
    });
    // The chat's own read fails while `failing` holds; the lists, which would name it, never answer.
    const listed = new Set<unknown>();
    const sockets: WebSocketRoute[] = [];
    let failing = true;
    let failed = 0;
    await page.routeWebSocket(/\/trpc/, (ws: WebSocketRoute) => {
      sockets.push(ws);
      const server = ws.connectToServer();
      ws.onMessage((message) => {
        const parsed = parseRequests(String(message));
        const requests = [parsed].flat();
        const reads = failing ? requests.filter((request) => request.params?.path === 'sessions.get') : [];
        for (const request of requests) if (request.params?.path === 'sessions.list') listed.add(request.id);
        for (const request of reads) {
          failed++;
          ws.send(JSON.stringify({ id: request.id, error: { message: 'the read failed', code: -32603, data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500, path: 'sessions.get' } } }));
        }
        if (reads.length === 0) server.send(message);
        else if (Array.isArray(parsed)) {
          const rest = parsed.filter((request) => request.params?.path !== 'sessions.get');
          if (rest.length > 0) server.send(JSON.stringify(rest));
        }
      });
      server.onMessage((message) => {
        if (!listed.has(parseFrame(String(message)).id)) ws.send(message);
      });
    });
    await page.goto(suite.airlock.link);
    const chat = new ChatPage(page);
    await chat.connected();
    const heading = page.getByRole('heading', { level: 1 });
    // A message typed meanwhile cannot be sent: the chat it would go to is not shown.
    const box = page.getByRole('textbox', { name: 'Message' });
    const send = page.getByRole('button', { name: 'Send', exact: true });
    const alert = page.getByRole('alert').filter({ hasText: 'Could not load this chat: the read failed' });
    const retry = alert.getByRole('button', { name: 'Retry', exact: true });

    await retry.waitFor();
    expect(await heading.allTextContents()).not.toContain('New chat');
    await box.fill('Next');
    expect(await send.isDisabled()).toBe(true);
    // Retry asks again, and says again why when it fails again.
    const before = failed;
    await retry.click();
    await expect.poll(() => failed).toBeGreaterThan(before);
    await retry.waitFor();
    expect(await send.isDisabled()).toBe(true);

    failing = false;
    await retry.click();
    await page.getByRole('heading', { name: 'A chat read again', level: 1 }).waitFor();
    await page.getByText('Hello.').waitFor();
    expect(await alert.count()).toBe(0);
    await expect.poll(() => send.isDisabled()).toBe(false);

    // Failed again after a reload, it is read again by itself once the connection comes back.
    failing = true;
    await page.reload();
    await retry.waitFor();
    await box.fill('Next');
    expect(await send.isDisabled()).toBe(true);
    failing = false;
    for (const ws of sockets.splice(0)) await ws.close({ code: 4000, reason: 'test drops the connection' });
    await page.getByRole('heading', { name: 'A chat read again', level: 1 }).waitFor();
    await page.getByText('Hello.').waitFor();
    expect(await alert.count()).toBe(0);
    await expect.poll(() => send.isDisabled()).toBe(false);
  });
});

describe('ledger export', () => {
  it('downloads every recorded call as JSON Lines', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] }, { text: 'Noted.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Something for the ledger');
    await chat.button(chat.card(), 'Deny terminal').click();
    await chat.waitForText('Noted.');

    await chat.page.getByRole('button', { name: 'Settings', exact: true }).click();
    const download = chat.page.waitForEvent('download');
    await chat.page.getByRole('button', { name: 'Export the ledger', exact: true }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^airlock-ledger-\d{4}-\d{2}-\d{2}\.jsonl$/);
    const path = await file.path();
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    const entries = lines.map((line) => JSON.parse(line) as { toolName: string; decision: string; outcome: string; clientLabel: string | null });
    expect(entries.map(({ toolName, decision, outcome, clientLabel }) => ({ toolName, decision, outcome, clientLabel }))).toStrictEqual([
      { toolName: 'terminal', decision: 'deny', outcome: 'denied', clientLabel: 'web' },
    ]);
  });

  it('shows a long chat from its newest part, and its earlier part on request, each call as it ended', async () => {
    await writeFile(join(suite.airlock.workspace, 'a.txt'), 'alpha\n');
    const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket });
    try {
      const sessionId = 'long-chat';
      const say = async (message: string) => {
        for await (const event of client.startRun({ sessionId, message, options: { confirmToolCalls: false } })) if (event.type === 'run-end') break;
      };
      // The first run reads a file; then 259 more of two messages each: 522 messages, 22 before the newest 500.
      suite.airlock.model.enqueue({ toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] }, { text: 'The very first answer.' });
      await say('the first message');
      for (let n = 1; n < 260; n++) {
        suite.airlock.model.enqueue({ text: `Answer ${n}.` });
        await say(`message ${n}`);
      }
    } finally {
      await client.close();
    }

    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.openSession('the first message');
    await chat.waitForText('Answer 259.');
    const notice = chat.page.getByRole('status').filter({ hasText: 'earlier messages of this chat are not shown' });
    await notice.getByText('22 earlier messages of this chat are not shown.').waitFor();
    expect(await chat.page.getByText('The very first answer.').count()).toBe(0);

    await notice.getByRole('button', { name: 'Show earlier' }).click();
    await chat.waitForText('The very first answer.');
    await chat.waitForStatus(chat.card(0), 'Done');
    expect(await notice.count()).toBe(0);
    expect(await chat.page.getByText('Answer 1.', { exact: true }).count()).toBe(1);
  });
});

