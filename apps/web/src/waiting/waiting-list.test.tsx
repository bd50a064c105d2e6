import { visibleArguments } from '@airlock/core';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import type * as Core from '@airlock/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WaitingApproval } from './use-waiting-approvals';
import { WaitingList } from './waiting-list';

vi.mock('@airlock/core', async (importOriginal) => {
  const core = await importOriginal<typeof Core>();
  return { ...core, visibleArguments: vi.fn(core.visibleArguments) };
});

afterEach(() => {
  cleanup();
  vi.mocked(visibleArguments).mockClear();
});

const waiting = (id: string, code: string): WaitingApproval => ({
  approvalId: id,
  sessionId: 's1',
  runId: 'r1',
  toolCallId: `call_${id}`,
  toolName: 'python',
  arguments: { code },
  requestedAt: 1,
  expiresAt: null,
  title: 'big chat',
  inputSchema: { type: 'object', properties: { code: { type: 'string' } } },
});

describe('WaitingList', () => {
  it('previews each waiting call once, not again on every render of the app', () => {
    const approvals = ['a', 'b', 'c'].map((id) => waiting(id, `print("${id}") # ${'x'.repeat(100_000)}`));
    const list = (shown: readonly WaitingApproval[]) => <WaitingList approvals={shown} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />;
    const { rerender } = render(list(approvals));
    expect(vi.mocked(visibleArguments)).toHaveBeenCalledTimes(3);

    // The list read again (equal calls, new objects) and the app drawn again for something else.
    rerender(list(approvals.map((approval) => ({ ...approval, arguments: { ...approval.arguments } }))));
    rerender(list(approvals));
    expect(vi.mocked(visibleArguments)).toHaveBeenCalledTimes(3);

    // A call put up since is previewed, once.
    rerender(list([...approvals, waiting('d', 'print("d")')]));
    expect(vi.mocked(visibleArguments)).toHaveBeenCalledTimes(4);
    screen.getByText('print("d")');
  });

  it('offers Allow only for a call shown whole: a long run of spaces, its only oddity, sends it to its card', () => {
    const list = (shown: readonly WaitingApproval[]) => <WaitingList approvals={shown} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />;
    render(list([waiting('a', 'print(1)'), waiting('b', `print(2)${' '.repeat(12)}# spaces`)]));
    screen.getByRole('button', { name: 'Allow python “print(1)” in big chat' });
    expect(screen.getAllByRole('button', { name: /^Allow / })).toHaveLength(1);
    screen.getByRole('button', { name: 'Review python “print(2)␠×12# spaces” in big chat' });
    screen.getByText('print(2)␠×12# spaces');
  });

  it('describes each call’s buttons by its own preview: three calls of one tool in one chat are told apart', () => {
    const calls = [waiting('a', 'print(1)'), waiting('b', 'print(2)'), waiting('c', `print(3)${' '.repeat(12)}# spaces`)];
    render(<WaitingList approvals={calls} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />);
    const described = (name: RegExp) => screen.getAllByRole('button', { name }).map((button) => [button.getAttribute('aria-label'), document.getElementById(button.getAttribute('aria-describedby') ?? '')?.textContent]);
    expect(described(/^(Allow|Review) /)).toStrictEqual([
      ['Allow python “print(1)” in big chat', 'print(1)'],
      ['Allow python “print(2)” in big chat', 'print(2)'],
      ['Review python “print(3)␠×12# spaces” in big chat', 'print(3)␠×12# spaces'],
    ]);
    expect(described(/^Deny /).map(([, description]) => description)).toStrictEqual(['print(1)', 'print(2)', 'print(3)␠×12# spaces']);
  });

  it('names each button after its own call, so calls of one tool in one chat are told apart by name; a long call is cut short in the name only', () => {
    const long = `print("${'x'.repeat(60)}")`;
    const calls = [waiting('a', 'print(1)'), waiting('b', 'print(2)'), waiting('c', long)];
    render(<WaitingList approvals={calls} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />);
    const names = (role: RegExp) => screen.getAllByRole('button', { name: role }).map((button) => button.getAttribute('aria-label'));
    expect(names(/^Deny /)).toStrictEqual(['Deny python “print(1)” in big chat', 'Deny python “print(2)” in big chat', `Deny python “${long.slice(0, 40)}…” in big chat`]);
    expect(new Set(names(/^(Allow|Review) /)).size).toBe(3);
    screen.getByRole('button', { name: 'Allow python “print(2)” in big chat' });
    // What a sighted person sees is unchanged: the buttons read Allow and Deny, and the whole preview is shown.
    expect(screen.getAllByRole('button', { name: /^(Allow|Review|Deny) / }).map((button) => button.textContent)).toStrictEqual(['Allow', 'Deny', 'Allow', 'Deny', 'Allow', 'Deny']);
    screen.getByText(long);
  });

  it('never previews a deeper line less indented: code starting 40 spaces deep reads deeper than code starting 16 deep', () => {
    render(<WaitingList approvals={[waiting('a', `${' '.repeat(16)}if ready:\n    pass`), waiting('b', `${' '.repeat(40)}launch()\nx = 1`)]} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />);
    const [outer, inner] = [...document.querySelectorAll('.waiting-preview')].map((preview) => preview.textContent ?? '');
    expect(inner!.indexOf('launch')).toBeGreaterThan(outer!.indexOf('if'));
  });

  it('offers Allow for neither a call holding a name its tool does not declare nor one whose tool is not listed; a string reading as JSON is quoted', () => {
    const purge = (id: string, args: Record<string, unknown>, listed = true): WaitingApproval => ({
      ...waiting(id, ''),
      toolName: 'mcp__purge',
      arguments: args,
      inputSchema: listed ? { type: 'object', properties: { target: {}, dry_run: {} } } : undefined,
    });
    const list = (shown: readonly WaitingApproval[]) => <WaitingList approvals={shown} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />;
    render(
      list([
        purge('a', { target: 'backups', dry_run: true }),
        purge('b', { target: 'backups', dry_run: 'true' }),
        purge('c', { target: 'backups', 'dry_run ': true }),
        purge('d', { target: 'backups', dryRun: true }),
        purge('e', { target: 'backups', dry_run: true }, false),
      ]),
    );
    const item = (id: string) => document.querySelector<HTMLElement>(`[data-approval-id="${id}"]`)!;
    const allowed = (id: string) => item(id).querySelector('.btn-allow') !== null;
    expect(['a', 'b', 'c', 'd', 'e'].map(allowed)).toStrictEqual([true, true, false, false, false]);
    expect(item('a').querySelector('.waiting-preview')?.textContent).toBe('target: backups · dry_run: true');
    expect(item('b').querySelector('.waiting-preview')?.textContent).toBe('target: backups · dry_run: "true"');
    expect(item('c').querySelector('.waiting-preview')?.textContent).toBe('target: backups · dry_run\\u{20}: true');
  });

  it('judges a call against what its tool declared when it was put up, not the tool as listed now', () => {
    const annotations = { readOnly: false, destructive: true, executesCode: false, exactGrants: false, idempotent: false, openWorld: false };
    const purge = (id: string, declared: string[]): WaitingApproval => ({
      ...waiting(id, ''),
      toolName: 'mcp__purge',
      arguments: { target: 'backups', dry_run: true },
      // Listed now with dry_run: the server added it after the calls were put up, or dropped it since.
      inputSchema: { type: 'object', properties: { target: {}, dry_run: {} } },
      tool: { source: 'mcp:fs', declared: { names: declared.map((name) => ({ name })) }, annotations },
    });
    render(<WaitingList approvals={[purge('a', ['target']), purge('b', ['target', 'dry_run'])]} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />);
    const allowed = (id: string) => document.querySelector(`[data-approval-id="${id}"] .btn-allow`) !== null;
    expect(['a', 'b'].map(allowed)).toStrictEqual([false, true]);
  });

  it('offers Allow for no call whose tool may run with defaults it does not show: only its card says why', () => {
    const annotations = { readOnly: false, destructive: false, executesCode: false, exactGrants: false, idempotent: false, openWorld: false };
    const notify = (id: string, args: Record<string, unknown>, unshown: boolean): WaitingApproval => ({
      ...waiting(id, ''),
      toolName: 'ops__notify',
      arguments: args,
      tool: { source: 'mcp:ops', declared: { names: [{ name: 'to' }, { name: 'urgent' }] }, annotations, ...(unshown ? { unshownDefaults: ['ambiguous' as const] } : {}) },
    });
    render(
      <WaitingList
        approvals={[notify('a', { to: '#ops' }, true), notify('b', { to: '#ops', urgent: false }, false), notify('c', {}, true)]}
        sending={new Set()}
        onDecide={() => undefined}
        onOpen={() => undefined}
      />,
    );
    const item = (id: string) => document.querySelector<HTMLElement>(`[data-approval-id="${id}"]`)!;
    expect(['a', 'b', 'c'].map((id) => item(id).querySelector('.btn-allow') !== null)).toStrictEqual([false, true, false]);
    expect(item('a').querySelector('.waiting-preview')?.textContent).toBe('to: #ops');
    expect(item('a').querySelector('button[aria-label^="Review"]')).not.toBeNull();
  });

  it('offers Review, not Allow, for a call a deny rule asked about, and Deny still: only its card says why it is asked', () => {
    const onDecide = vi.fn();
    const onOpen = vi.fn();
    const asked = { ...waiting('a', 'print(1)'), exactGrantsOnly: true };
    render(<WaitingList approvals={[asked, waiting('b', 'print(2)')]} sending={new Set()} onDecide={onDecide} onOpen={onOpen} />);
    const item = (id: string) => document.querySelector<HTMLElement>(`[data-approval-id="${id}"]`)!;
    expect(['a', 'b'].map((id) => [...item(id).querySelectorAll('.waiting-actions button')].map((button) => button.textContent))).toStrictEqual([
      ['Review…', 'Deny'],
      ['Allow', 'Deny'],
    ]);
    const review = screen.getByRole('button', { name: 'Review python “print(1)” in big chat' });
    expect(review.getAttribute('title')).toBe('A deny rule asked about this call: read why on its card and decide there');
    fireEvent.click(review);
    expect(onOpen.mock.calls).toStrictEqual([[asked]]);
    expect(onDecide).not.toHaveBeenCalled();
  });

  it('says why a deny rule asked about a call, the rule\'s own reason quoted as on its card', () => {
    const reason = [{ text: 'A deny rule applies (' }, { text: 'Deny reads matching ' }, { code: 'secret/**' }, { text: ': ' }, { quote: 'keys stay private' }, { text: ')' }];
    const asked = { ...waiting('a', 'print(1)'), exactGrantsOnly: true, askedBecause: { ruleId: 'rule_a', reason } };
    render(<WaitingList approvals={[asked, waiting('b', 'print(2)')]} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />);
    const why = (id: string) => document.querySelector(`[data-approval-id="${id}"] [data-testid="rule-asked"]`);
    expect(why('a')?.textContent).toBe('Why you are asked: A deny rule applies (Deny reads matching secret/**: keys stay private).');
    expect(why('a')?.querySelector('q')?.textContent).toBe('keys stay private');
    expect(why('b')).toBe(null);
  });

  it('names the MCP server of each call, as the card does: two servers may give tools one name', () => {
    const annotations = { readOnly: false, destructive: false, executesCode: false, exactGrants: true, idempotent: false, openWorld: false };
    const of = (id: string, source: string): WaitingApproval => ({ ...waiting(id, ''), toolName: 'a__b__c', arguments: { x: '1' }, tool: { source, declared: { names: [{ name: 'x' }] }, annotations } });
    render(<WaitingList approvals={[of('a', 'mcp:a'), of('b', 'mcp:a__b'), of('c', 'builtin')]} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />);
    const badge = (id: string) => document.querySelector(`[data-approval-id="${id}"] .badge-source`)?.textContent;
    expect(['a', 'b', 'c'].map(badge)).toStrictEqual(['MCP · a', 'MCP · a__b', undefined]);
    expect(document.querySelector('[data-approval-id="b"] .btn-deny')?.getAttribute('aria-label')).toBe('Deny a__b__c “x: "1"” of the MCP server a__b in big chat');
  });

  it('shows a chat title’s hidden and reordering characters as escapes, in the entry and its buttons’ names', () => {
    const call = { ...waiting('a', 'print(1)'), title: 'pay \u202Efdp.exe\u202C' };
    render(<WaitingList approvals={[call]} sending={new Set()} onDecide={() => undefined} onOpen={() => undefined} />);
    const shown = 'pay \\u{202E}fdp.exe\\u{202C}';
    expect(document.querySelector('.waiting-chat')?.textContent).toBe(shown);
    screen.getByRole('button', { name: `Allow python “print(1)” in ${shown}` });
  });
});
