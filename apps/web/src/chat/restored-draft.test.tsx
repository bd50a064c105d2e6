import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolAnnotations } from '../lib/api-types';
import type { JsonSchema } from './argument-form';
import { ToolCallCard } from './tool-call-card';
import type { ToolCallView } from './tool-call-state';
import { MAX_DRAFT_CHARS, WaitingDrafts, WaitingDraftsContext, type WaitingDraft } from './waiting-drafts';

afterEach(() => {
  cleanup();
  window.sessionStorage.clear();
});

const annotations: ToolAnnotations = { readOnly: false, destructive: true, executesCode: true, exactGrants: true, idempotent: false, openWorld: false };
const terminalSchema: JsonSchema = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };

function waiting(toolName: string, args: Record<string, unknown>): ToolCallView {
  return { key: 'tool:run_1:c1', runId: 'run_1', toolCallId: 'c1', toolName, arguments: args, state: { status: 'awaiting-decision', approvalId: 'apv_1', expiresAt: null, problem: null } };
}

/** The card as the app shows it, its drafts kept in this tab's sessionStorage. */
function Card({ call, schema }: { call: ToolCallView; schema: JsonSchema | undefined }) {
  return (
    <WaitingDraftsContext value={new WaitingDrafts(window.sessionStorage)}>
      <ToolCallCard call={call} annotations={annotations} inputSchema={schema} onDecide={() => undefined} />
    </WaitingDraftsContext>
  );
}

function kept(): WaitingDraft | undefined {
  return new WaitingDrafts(window.sessionStorage).read('apv_1');
}

function restoredNote() {
  return screen.queryByText(/^Restored draft: /);
}

function editor(toolName: string) {
  return screen.getByRole('form', { name: `Edit the arguments of ${toolName}` });
}

function willRunWith(toolName: string) {
  return within(editor(toolName)).getByRole('group', { name: 'The edited call as it will run' });
}

