import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ARMING_MS } from '../lib/steady-button';
import type { RuleView, WorkspaceRulesStatus } from './rule-types';
import { WorkspaceRulesView } from './workspace-rules-view';

afterEach(cleanup);

const SHA = 'a'.repeat(64);
const FILE = '/work/project/.airlock/rules.json';

function fileRule(id: string, effect: 'allow' | 'deny', description: RuleView['description']): RuleView {
  return {
    rule: { id, effect, tool: 'terminal', match: { kind: 'command-prefix', tokens: ['make'], exact: false }, scope: { kind: 'workspace', path: '/work/project' }, source: 'workspace-file', createdAt: '2025-01-01T00:00:00.000Z' },
    description,
    hits: 0,
    lastUsedAt: null,
    editable: false,
  };
}

const ALLOW = fileRule('workspace-file:x:0', 'allow', [{ text: "Allow these exact arguments for terminal in this workspace (from the workspace's .airlock/rules.json)" }]);
const DENY = fileRule('workspace-file:x:1', 'deny', [{ text: 'Deny commands starting with ' }, { code: 'curl' }, { text: " in this workspace (from the workspace's .airlock/rules.json)" }]);

function show(status: WorkspaceRulesStatus) {
  const onTrust = vi.fn();
  render(<WorkspaceRulesView status={status} busy={false} error={undefined} onTrust={onTrust} />);
  const panel = screen.getByRole('region', { name: 'Workspace rules file' });
  const buttons = () => within(panel).queryAllByRole('button').map((button) => button.textContent);
  return { panel, onTrust, buttons };
}

describe('WorkspaceRulesView', () => {
  it('says a file changed since it was trusted, shows the rules it holds now, and trusts that content by its hash', () => {
    const { panel, onTrust, buttons } = show({ file: FILE, state: 'loaded', sha256: SHA, trust: 'changed', rules: [ALLOW, DENY] });
    expect(within(panel).getByTestId('workspace-trust').textContent).toBe('The file changed since you trusted it: its allow rules do not apply until you trust the new content.');
    expect(within(panel).getAllByRole('listitem').map((item) => item.textContent)).toStrictEqual(["Allow Allow these exact arguments for terminal in this workspace (from the workspace's .airlock/rules.json)", "Deny Deny commands starting with curl in this workspace (from the workspace's .airlock/rules.json)"]);
    expect(buttons()).toStrictEqual(['Trust the new content', 'Stop trusting']);
    fireEvent.click(within(panel).getByRole('button', { name: 'Trust the new content' }));
    expect(onTrust.mock.calls).toStrictEqual([[{ trusted: true, sha256: SHA }]]);
  });

  it('offers nothing to trust for content already trusted, only to stop', () => {
    const { panel, onTrust, buttons } = show({ file: FILE, state: 'loaded', sha256: SHA, trust: 'trusted', rules: [ALLOW, DENY] });
    expect(within(panel).getByTestId('workspace-trust').textContent).toBe('You trust this content of the file: its allow rules apply.');
    expect(within(panel).queryAllByRole('listitem')).toStrictEqual([]);
    expect(buttons()).toStrictEqual(['Stop trusting']);
    fireEvent.click(within(panel).getByRole('button', { name: 'Stop trusting' }));
    expect(onTrust.mock.calls).toStrictEqual([[{ trusted: false }]]);
  });

  it('shows an invalid file’s problems and the deny rules kept from its last valid version, and cannot trust it', () => {
    const { panel, buttons } = show({ file: FILE, state: 'invalid', sha256: SHA, error: `${FILE} is not a valid rules file: not JSON`, trust: 'changed', rules: [DENY] });
    expect(panel.querySelector('p')?.textContent).toBe(`This workspace's rules file is invalid: none of its allow rules apply; the deny rules of its last valid version still do. ${FILE}`);
    expect(within(panel).getByRole('alert').textContent).toContain('not JSON');
    expect(within(panel).getByRole('list', { name: 'Deny rules kept from its last valid version' }).textContent).toContain('curl');
    expect(buttons()).toStrictEqual(['Stop trusting']);
  });

  it('shows the problems of an invalid file under the display rules: text quoted from the file cannot reorder what is read', () => {
    const { panel } = show({ file: FILE, state: 'invalid', sha256: SHA, error: 'rules[0].reason: "\u202Eevil" is too long', trust: 'untrusted', rules: [] });
    const alert = within(panel).getByRole('alert');
    expect(alert.textContent).toBe('rules[0].reason: "\\u{202E}evil" is too long');
    expect(alert.querySelector('.escaped-char')?.getAttribute('data-class')).toBe('bidi');
  });

  it('arms its trust button anew when the file shows other content: a click meant for the old rules trusts nothing', () => {
    vi.useFakeTimers();
    try {
      const onTrust = vi.fn();
      const status: WorkspaceRulesStatus = { file: FILE, state: 'loaded', sha256: SHA, trust: 'untrusted', rules: [ALLOW] };
      const view = render(<WorkspaceRulesView status={status} busy={false} error={undefined} onTrust={onTrust} />);
      act(() => {
        vi.advanceTimersByTime(ARMING_MS);
      });
      expect(screen.getByRole('button', { name: 'Trust these rules' }).getAttribute('aria-disabled')).toBeNull();
      view.rerender(<WorkspaceRulesView status={{ ...status, sha256: 'b'.repeat(64), rules: [ALLOW, DENY] }} busy={false} error={undefined} onTrust={onTrust} />);
      const button = screen.getByRole('button', { name: 'Trust these rules' });
      expect(button.getAttribute('aria-disabled')).toBe('true');
      fireEvent.pointerMove(button, { pointerType: 'mouse' });
      fireEvent.click(button, { detail: 1 });
      expect(onTrust).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });
});
