import { createAirlockClient, parseStartupLink } from '@airlock/client';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage, PAGE_TIMEOUT_MS } from './support/chat-page';
import { stopTime } from './support/tab-clock';

const suite = useBrowserSuite();

const terminal = (command: string) => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] });
const ECHO_RULE = 'Allow commands starting with echo in this workspace';

async function openRules(chat: ChatPage) {
  await chat.page.getByRole('button', { name: 'Rules', exact: true }).click();
  await chat.page.getByRole('heading', { name: 'Rules', exact: true }).waitFor();
}

function rule(chat: ChatPage, description: string) {
  return chat.page.getByRole('listitem', { name: `Rule: ${description}`, exact: true });
}

describe('lasting rules in the browser', () => {
  it('shows the rule Always allow would save for this workspace, then lets the same kind of call run unasked in another chat', async () => {
    suite.airlock.model.enqueue(terminal('echo first'), { text: 'First done.' }, terminal('echo second'), { text: 'Second done.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Say first');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await card.getByRole('radio', { name: 'this workspace' }).check();
    const proposed = card.getByTestId('proposed-rule');
    await proposed.waitFor();
    expect(await proposed.textContent()).toBe(`Always allow saves this rule: ${ECHO_RULE}. Such calls then run without asking; see or remove it under Rules.`);
    expect(await proposed.locator('code').allTextContents()).toStrictEqual(['echo']);
    await chat.button(card, 'Always allow terminal').click();
    await chat.waitForStatus(card, 'Done');
    await chat.waitForText('First done.');
    expect(await card.getByTestId('rule-provenance').count()).toBe(0);

    await chat.page.getByRole('button', { name: 'New chat', exact: true }).click();
    await chat.send('Say second');
    const other = chat.card();
    await chat.waitForStatus(other, 'Done');
    await chat.waitForText('Second done.');
    expect(await other.getByTestId('rule-provenance').textContent()).toBe(`Allowed by rule: ${ECHO_RULE}.`);
    expect(await other.locator('.result-text').textContent()).toContain('second');

    await openRules(chat);
    const saved = rule(chat, ECHO_RULE);
    await saved.getByTestId('rule-hits').getByText('1 hit', { exact: true }).waitFor();
    expect(await saved.textContent()).toContain('this workspace · yours · 1 hit · last used just now');

    // After a reload the card shows the rule as the ledger recorded it.
    await chat.page.getByRole('button', { name: 'Back to the chat', exact: true }).click();
    await chat.page.reload();
    await chat.connected();
    const reloaded = chat.card();
    await chat.waitForStatus(reloaded, 'Done');
    await reloaded.getByTestId('rule-provenance').getByText(ECHO_RULE.split('echo')[0]!, { exact: false }).waitFor();
    expect(await reloaded.getByTestId('rule-provenance').textContent()).toBe(`Allowed by rule: ${ECHO_RULE}.`);

    // A rule removed since still reads as it did when it decided: the ledger keeps its words.
    chat.page.on('dialog', (dialog) => void dialog.accept());
    await openRules(chat);
    await rule(chat, ECHO_RULE).getByRole('button', { name: 'Remove', exact: true }).click();
    await rule(chat, ECHO_RULE).waitFor({ state: 'detached' });
    await chat.page.reload();
    await chat.connected();
    await chat.waitForStatus(chat.card(), 'Done');
    await chat.card().getByTestId('rule-provenance').getByText(ECHO_RULE.split('echo')[0]!, { exact: false }).waitFor();
    expect(await chat.card().getByTestId('rule-provenance').textContent()).toBe(`Allowed by rule: ${ECHO_RULE}.`);
  });

  it('adds a deny rule by hand with a preview of past calls, shows the server’s field errors, edits it and removes it', async () => {
    suite.airlock.model.enqueue(terminal('echo hello'), { text: 'Hello done.' }, terminal('echo again'), { text: 'Told no.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    page.on('dialog', (dialog) => void dialog.accept());
    await chat.send('Say hello');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    await chat.button(chat.card(), 'Allow terminal').click();
    await chat.waitForText('Hello done.');

    await openRules(chat);
    await page.getByText('No rules yet.', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Add a rule', exact: true }).click();
    const editor = page.getByRole('form', { name: 'New rule' });
    await editor.getByRole('radio', { name: 'Deny' }).check();
    await editor.getByRole('combobox', { name: 'Applies to' }).selectOption({ label: 'File paths' });
    await editor.getByRole('textbox', { name: 'Path glob, relative to the workspace' }).fill('../secrets/**');
    await editor.getByRole('list', { name: 'Problems with match' }).getByText('the glob leads out of the workspace ("..")', { exact: true }).waitFor();

    await editor.getByRole('combobox', { name: 'Applies to' }).selectOption({ label: 'Commands (terminal)' });
    await editor.getByRole('textbox', { name: 'Command' }).fill('echo');
    await editor.getByRole('textbox', { name: 'Reason (told to the model when it denies)' }).fill('no echo today');
    const preview = editor.getByTestId('rule-preview');
    await preview.getByText('It would have denied 1 recent call:', { exact: true }).waitFor();
    expect(await preview.locator('li').allTextContents()).toStrictEqual(['terminal echo hello']);
    expect(await editor.getByRole('list', { name: 'Problems with match' }).count()).toBe(0);
    await editor.getByRole('button', { name: 'Add rule', exact: true }).click();

    // The rule's own reason is quoted text of its own: marked as a quote in the rule's label, a <q> on the card.
    const denyText = 'Deny commands starting with echo in this workspace: no echo today';
    const saved = rule(chat, 'Deny commands starting with echo in this workspace: “no echo today”');
    await saved.waitFor();
    expect(await saved.getByTestId('rule-hits').textContent()).toBe('0 hits');
    await page.getByRole('combobox', { name: 'Show' }).selectOption({ label: 'Everywhere' });
    await page.getByText('No rules with this scope.', { exact: true }).waitFor();
    await page.getByRole('combobox', { name: 'Show' }).selectOption({ label: 'This workspace' });
    await saved.waitFor();

    await page.getByRole('button', { name: 'Back to the chat', exact: true }).click();
    await chat.send('Say again');
    const denied = chat.card(1);
    await chat.waitForStatus(denied, 'Denied');
    expect(await denied.getByTestId('rule-provenance').textContent()).toBe(`Denied by rule: ${denyText}.`);
    await chat.waitForText('Told no.');

    await openRules(chat);
    await saved.getByTestId('rule-hits').getByText('1 hit', { exact: true }).waitFor();
    await saved.getByRole('button', { name: 'Edit', exact: true }).click();
    const edit = page.getByRole('form', { name: 'Edit rule' });
    expect(await edit.getByRole('textbox', { name: 'Command' }).inputValue()).toBe('echo');
    await edit.getByRole('textbox', { name: 'Reason (told to the model when it denies)' }).fill('not on Mondays');
    await edit.getByTestId('rule-preview').getByText('It would have denied 2 recent calls:', { exact: true }).waitFor();
    await edit.getByRole('button', { name: 'Save rule', exact: true }).click();
    const edited = rule(chat, 'Deny commands starting with echo in this workspace: “not on Mondays”');
    await edited.getByTestId('rule-hits').getByText('1 hit', { exact: true }).waitFor();
    await edited.getByRole('button', { name: 'Remove', exact: true }).click();
    await edited.waitFor({ state: 'detached' });
    await page.getByText('No rules yet.', { exact: false }).waitFor();
  });

  it('counts a rule’s hits on the open Rules page as the rule decides calls, in this tab’s run and in another tab’s', async () => {
    suite.airlock.model.enqueue(
      terminal('echo first'),
      { text: 'First done.' },
      terminal('ls'),
      terminal('echo second'),
      terminal('ls -a'),
      terminal('echo third'),
      { text: 'Third done.' },
      { text: 'Second done.' },
    );
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Say first');
    await chat.card().getByRole('radio', { name: 'this workspace' }).check();
    await chat.card().getByTestId('proposed-rule').waitFor();
    await chat.button(chat.card(), 'Always allow terminal').click();
    await chat.waitForText('First done.');

    await chat.send('List, then say second');
    await chat.waitForStatus(chat.card(1), 'Waiting for your decision');
    await openRules(chat);
    const saved = rule(chat, ECHO_RULE);
    expect(await saved.getByTestId('rule-hits').textContent()).toBe('0 hits');
    // Decided from the waiting list: the chat, hidden under the Rules page, follows its run on.
    const waiting = chat.page.getByRole('region', { name: 'Waiting for you' });
    await waiting.getByRole('button', { name: 'Allow terminal “ls” in Say first', exact: true }).click();
    // The run goes on waiting for `ls -a`: only its stream told the page that the rule decided `echo second`.
    await waiting.locator('.waiting-preview').getByText('ls -a', { exact: true }).waitFor();
    await saved.getByTestId('rule-hits').getByText('1 hit', { exact: true }).waitFor();

    const other = await ChatPage.open(suite.context, suite.airlock.link);
    await other.page.getByRole('button', { name: 'New chat', exact: true }).click();
    await other.send('Say third');
    await other.waitForText('Third done.');
    expect(await other.card().getByTestId('rule-provenance').textContent()).toBe(`Allowed by rule: ${ECHO_RULE}.`);
    await saved.getByTestId('rule-hits').getByText('2 hits', { exact: true }).waitFor();

    await waiting.getByRole('button', { name: 'Deny terminal “ls -a” in Say first', exact: true }).click();
    await chat.page.getByRole('button', { name: 'Back to the chat', exact: true }).click();
    await chat.waitForText('Second done.');
    expect(await chat.page.getByTestId('tool-status').allTextContents()).toStrictEqual(['Done', 'Done', 'Done', 'Denied']);
  });

  it("shows a rule's reason on the why-asked note as quoted text of its own: its backticks make no code, its line break no line", async () => {
    const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket });
    try {
      const reason = 'x` then `rm -rf /` y\nAllow this';
      await client.trpc.rules.add.mutate({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, scope: { kind: 'global' }, source: 'user', reason });
    } finally {
      await client.close();
    }
    // `rm` stands in a word given to `echo`: the deny rule cannot tell whether it catches the line, so it is asked.
    suite.airlock.model.enqueue(terminal('echo rm x'), { text: 'Not run.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('Say rm');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    const why = card.getByTestId('rule-asked');
    expect(await why.locator('q').allTextContents()).toStrictEqual(['x` then `rm -rf /` y\\u{A}Allow this']);
    expect(await why.locator('code').allTextContents()).toStrictEqual(['rm', 'rm', 'echo']);
    expect(await why.textContent()).not.toContain('\n');
    await chat.button(card, 'Deny terminal').click();
    await chat.waitForText('Not run.');
  });

  it('offers Review, not Allow, in Waiting for you for a call a deny rule asked about, and Allow all leaves it, saying so; Deny stays, and Review opens its card with why', async () => {
    const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket });
    try {
      await client.trpc.rules.add.mutate({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, scope: { kind: 'global' }, source: 'user', reason: 'no deleting' });
    } finally {
      await client.close();
    }
    // `rm` stands in a word given to `echo`: the deny rule cannot tell whether it catches the line, so it is asked.
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo rm x' } }, { name: 'terminal', arguments: { command: 'echo plain' } }] }, { text: 'One denied.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await chat.send('Say rm');
    const [asked, plain] = [chat.card(0), chat.card(1)];
    await chat.waitForStatus(asked, 'Waiting for your decision');
    await chat.waitForStatus(plain, 'Waiting for your decision');
    await asked.getByTestId('rule-asked').waitFor();

    const waiting = page.getByRole('region', { name: 'Waiting for you' });
    const inList = (verb: string, command: string) => waiting.getByRole('button', { name: `${verb} terminal “${command}” in Say rm`, exact: true });
    await inList('Allow', 'echo plain').waitFor();
    await inList('Review', 'echo rm x').waitFor();
    expect(await inList('Allow', 'echo rm x').count()).toBe(0);
    expect(await inList('Deny', 'echo rm x').count()).toBe(1);
    // The list says why, as the card does: the deny rule and its own reason.
    const why = waiting.getByRole('listitem').filter({ has: page.getByRole('button', { name: 'Review terminal “echo rm x” in Say rm', exact: true }) }).getByTestId('rule-asked');
    expect(await why.textContent()).toBe(await asked.getByTestId('rule-asked').textContent());
    expect(await why.locator('q').allTextContents()).toStrictEqual(['no deleting']);
    const bar = page.getByRole('region', { name: 'Waiting tool calls' });
    expect(await bar.getByRole('note').filter({ hasText: 'Allow all leaves out the one a deny rule asked about (its card says why)' }).count()).toBe(1);
    await chat.button(bar, 'Allow all').click();
    // The calls run in the model's order: the one allowed waits for the one left.
    await chat.waitForStatus(plain, 'Allowed, waiting its turn');
    await page.getByRole('status', { name: 'Left by Allow all' }).getByText('Allow all left one call waiting: a deny rule asked about it.', { exact: false }).waitFor();
    await chat.waitForStatus(asked, 'Waiting for your decision');

    await inList('Review', 'echo rm x').click();
    await vi.waitFor(async () => expect(await asked.evaluate((card) => card.contains(document.activeElement))).toBe(true), { timeout: 10_000 });
    await chat.button(asked, 'Deny terminal').click();
    await chat.waitForStatus(plain, 'Done');
    await chat.waitForText('One denied.');
  });

  it('marks on its card a call a deny rule added after it was put up asked about: why, and Allow all leaves it, as for one put up under the rule', async () => {
    // Put up before the rule exists: its tool-start says nothing of it.
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo rm y' } }, { name: 'terminal', arguments: { command: 'echo fine' } }] }, { text: 'Later one denied.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await chat.send('Say rm later');
    const [asked, plain] = [chat.card(0), chat.card(1)];
    await chat.waitForStatus(asked, 'Waiting for your decision');
    await chat.waitForStatus(plain, 'Waiting for your decision');
    expect(await asked.getByTestId('rule-asked').count()).toBe(0);

    const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket });
    try {
      await client.trpc.rules.add.mutate({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, scope: { kind: 'global' }, source: 'user', reason: 'no deleting later' });
    } finally {
      await client.close();
    }
    // The card learns it from the chat's waiting list, which the rule's judgement of the waiting calls changed.
    await asked.getByTestId('rule-asked').waitFor();
    expect(await asked.getByTestId('rule-asked').locator('q').allTextContents()).toStrictEqual(['no deleting later']);
    expect(await plain.getByTestId('rule-asked').count()).toBe(0);
    const bar = page.getByRole('region', { name: 'Waiting tool calls' });
    await bar.getByRole('note').filter({ hasText: 'Allow all leaves out the one a deny rule asked about (its card says why)' }).waitFor();
    await chat.button(bar, 'Allow all').click();
    await chat.waitForStatus(plain, 'Allowed, waiting its turn');
    await chat.waitForStatus(asked, 'Waiting for your decision');
    await chat.button(asked, 'Deny terminal').click();
    await chat.waitForStatus(plain, 'Done');
    await chat.waitForText('Later one denied.');
  });

  it("trusts the workspace file's content as shown, asks again once the file changes until the new content is trusted, and shows an invalid file's problems", async () => {
    const rulesFile = join(suite.airlock.workspace, '.airlock', 'rules.json');
    const writeRules = (rules: unknown[]) => writeFile(rulesFile, JSON.stringify({ version: 1, rules }));
    const allow = (command: string) => ({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: [command], exact: false } });
    const noCurl = { effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['curl'], exact: false }, reason: 'no network' };
    await mkdir(join(suite.airlock.workspace, '.airlock'));
    await writeRules([allow('pwd'), noCurl]);
    suite.airlock.model.enqueue(terminal('date'), { text: 'Asked.' }, terminal('date'), { text: 'Ran.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await openRules(chat);
    const panel = page.getByRole('region', { name: 'Workspace rules file' });
    const trustLine = panel.getByTestId('workspace-trust');
    await trustLine.getByText('Its allow rules do not apply until you trust them.', { exact: true }).waitFor();
    expect(await panel.getByRole('list', { name: 'Rules in the file' }).getByRole('listitem').count()).toBe(2);
    // The trust button, like every decision button, ignores a click in its first moments on screen or after it moved
    // (the panel still filling in under a loaded machine): clicked again until the trust shows.
    const trusted = trustLine.getByText('You trust this content of the file: its allow rules apply.', { exact: true });
    await vi.waitFor(
      async () => {
        if (!(await trusted.isVisible())) await panel.getByRole('button', { name: 'Trust these rules', exact: true }).click({ timeout: 2_000 }).catch(() => undefined);
        expect(await trusted.isVisible()).toBe(true);
      },
      { timeout: 15_000, interval: 250 },
    );
    await page.reload();
    await chat.connected();
    await openRules(chat);
    await trustLine.getByText('You trust this content of the file: its allow rules apply.', { exact: true }).waitFor();

    // The file rewritten (as an allowed call in the workspace could) with an allow of its own: that call is asked.
    await writeRules([allow('pwd'), allow('date'), noCurl]);
    await page.getByRole('button', { name: 'Back to the chat', exact: true }).click();
    await chat.send('What day is it?');
    const asked = chat.card();
    await chat.waitForStatus(asked, 'Waiting for your decision');
    expect(await asked.getByTestId('rule-provenance').count()).toBe(0);
    await chat.button(asked, 'Deny terminal').click();
    await chat.waitForText('Asked.');

    await openRules(chat);
    await trustLine.getByText('The file changed since you trusted it: its allow rules do not apply until you trust the new content.', { exact: true }).waitFor();
    expect(await panel.getByRole('list', { name: 'Rules in the file' }).textContent()).toContain('Allow commands starting with date in this workspace');
    await panel.getByRole('button', { name: 'Trust the new content', exact: true }).click();
    await trustLine.getByText('You trust this content of the file: its allow rules apply.', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Back to the chat', exact: true }).click();
    await chat.send('And now?');
    const ran = chat.card(1);
    await chat.waitForStatus(ran, 'Done');
    expect(await ran.getByTestId('rule-provenance').textContent()).toContain('Allowed by rule: Allow commands starting with date in this workspace');

    await writeFile(rulesFile, JSON.stringify({ version: 1, rules: [{ effect: 'allow', tool: 'read_file', match: { kind: 'path-glob', glob: '../x' } }] }));
    await openRules(chat);
    await panel.getByText("This workspace's rules file is invalid: none of its allow rules apply; the deny rules of its last valid version still do.", { exact: false }).waitFor();
    expect(await panel.getByRole('alert').textContent()).toContain('rules[0].match.glob');
    expect(await panel.getByRole('list', { name: 'Deny rules kept from its last valid version' }).textContent()).toContain('curl');
    expect(await panel.getByRole('button').allTextContents()).toStrictEqual(['Stop trusting']);
  });
  // Found in review: the server refuses a click whose rule is no longer the one it would save, and the card reads the
  // rule again and shows it, but Always allow stayed armed beside it: the second click of a double-click saved the
  // wider rule read again, which the person had not seen.
  it('re-arms Always allow when the rule it shows is read again, changed, after a refused click: the second click of a double-click saves nothing', async () => {
    const exact = 'Allow the command yarn why lodash exactly in this workspace';
    const wider = 'Allow commands starting with yarn why in this workspace';
    // With yarnPath set, yarn runs a file of the workspace: the rule proposed is for the exact command only.
    await writeFile(join(suite.airlock.workspace, '.yarnrc.yml'), 'yarnPath: ./yarn.cjs\n');
    suite.airlock.model.enqueue(terminal('yarn why lodash'), { text: 'Why done.' });
    // This tab's clock is the test's: the second click comes at once after the rule read again, however loaded the machine.
    const page = await suite.context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await page.clock.install();
    await page.goto(suite.airlock.link);
    const chat = new ChatPage(page);
    await chat.connected();
    await chat.send('why lodash');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await card.getByRole('radio', { name: 'this workspace' }).check();
    const proposed = card.getByTestId('proposed-rule');
    await proposed.getByText(exact, { exact: false }).waitFor();
    const always = chat.button(card, 'Always allow terminal');
    const box = await always.boundingBox();
    if (box === null) throw new Error('Always allow has no box');
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    await page.mouse.move(x - 3, y);
    await page.mouse.move(x, y);
    await stopTime(page);

    // The file goes before the click: the server refuses the exact rule, as it would now save the wider one.
    await rm(join(suite.airlock.workspace, '.yarnrc.yml'));
    await page.mouse.down();
    await page.mouse.up();
    await card.getByText('The server refused your decision', { exact: false }).waitFor();
    // The page's own deferred work (its reads' notifications) runs, and its clock stays where it stood.
    await vi.waitFor(
      async () => {
        await page.clock.runFor(0);
        expect(await proposed.textContent()).toContain(wider);
      },
      { timeout: PAGE_TIMEOUT_MS },
    );
    await page.mouse.down({ clickCount: 2 });
    await page.mouse.up({ clickCount: 2 });
    await card.getByText('Nothing was decided: what the button decides had just changed as you clicked.', { exact: false }).waitFor();
    await chat.waitForStatus(card, 'Waiting for your decision');

    // Seen, the wider rule is saved by a click once the button has stood beside it for a moment.
    await page.clock.resume();
    await always.click();
    await chat.waitForText('Why done.');
    await openRules(chat);
    await rule(chat, wider).waitFor();
    expect(await rule(chat, exact).count()).toBe(0);
  });
});
