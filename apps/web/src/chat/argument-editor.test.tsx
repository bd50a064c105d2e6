import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { useReducer } from 'react';
import { unshownDefaultsNote } from '@airlock/core';
import { deferred } from '@airlock/core/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ConfirmInput, ConfirmResult, ToolAnnotations } from '../lib/api-types';
import { PendingBar } from './pending-bar';
import type { WaitingApproval, WaitingApprovals } from '../waiting/use-waiting-approvals';
import { WaitingList } from '../waiting/waiting-list';
import { HeldEdits, HeldEditsContext } from './held-edits';
import type { JsonSchema } from './argument-form';
import { chatReducer, type ChatState } from './chat-reducer';
import { sendDecision, type SendConfirm } from './send-decision';
import { KEYED_DECISION_DELAY_MS, ToolCallCard } from './tool-call-card';
import { useTabDrafts, WaitingDraftsContext } from './waiting-drafts';
import type { ToolCallState, ToolCallView } from './tool-call-state';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const terminal: ToolAnnotations = { readOnly: false, destructive: true, executesCode: true, exactGrants: true, idempotent: false, openWorld: false };
const schema: JsonSchema = {
  type: 'object',
  properties: { command: { type: 'string', description: 'The command line.' }, timeout: { type: 'integer', minimum: 1 } },
  required: ['command'],
  additionalProperties: false,
};
const call: ToolCallView = {
  key: 'tool:run_1:c1',
  runId: 'run_1',
  toolCallId: 'c1',
  toolName: 'terminal',
  arguments: { command: 'rm -rf build' },
  state: { status: 'awaiting-decision', approvalId: 'apv_1', expiresAt: null, problem: null },
};

/** The card wired to the real reducer and sendDecision, with the network call in the test's hands. */
function Harness({ send, schemaKnown = true, children }: { send: SendConfirm; schemaKnown?: boolean; children?: ReactNode }) {
  const initial: ChatState = { items: [{ kind: 'tool', key: call.key, call }], run: null, streamError: null };
  const [state, dispatch] = useReducer(chatReducer, initial);
  const item = state.items[0];
  if (item?.kind !== 'tool') return null;
  return (
    <HeldEditsContext value={held}>
      <ToolCallCard
        call={item.call}
        annotations={terminal}
        inputSchema={schemaKnown ? schema : undefined}
        onDecide={(current, request) => void sendDecision({ sessionId: 'chat_1', call: current, request, send, dispatch })}
      />
      {children}
    </HeldEditsContext>
  );
}

let held = new HeldEdits();
beforeEach(() => {
  held = new HeldEdits();
});

function openEditor() {
  fireEvent.click(screen.getByRole('button', { name: 'Edit arguments of terminal' }));
  return screen.getByRole('form', { name: 'Edit the arguments of terminal' });
}

