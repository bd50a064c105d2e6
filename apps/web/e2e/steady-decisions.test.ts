import type { BrowserContext, Locator, Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { RECORDING_COMMAND } from './support/airlock-under-test';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';
import { stopTime } from './support/tab-clock';

const runTerminal = { toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] };

const suite = useBrowserSuite();

async function twoChatsWaiting(chat: ChatPage, first: string, second: string): Promise<void> {
  await chat.send(first);
  await chat.waitForStatus(chat.card(), 'Waiting for your decision');
  await chat.page.getByRole('button', { name: 'New chat', exact: true }).click();
  await chat.send(second);
  await chat.waitForStatus(chat.card(), 'Waiting for your decision');
}

describe('decision buttons and where the pointer is', () => {
  it('a click on an Allow that just slid under the pointer decides nothing, however the pointer moved; once it stood still, one does', async () => {
    suite.airlock.model.enqueue(runTerminal, runTerminal, { text: 'First done.' }, { text: 'Second done.' });
    // This tab's clock is the test's: the second and third clicks come within the button's first moments in its new
    // place however loaded the machine is (with real time, a slow machine let the moment pass before them).
    const chat = await openWithTestClock(suite.context, suite.airlock.link);
    const { page } = chat;
    await twoChatsWaiting(chat, 'chat one', 'chat two');

    const waiting = page.getByRole('region', { name: 'Waiting for you' });
    await waiting.getByRole('heading', { name: /Waiting for you \(2\)/ }).waitFor();
    const firstAllow = waiting.getByRole('button', { name: `Allow terminal “${RECORDING_COMMAND}” in chat one`, exact: true });
    const secondAllow = waiting.getByRole('button', { name: `Allow terminal “${RECORDING_COMMAND}” in chat two`, exact: true });
    // Both are armed: a decision button ignores pointer clicks for a moment after it appears.
    for (const allow of [firstAllow, secondAllow]) await vi.waitFor(async () => expect(await allow.isEnabled()).toBe(true), { timeout: 10_000 });
    const box = await firstAllow.boundingBox();
    if (box === null) throw new Error('the first Allow has no box');
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];

    // The first click of a double-click allows the first call; its item leaves and the second slides into place.
    // Time stands still in the tab from just before it, and goes on a millisecond at a time only until the list has
    // closed up (sending the decision and showing the change wait on the tab's timers).
    await page.mouse.move(x, y);
    await stopTime(page);
    await page.mouse.click(x, y);
    const oneLeft = waiting.getByRole('heading', { name: /Waiting for you \(1\)/ });
    await vi.waitFor(
      async () => {
        await page.clock.runFor(1);
        expect(await oneLeft.isVisible()).toBe(true);
      },
      { timeout: 15_000, interval: 10 },
    );
    // The second click, the pointer where it was or jittering a pixel, lands on the second call's Allow, which has
    // just slid there: ignored, and said so.
    await page.mouse.down();
    await page.mouse.up();
    await waiting.getByText('Nothing was decided: the button had just appeared or moved', { exact: false }).waitFor();
    await page.mouse.move(x + 1, y);
    await page.mouse.down();
    await page.mouse.up();
    const moved = await secondAllow.boundingBox();
    expect(moved && Math.abs(moved.y + moved.height / 2 - y) < 1).toBe(true);

    // Once it has stood there for a moment, the second call still waits, and a click counts.
    await page.clock.resume();
    await vi.waitFor(async () => expect(await secondAllow.isEnabled()).toBe(true), { timeout: 10_000 });
    await oneLeft.waitFor();
    await vi.waitFor(async () => expect(await suite.airlock.runCount()).toBe(1), { timeout: 10_000 });
    await page.mouse.click(x, y);
    await vi.waitFor(async () => expect(await suite.airlock.runCount()).toBe(2), { timeout: 10_000 });
    await waiting.waitFor({ state: 'detached' });
  });

  it('offers Allow in the waiting list only for a call the list shows whole', async () => {
    const content = 'line of the new file\n'.repeat(40);
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content } }] }, runTerminal, { text: 'Wrote it.' }, { text: 'Ran it.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await twoChatsWaiting(chat, 'write notes', 'run it');

    const waiting = page.getByRole('region', { name: 'Waiting for you' });
    const writeItem = waiting.getByRole('listitem').filter({ hasText: 'write notes' });
    await writeItem.getByText('path: notes.txt · content: line of the new file… (41 lines, 840 characters)').waitFor();
    expect(await writeItem.getByRole('button', { name: /^Allow / }).count()).toBe(0);
    const terminalItem = waiting.getByRole('listitem').filter({ hasText: 'run it' });
    await terminalItem.getByRole('button', { name: `Allow terminal “${RECORDING_COMMAND}” in run it`, exact: true }).waitFor();

    await writeItem.getByRole('button', { name: 'Review write_file “path: notes.txt · content: line of the n…” in write notes', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'write notes' }).waitFor();
    await vi.waitFor(async () => expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Tool call write_file'), { timeout: 10_000 });
    const card = chat.card();
    // The card is tall: scrolled to its buttons (not by the person's wheel, so they re-arm), then allowed.
    const allow = card.getByRole('button', { name: 'Allow write_file', exact: true });
    await allow.scrollIntoViewIfNeeded();
    await vi.waitFor(async () => expect(await allow.isEnabled()).toBe(true), { timeout: 10_000 });
    await allow.click();
    await chat.waitForStatus(card, 'Done');
    await chat.waitForText('Wrote it.');
  });
});