describe('a draft restored on a waiting card', () => {
  const ls = waiting('terminal', { command: 'ls' });
  const rawEdit: WaitingDraft = { edit: { mode: 'raw', text: '{ "command": "rm -rf ~" }' } };
  const formEdit: WaitingDraft = { edit: { mode: 'form', values: [['command', 'rm -rf ~']] } };

  it('is gone once the edit is cancelled: Edit then starts from the proposal, keeps nothing and the note goes', () => {
    new WaitingDrafts(window.sessionStorage).save('apv_1', rawEdit, null);
    render(<Card call={ls} schema={terminalSchema} />);
    expect(restoredNote()?.textContent).toContain('your edit of the arguments');
    expect(within(editor('terminal')).getByRole<HTMLTextAreaElement>('textbox', { name: 'Arguments as JSON' }).value).toBe('{ "command": "rm -rf ~" }');

    fireEvent.click(within(editor('terminal')).getByRole('button', { name: 'Cancel editing' }));
    expect(kept()).toBeUndefined();
    expect(restoredNote()).toBeNull();
    expect(screen.getByRole('button', { name: 'Allow terminal' }).hasAttribute('disabled')).toBe(false);

    fireEvent.click(screen.getByRole('button', { name: 'Edit arguments of terminal' }));
    expect(within(editor('terminal')).getByRole<HTMLTextAreaElement>('textbox', { name: /^command/ }).value).toBe('ls');
    expect(kept()).toBeUndefined();
    expect(restoredNote()).toBeNull();
    expect(screen.getByRole('button', { name: 'Allow terminal' }).hasAttribute('disabled')).toBe(false);
  });

  // Found in review: a card shown with a kept reason opened its reason box focused, and a kept edit put the focus in
  // the editor's first field, also when the tool list answered later: what the person was typing in the message box
  // went there, and its Enter denied the call with the message as the reason.
  it('takes no focus from the message box as it opens with a kept reason or edit, or puts an edit back later', () => {
    const messageBox = document.body.appendChild(document.createElement('textarea'));
    messageBox.focus();
    const focused: string[] = [];
    const where = () => (document.activeElement === messageBox ? 'message box' : (document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.tagName ?? 'none'));

    new WaitingDrafts(window.sessionStorage).save('apv_1', { reason: 'not this one' }, null);
    render(<Card call={ls} schema={terminalSchema} />);
    focused.push(where());
    cleanup();

    new WaitingDrafts(window.sessionStorage).save('apv_1', formEdit, null);
    render(<Card call={ls} schema={terminalSchema} />);
    focused.push(where());
    cleanup();

    const saved: WaitingDraft = { edit: { mode: 'form', fieldsFrom: { command: 'ls' }, values: [['command', 'rm -rf ~']] } };
    new WaitingDrafts(window.sessionStorage).save('apv_1', saved, null);
    const { rerender } = render(<Card call={ls} schema={undefined} />);
    rerender(<Card call={ls} schema={terminalSchema} />);
    focused.push(where());
    cleanup();
    window.sessionStorage.clear();

    // Opened by the person, the reason box and the editor take the focus.
    render(<Card call={ls} schema={terminalSchema} />);
    fireEvent.click(screen.getByRole('button', { name: 'Deny with reason…' }));
    focused.push(where() === 'INPUT' ? 'reason box' : where());
    fireEvent.click(screen.getByRole('button', { name: 'Edit arguments of terminal' }));
    focused.push(document.activeElement === within(editor('terminal')).getByRole('textbox', { name: /^command/ }) ? 'editor' : where());
    messageBox.remove();
    expect(focused).toStrictEqual(['message box', 'message box', 'message box', 'reason box', 'editor']);
  });

  it('no longer names a deny reason once it is emptied', () => {
    new WaitingDrafts(window.sessionStorage).save('apv_1', { reason: 'not this one' }, null);
    render(<Card call={ls} schema={terminalSchema} />);
    expect(restoredNote()?.textContent).toContain('your deny reason');
    fireEvent.change(screen.getByRole('textbox', { name: 'Reason, passed to the model' }), { target: { value: '' } });
    expect(kept()).toBeUndefined();
    expect(restoredNote()).toBeNull();
  });

  it('waits for the tool list to put a form edit back, keeping it meanwhile, and says so only once it is back', () => {
    const saved: WaitingDraft = { edit: { mode: 'form', fieldsFrom: { command: 'ls' }, values: [['command', 'rm -rf ~']] } };
    new WaitingDrafts(window.sessionStorage).save('apv_1', saved, null);
    const { rerender } = render(<Card call={ls} schema={undefined} />);
    expect(kept()).toStrictEqual(saved);
    expect(restoredNote()).toBeNull();
    expect(screen.queryByRole('form', { name: 'Edit the arguments of terminal' })).toBeNull();
    expect(screen.getByText(/^Your edit of the arguments, kept from before this card was last shown, goes back into its form once/)).toBeTruthy();
    // The proposal is not run in its place while the edit waits.
    expect(screen.getByRole('button', { name: 'Allow terminal' }).hasAttribute('disabled')).toBe(true);

    rerender(<Card call={ls} schema={terminalSchema} />);
    expect(within(editor('terminal')).getByRole<HTMLTextAreaElement>('textbox', { name: /^command/ }).value).toBe('rm -rf ~');
    expect(within(willRunWith('terminal')).getByText('rm -rf ~')).toBeTruthy();
    expect(restoredNote()?.textContent).toContain('your edit of the arguments');
    expect(kept()).toStrictEqual(formEdit);
    expect(screen.getByRole('button', { name: 'Allow terminal' }).hasAttribute('disabled')).toBe(true);
  });

  it('keeps a small edit of a large proposal, storing only the field that changed', () => {
    const content = 'x'.repeat(60_000);
    const schema: JsonSchema = { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] };
    const call = waiting('write_file', { path: 'notes.txt', content });
    render(<Card call={call} schema={schema} />);
    fireEvent.click(screen.getByRole('button', { name: 'Edit arguments of write_file' }));
    fireEvent.change(within(editor('write_file')).getByRole('textbox', { name: /^path/ }), { target: { value: 'notes-2.txt' } });
    expect(kept()).toStrictEqual({ edit: { mode: 'form', values: [['path', 'notes-2.txt']] } });
    expect(JSON.stringify(kept()).length).toBeLessThan(MAX_DRAFT_CHARS);

    cleanup();
    render(<Card call={call} schema={schema} />);
    expect(within(editor('write_file')).getByRole<HTMLInputElement>('textbox', { name: /^path/ }).value).toBe('notes-2.txt');
    expect(within(editor('write_file')).getByRole<HTMLTextAreaElement>('textbox', { name: /^content/ }).value).toBe(content);
  });

  it("keeps a choice by its value, so the tool's options in another order still give the one chosen", () => {
    const modes = (options: string[]): JsonSchema => ({ type: 'object', properties: { path: { type: 'string' }, mode: { enum: options } }, required: ['path', 'mode'] });
    const call = waiting('sync', { path: 'a', mode: 'fast' });
    render(<Card call={call} schema={modes(['fast', 'safe'])} />);
    fireEvent.click(screen.getByRole('button', { name: 'Edit arguments of sync' }));
    const select = within(editor('sync')).getByRole('combobox', { name: /^mode/ });
    fireEvent.change(select, { target: { value: within(select).getByRole('option', { name: 'safe' }).getAttribute('value') } });
    expect(within(willRunWith('sync')).getByText('safe')).toBeTruthy();

    cleanup();
    render(<Card call={call} schema={modes(['safe', 'fast', 'slow'])} />);
    const restored = within(editor('sync')).getByRole<HTMLSelectElement>('combobox', { name: /^mode/ });
    expect(restored.selectedOptions[0]?.textContent).toBe('safe');
    expect(within(willRunWith('sync')).getByText('safe')).toBeTruthy();
  });
});