describe('editing a call before allowing it', () => {
  it('marks the edited call’s names against what its tool declared when the call was put up', () => {
    const putUp: ToolCallView = { ...call, tool: { source: 'builtin', declared: { names: [{ name: 'command' }] }, annotations: terminal } };
    render(
      <HeldEditsContext value={held}>
        <ToolCallCard call={putUp} annotations={terminal} inputSchema={schema} onDecide={() => undefined} />
      </HeldEditsContext>,
    );
    const editor = openEditor();
    fireEvent.change(within(editor).getByRole('spinbutton', { name: /^timeout/ }), { target: { value: '5' } });
    const preview = screen.getByRole('group', { name: 'The edited call as it will run' });
    expect([...preview.querySelectorAll('[data-undeclared] .argument-name')].map((name) => name.textContent)).toStrictEqual(['timeoutnot a parameter of this tool']);
  });

  it('allows the edited call from the form, and the card then shows both versions', async () => {
    const answer = deferred<ConfirmResult>();
    const send = vi.fn<(input: ConfirmInput) => Promise<ConfirmResult>>(() => answer.promise);
    render(<Harness send={send} />);
    const editor = openEditor();
    const command = within(editor).getByRole('textbox', { name: /^command/ });
    expect(document.activeElement).toBe(command);
    expect((command as HTMLTextAreaElement).value).toBe('rm -rf build');
    expect(within(editor).getByRole('button', { name: 'Allow edited' }).hasAttribute('disabled')).toBe(true);
    fireEvent.change(command, { target: { value: 'rm -rf build/tmp' } });
    expect(within(within(editor).getByRole('group', { name: 'The edited call as it will run' })).getByText('rm -rf build/tmp')).toBeTruthy();
    fireEvent.click(within(editor).getByRole('button', { name: 'Allow edited' }));
    expect(send).toHaveBeenCalledWith({ sessionId: 'chat_1', approvalId: 'apv_1', decision: 'allow', clientLabel: 'web', arguments: { command: 'rm -rf build/tmp' } });
    await act(async () => answer.resolve({ resolved: true, status: 'resolved', decision: 'allow' }));

    const card = screen.getByRole('article', { name: 'Tool call terminal' });
    expect(within(card).getByTestId('tool-status').textContent).toBe('Allowed, waiting its turn');
    expect(within(card).queryByRole('form')).toBeNull();
    const proposed = within(card).getByRole('group', { name: 'Proposed arguments' });
    const edited = within(card).getByRole('group', { name: 'Edited arguments' });
    expect(within(proposed).getByText('rm -rf build').tagName).toBe('CODE');
    expect(within(edited).getByText('rm -rf build/tmp').tagName).toBe('CODE');
    expect(edited.querySelector('.version-label')?.textContent).toBe('Will run with · edited by you');
    expect(within(card).queryByText(EDIT_DROPPED)).toBeNull();
  });

  it('checks the edit against the schema as it is typed, in the form and as raw JSON', () => {
    const send = vi.fn<SendConfirm>();
    render(<Harness send={send} />);
    const editor = openEditor();
    fireEvent.change(within(editor).getByRole('spinbutton', { name: /^timeout/ }), { target: { value: '0' } });
    expect(within(editor).getByText('Must be at least 1.')).toBeTruthy();
    expect(within(editor).getByRole('button', { name: 'Allow edited' }).hasAttribute('disabled')).toBe(true);

    fireEvent.click(within(editor).getByRole('button', { name: 'Raw JSON' }));
    const json = within(editor).getByRole('textbox', { name: 'Arguments as JSON' });
    fireEvent.change(json, { target: { value: '{"command": 5' } });
    expect(within(editor).getByText(/^Not valid JSON: /)).toBeTruthy();
    fireEvent.click(within(editor).getByRole('button', { name: 'Form' }));
    expect(within(editor).getByRole('alert').textContent).toMatch(/^Fix the JSON to go back to the form\./);
    fireEvent.change(json, { target: { value: '{"command": 5, "sudo": true}' } });
    expect(within(within(editor).getByRole('list', { name: 'Problems with the arguments' })).getAllByRole('listitem').map((item) => item.textContent)).toStrictEqual([
      'command: Must be text.',
      'sudo: Not an argument of this tool.',
    ]);
    fireEvent.change(json, { target: { value: '{"command": "ls"}' } });
    fireEvent.click(within(editor).getByRole('button', { name: 'Allow edited' }));
    expect(send).toHaveBeenCalledWith(expect.objectContaining({ decision: 'allow', arguments: { command: 'ls' } }));
  });

  it('shows the server refusing an edit in the editor, and the call stays waiting', async () => {
    const refusal = Object.assign(new Error('arguments: invalid for "terminal": command: Too long'), { data: { code: 'BAD_REQUEST' } });
    const send = vi.fn<SendConfirm>(() => Promise.reject(refusal));
    render(<Harness send={send} />);
    const editor = openEditor();
    fireEvent.change(within(editor).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });
    await act(async () => fireEvent.click(within(editor).getByRole('button', { name: 'Allow edited' })));
    expect(within(editor).getByRole('alert').textContent).toBe('The server refused the edited arguments: arguments: invalid for "terminal": command: Too long. Nothing was applied, and the call still waits: fix the arguments and allow again.');
    expect(screen.getByTestId('tool-status').textContent).toBe('Waiting for your decision');
    expect(within(editor).getByRole('button', { name: 'Allow edited' }).hasAttribute('disabled')).toBe(false);
  });

  it('shows an edit too big to send in the editor as refused, nothing applied, and the call stays waiting', async () => {
    // What the client answers itself for a request over the server's message limit, without sending it.
    const message = 'arguments: the request is 2097230 bytes, over the 1048576 bytes (1 MiB) the server takes in one message; shorten arguments (2097185 bytes of it)';
    const send = vi.fn<SendConfirm>(() => Promise.reject(Object.assign(new Error(message), { data: { code: 'PAYLOAD_TOO_LARGE' } })));
    render(<Harness send={send} />);
    const editor = openEditor();
    fireEvent.change(within(editor).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });
    await act(async () => fireEvent.click(within(editor).getByRole('button', { name: 'Allow edited' })));
    // It read "The server failed while taking your decision (…)", as if it might have been applied.
    expect(within(editor).getByRole('alert').textContent).toBe(`The server refused the edited arguments: ${message}. Nothing was applied, and the call still waits: fix the arguments and allow again.`);
    expect(screen.getByTestId('tool-status').textContent).toBe('Waiting for your decision');
  });

  it('asks for one more tick before an Always allow of the edited call', () => {
    const send = vi.fn<SendConfirm>(() => new Promise<ConfirmResult>(() => undefined));
    render(<Harness send={send} />);
    const editor = openEditor();
    fireEvent.change(within(editor).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });
    fireEvent.click(within(editor).getByRole('checkbox', { name: /^Also always allow the edited call/ }));
    fireEvent.click(within(editor).getByRole('button', { name: 'Always allow edited' }));
    expect(send).toHaveBeenCalledWith(expect.objectContaining({ decision: 'allow', always: true, arguments: { command: 'ls' } }));
  });

  it('opens with the card key e, edits as raw JSON when the schema is unknown, and closes with Cancel editing', () => {
    vi.useFakeTimers();
    render(<Harness send={vi.fn<SendConfirm>()} schemaKnown={false} />);
    const card = screen.getByRole('article', { name: 'Tool call terminal' });
    fireEvent.keyDown(card, { key: 'e' });
    act(() => {
      vi.advanceTimersByTime(KEYED_DECISION_DELAY_MS);
    });
    const editor = screen.getByRole('form', { name: 'Edit the arguments of terminal' });
    expect(within(editor).queryByRole('button', { name: 'Raw JSON' })).toBeNull();
    expect(document.activeElement).toBe(within(editor).getByRole('textbox', { name: 'Arguments as JSON' }));
    fireEvent.click(within(editor).getByRole('button', { name: 'Cancel editing' }));
    expect(screen.queryByRole('form')).toBeNull();
    expect(document.activeElement).toBe(card);
  });
});