describe('decision buttons and a finger', () => {
  it('a tap on an Allow the transcript just scrolled under the finger (following what came in) decides nothing; once it stood still, one does', async () => {
    await using tab = await twoCallsByTouch('rm -rf build', 'Ran the first.');
    const { chat, page, first, second, allow } = tab;
    // The transcript at its bottom, as it keeps itself while output comes in.
    await vi.waitFor(async () => expect(await toBottom(page)).toBe(true), { timeout: 10_000 });
    // The second call is to be denied with a long reason, which its card shows once denied: it grows below the
    // first, so the transcript, kept at its bottom, scrolls on by as much.
    await tapOn(page, second.getByRole('button', { name: 'Deny with reason…', exact: true }));
    await second.getByRole('textbox').fill('not this one: '.repeat(140));
    // "Deny with this reason" is a decision button too: it takes a tap once it has stood still a moment.
    const denyWithReason = second.getByRole('button', { name: 'Deny with this reason', exact: true });
    for (const button of [allow, denyWithReason]) await vi.waitFor(async () => expect(await button.isEnabled()).toBe(true), { timeout: 10_000 });

    // Time stands still in the tab from just before the denial, and goes on a millisecond at a time until the
    // transcript has followed the grown card to the bottom, sliding the first Allow up.
    const after = await slideWithTimeHeld(page, allow, 'up', () => tapOn(page, denyWithReason));
    // A finger coming down where Allow now is, within its first moments there (aimed at what was there before).
    await tapJustSlidThenStill(tab, after);
    await chat.waitForStatus(first, 'Done');
    expect(await suite.airlock.runCount()).toBe(1);
  });

  it('a tap on an Allow the transcript, at its bottom, was pulled down over as the card below it shrank decides nothing', async () => {
    await using tab = await twoCallsByTouch('echo second | tee -a ran.log', 'Ran both.');
    const { chat, page, second, allow } = tab;
    const secondAllow = second.getByRole('button', { name: 'Allow terminal', exact: true });
    for (const button of [allow, secondAllow]) await vi.waitFor(async () => expect(await button.isEnabled()).toBe(true), { timeout: 10_000 });
    await vi.waitFor(async () => expect(await toBottom(page)).toBe(true), { timeout: 10_000 });

    // Allowing the second call folds its controls away: the transcript, at its bottom, is pulled back by as much,
    // and the first Allow slides down. Time stands still in the tab meanwhile (see above).
    const after = await slideWithTimeHeld(page, allow, 'down', () => tapOn(page, secondAllow));
    await tapJustSlidThenStill(tab, after);
    await chat.waitForText('Ran both.');
    await chat.waitForStatus(second, 'Done');
    expect(await suite.airlock.runCount()).toBe(1);
  });
});

describe('decision buttons and a finger, when a card below changes by itself', () => {
  it('a tap on an Allow the transcript, at its bottom, was pulled down over as the card below closed its reason box decides nothing', async () => {
    await using tab = await twoCallsByTouch('rm -rf build', 'Ran the first.');
    const { chat, page, first, second, allow } = tab;
    const reasonToggle = second.getByRole('button', { name: 'Deny with reason…', exact: true });
    // The card below opens its reason box (its own state: the transcript does not render again), and the
    // transcript is taken to its bottom, below the box.
    await vi.waitFor(async () => expect(await toBottom(page)).toBe(true), { timeout: 10_000 });
    await tapOn(page, reasonToggle);
    await second.getByRole('textbox').waitFor();
    await vi.waitFor(async () => expect(await toBottom(page)).toBe(true), { timeout: 10_000 });
    await vi.waitFor(async () => expect(await allow.isEnabled()).toBe(true), { timeout: 10_000 });

    // The box closes: the transcript, at its bottom, is pulled back by as much, and the first Allow slides down.
    // Time stands still in the tab meanwhile (see above).
    const after = await slideWithTimeHeld(page, allow, 'down', () => tapOn(page, reasonToggle));
    expect(await second.getByRole('textbox').count()).toBe(0);
    await tapJustSlidThenStill(tab, after);
    await chat.waitForStatus(first, 'Done');
    expect(await suite.airlock.runCount()).toBe(1);
  });
});