describe('an edit held in the editor', () => {
  const allowKey = 'Allow terminal';

  it('takes Enter in a field for nothing: only Allow edited allows', () => {
    const send = vi.fn<SendConfirm>();
    render(<Harness send={send} />);
    const editor = openEditor();
    fireEvent.change(within(editor).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });
    fireEvent.submit(editor);
    expect(send).not.toHaveBeenCalled();
  });

  it('ignores a pointer click on Allow edited in its first moments, as on every decision button', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'requestAnimationFrame', 'cancelAnimationFrame', 'performance', 'Date'] });
    const send = vi.fn<SendConfirm>();
    render(<Harness send={send} />);
    const editor = openEditor();
    fireEvent.change(within(editor).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });
    const allowEdited = within(editor).getByRole('button', { name: 'Allow edited' });
    fireEvent.pointerMove(allowEdited, { pointerType: 'mouse' });
    fireEvent.click(allowEdited, { detail: 1 });
    expect(send).not.toHaveBeenCalled();
    expect(within(editor).getByRole('status').textContent).toMatch(/^Nothing was decided/);
  });

  it('turns off every other way to allow the call while the editor holds a change: Allow, Always allow, a, Shift+A, the waiting list and Allow all', () => {
    vi.useFakeTimers();
    const send = vi.fn<SendConfirm>();
    const approval: WaitingApproval = { approvalId: 'apv_1', sessionId: 'chat_1', runId: 'run_1', toolCallId: 'c1', toolName: 'terminal', arguments: call.arguments, requestedAt: 1, expiresAt: null, title: 'chat', inputSchema: schema };
    const other: ToolCallView = { ...call, key: 'tool:run_1:c2', toolCallId: 'c2', state: { status: 'awaiting-decision', approvalId: 'apv_2', expiresAt: null, problem: null } };
    const onDecideWaiting = vi.fn();
    const onDecideAll = vi.fn();
    render(
      <Harness send={send}>
        <WaitingList approvals={[approval]} sending={new Set()} onDecide={onDecideWaiting} onOpen={() => undefined} />
        <PendingBar tools={new Map()} calls={[call, other]} onDecideAll={onDecideAll} />
      </Harness>,
    );
    const card = screen.getByRole('article', { name: 'Tool call terminal' });
    const waitingList = screen.getByRole('region', { name: 'Waiting for you' });
    const allowAll = screen.getByRole('button', { name: 'Allow all' });
    expect(within(waitingList).queryByRole('button', { name: 'Allow terminal “rm -rf build” in chat' })).not.toBeNull();

    // Open, not yet changed: Allow above still runs the proposal, as the editor says.
    const editor = openEditor();
    expect(screen.getByRole('button', { name: allowKey }).hasAttribute('disabled')).toBe(false);
    fireEvent.change(within(editor).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });

    expect(screen.getByRole('button', { name: allowKey }).hasAttribute('disabled')).toBe(true);
    expect(screen.getByRole('button', { name: 'Always allow terminal' }).hasAttribute('disabled')).toBe(true);
    expect(within(waitingList).queryByRole('button', { name: 'Allow terminal “rm -rf build” in chat' })).toBeNull();
    expect(within(waitingList).getByRole('button', { name: 'Review terminal “rm -rf build” in chat' })).toBeTruthy();
    expect(allowAll.hasAttribute('disabled')).toBe(true);
    card.focus();
    fireEvent.keyDown(card, { key: 'a' });
    fireEvent.keyDown(card, { key: 'A', shiftKey: true });
    fireEvent.keyDown(card, { key: 'y' });
    act(() => {
      vi.advanceTimersByTime(10 * KEYED_DECISION_DELAY_MS);
    });
    expect(screen.queryByRole('group', { name: 'Confirm Always allow terminal' })).toBeNull();
    expect(send).not.toHaveBeenCalled();

    // Cancelled, the edit is gone: the proposal may be allowed again from anywhere.
    fireEvent.click(within(editor).getByRole('button', { name: 'Cancel editing' }));
    expect(screen.getByRole('button', { name: allowKey }).hasAttribute('disabled')).toBe(false);
    expect(within(waitingList).queryByRole('button', { name: 'Allow terminal “rm -rf build” in chat' })).not.toBeNull();
    expect(allowAll.hasAttribute('disabled')).toBe(false);
    expect(held.getSnapshot()).toStrictEqual(new Set());
  });

  it('keeps every other way to allow the call off while its edit is kept as a draft, its card gone (another chat opened), until the edit is dropped', () => {
    window.sessionStorage.clear();
    const approval: WaitingApproval = { approvalId: 'apv_1', sessionId: 'chat_1', runId: 'run_1', toolCallId: 'c1', toolName: 'terminal', arguments: call.arguments, requestedAt: 1, expiresAt: null, title: 'chat', inputSchema: schema };
    const waiting: WaitingApprovals = { all: [approval], countBySession: new Map([['chat_1', 1]]), loaded: true };
    function TabContent({ cardShown }: { cardShown: boolean }) {
      const drafts = useTabDrafts(waiting);
      return (
        <WaitingDraftsContext value={drafts}>
          {cardShown && <ToolCallCard call={call} annotations={terminal} inputSchema={schema} onDecide={() => undefined} />}
          <WaitingList approvals={waiting.all} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />
        </WaitingDraftsContext>
      );
    }
    const tab = (cardShown: boolean) => (
      <HeldEditsContext value={held}>
        <TabContent cardShown={cardShown} />
      </HeldEditsContext>
    );
    const allowInList = () => within(screen.getByRole('region', { name: 'Waiting for you' })).queryByRole('button', { name: 'Allow terminal “rm -rf build” in chat' });
    const { rerender } = render(tab(true));
    fireEvent.change(within(openEditor()).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });
    expect(allowInList()).toBeNull();

    rerender(tab(false));
    expect(allowInList()).toBeNull();
    expect(held.getSnapshot()).toStrictEqual(new Set(['apv_1']));

    // Back on the chat, the card opens with the kept edit; cancelled, the edit is gone and the proposal may be allowed again.
    rerender(tab(true));
    fireEvent.click(screen.getByRole('button', { name: 'Cancel editing' }));
    expect(allowInList()).not.toBeNull();
    expect(held.getSnapshot()).toStrictEqual(new Set());
  });

  it('says, under the edited call, that the tool may run with defaults it does not show when the edit gives a value whose schema may declare one', () => {
    const labels: JsonSchema = {
      type: 'object',
      properties: { target: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'object', properties: { dry_run: { type: 'boolean', default: true } } } } },
      required: ['target'],
    };
    const deploy: ToolCallView = { ...call, toolName: 'deploy', arguments: { target: 'staging', labels: {} } };
    render(<ToolCallCard call={deploy} annotations={terminal} inputSchema={labels} onDecide={() => undefined} />);
    fireEvent.click(screen.getByRole('button', { name: 'Edit arguments of deploy' }));
    const editor = screen.getByRole('form', { name: 'Edit the arguments of deploy' });
    fireEvent.click(within(editor).getByRole('button', { name: 'Raw JSON' }));
    const json = within(editor).getByRole('textbox', { name: 'Arguments as JSON' });
    fireEvent.change(json, { target: { value: '{"target": "production", "labels": {}}' } });
    const shown = () => within(editor).getByRole('group', { name: 'The edited call as it will run' });
    expect(within(shown()).queryByRole('note')).toBeNull();
    fireEvent.change(json, { target: { value: '{"target": "production", "labels": {"web": {}}}' } });
    expect(within(shown()).getByRole('note').textContent).toBe(unshownDefaultsNote(['unreadable']));
  });

  it('shows field names and descriptions from a tool schema under the display rules of the card', () => {
    const sneaky: JsonSchema = { type: 'object', properties: { 'pa\u202Eth': { type: 'string', description: 'Where \u202Eit goes\u200B.' } } };
    render(<ToolCallCard call={{ ...call, arguments: {} }} annotations={terminal} inputSchema={sneaky} onDecide={() => undefined} />);
    const editor = openEditor();
    const field = editor.querySelector('.argument-field-text');
    expect(field?.querySelector('.argument-field-name')?.textContent).toBe('pa\\u{202E}th');
    expect(field?.querySelector('.argument-field-about')?.textContent).toBe('Where \\u{202E}it goes\\u{200B}.');
    expect(field?.querySelectorAll('.escaped-char')).toHaveLength(3);
  });
});

const EDIT_DROPPED = 'This call was decided elsewhere, perhaps in another tab, before your edit was sent: your edit was not used.';

describe('an edit held open when the call is decided elsewhere', () => {
  /** The card as the chat shows it, the call's state given as the run reports it (another tab's decision comes that way). */
  function CardIn({ state }: { state: ToolCallState }) {
    return <ToolCallCard call={{ ...call, state }} annotations={terminal} inputSchema={schema} onDecide={() => undefined} />;
  }

  it('says the edit was not used when another tab allows the proposal, and still says so once the call ran', () => {
    const { rerender } = render(<CardIn state={call.state} />);
    fireEvent.change(within(openEditor()).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });

    rerender(<CardIn state={{ status: 'allowed', approvedBy: 'you' }} />);
    const card = screen.getByRole('article', { name: 'Tool call terminal' });
    expect(within(card).queryByRole('form')).toBeNull();
    expect(within(card).getByRole('alert').textContent).toBe(EDIT_DROPPED);
    rerender(<CardIn state={{ status: 'done', approvedBy: 'you', result: 'removed' }} />);
    expect(within(card).getByTestId('tool-status').textContent).toBe('Done');
    expect(within(card).getByRole('alert').textContent).toBe(EDIT_DROPPED);
  });

  it('says so when another tab denies it, and not when the editor held no change or the call timed out', () => {
    const { rerender } = render(<CardIn state={call.state} />);
    fireEvent.change(within(openEditor()).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });
    rerender(<CardIn state={{ status: 'denied', reason: null, result: null }} />);
    expect(screen.getByRole('alert').textContent).toBe(EDIT_DROPPED);
    cleanup();

    const unchanged = render(<CardIn state={call.state} />);
    openEditor();
    unchanged.rerender(<CardIn state={{ status: 'allowed', approvedBy: 'you' }} />);
    expect(screen.queryByText(EDIT_DROPPED)).toBeNull();
    cleanup();

    const timedOut = render(<CardIn state={call.state} />);
    fireEvent.change(within(openEditor()).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });
    timedOut.rerender(<CardIn state={{ status: 'timed-out', result: null }} />);
    expect(screen.getByTestId('tool-status').textContent).toBe('Timed out waiting for a decision');
    expect(screen.queryByText(EDIT_DROPPED)).toBeNull();
  });

  it('says nothing of a deny sent from the card while the editor held a change', async () => {
    const send = vi.fn<SendConfirm>(() => Promise.resolve({ resolved: true, status: 'resolved', decision: 'deny' }));
    render(<Harness send={send} />);
    fireEvent.change(within(openEditor()).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Deny terminal' }), { detail: 0 }));
    expect(send).toHaveBeenCalledWith(expect.objectContaining({ decision: 'deny' }));
    expect(screen.getByTestId('tool-status').textContent).toBe('Denied');
    expect(screen.queryByText(EDIT_DROPPED)).toBeNull();
  });

  it('says the edit was not used when it was sent too late: the run reports the call allowed with no edit', () => {
    const { rerender } = render(<CardIn state={call.state} />);
    fireEvent.change(within(openEditor()).getByRole('textbox', { name: /^command/ }), { target: { value: 'ls' } });
    // This tab sent its edit (the card shows it being sent), and another tab's allow of the proposal got there first.
    rerender(<CardIn state={{ status: 'deciding', approvalId: 'apv_1', expiresAt: null, decision: 'allow' }} />);
    rerender(<CardIn state={{ status: 'allowed', approvedBy: 'you' }} />);
    expect(screen.getByRole('alert').textContent).toBe(EDIT_DROPPED);
  });
});