/** A tab at `link`, connected, whose clock is the test's (installed before the page loads, running until stopped). */
async function openWithTestClock(context: BrowserContext, link: string): Promise<ChatPage> {
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.clock.install();
  await page.goto(link);
  const chat = new ChatPage(page);
  await chat.connected();
  return chat;
}

interface TwoCallsByTouch extends AsyncDisposable {
  chat: ChatPage;
  page: Page;
  /** The two calls' cards, both waiting for a decision. */
  first: Locator;
  second: Locator;
  /** The first call's Allow. */
  allow: Locator;
}

/**
 * A tab with touch (a finger has no pointer moves to aim with), whose clock is the test's (see above), on a chat
 * whose reply runs past the screen and ends in two terminal calls: the first runs the recording command, the second
 * `secondCommand`; the model then answers `finalReply`. Its browser context closes when the test ends.
 */
async function twoCallsByTouch(secondCommand: string, finalReply: string): Promise<TwoCallsByTouch> {
  const reply = Array.from({ length: 30 }, (_, line) => `Line ${line + 1} of what comes before the calls.`).join('\n\n');
  const calls = [
    { name: 'terminal', arguments: { command: RECORDING_COMMAND } },
    { name: 'terminal', arguments: { command: secondCommand } },
  ];
  suite.airlock.model.enqueue({ text: reply, toolCalls: calls }, { text: finalReply });
  const context = await suite.browser.newContext({ viewport: { width: 1280, height: 800 }, hasTouch: true });
  try {
    const chat = await openWithTestClock(context, suite.airlock.link);
    await chat.send('two calls');
    const [first, second] = [chat.card(0), chat.card(1)];
    await chat.waitForStatus(second, 'Waiting for your decision');
    const allow = first.getByRole('button', { name: 'Allow terminal', exact: true });
    return { chat, page: chat.page, first, second, allow, [Symbol.asyncDispose]: () => context.close() };
  } catch (error) {
    await context.close();
    throw error;
  }
}

type Box = NonNullable<Awaited<ReturnType<Locator['boundingBox']>>>;

/**
 * Stops the tab's time just before `move`, then lets it go on a millisecond at a time until `button` has slid `way`
 * from where it stood; answers where it stands now.
 */
async function slideWithTimeHeld(page: Page, button: Locator, way: 'up' | 'down', move: () => Promise<void>): Promise<Box> {
  const before = await button.boundingBox();
  if (before === null) throw new Error('the button has no box');
  await stopTime(page);
  await move();
  let after = before;
  await vi.waitFor(
    async () => {
      await page.clock.runFor(1);
      after = (await button.boundingBox()) ?? before;
      expect(way === 'up' ? after.y < before.y - 1 : after.y > before.y + 1).toBe(true);
    },
    { timeout: 15_000, interval: 10 },
  );
  return after;
}

/**
 * A finger tap on the first call's Allow where it now stands, `at`, within its first moments there: ignored, and said
 * so. Once it has stood there for a moment, the call still waits, and a tap counts.
 */
async function tapJustSlidThenStill({ page, first, allow }: TwoCallsByTouch, at: Box): Promise<void> {
  await page.touchscreen.tap(at.x + at.width / 2, at.y + at.height / 2);
  await first.getByText('Nothing was decided: the button had just appeared or moved', { exact: false }).waitFor();
  await page.clock.resume();
  await vi.waitFor(async () => expect(await allow.isEnabled()).toBe(true), { timeout: 10_000 });
  expect(await suite.airlock.runCount()).toBe(0);
  await tapOn(page, allow);
}

/** Scrolls the tab's transcript to its bottom (where it keeps itself while output comes in) and says whether it is there. */
function toBottom(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const transcript = document.querySelector('.transcript')!;
    transcript.scrollTop = transcript.scrollHeight;
    return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 1;
  });
}

/** A finger tap on the middle of the button, wherever it is (no wait for it to be armed). */
async function tapOn(page: Page, button: Locator): Promise<void> {
  const box = await button.boundingBox();
  if (box === null) throw new Error('the button has no box');
  await page.touchscreen.tap(box.x + box.width / 2, box.y + box.height / 2);
}
