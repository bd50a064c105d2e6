import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { LoopEvent } from '../lib/api-types';
import { chatReducer, initialChatState, type ChatState } from '../chat/chat-reducer';
import { ToolCallCard } from '../chat/tool-call-card';

afterEach(cleanup);

const RUN = 'run_1';
const REASON =
  'This write would make the workspace folder a Git repository, or change one (with it, the folder holds a HEAD file and objects/ and refs/ folders): ' +
  'a git command run there later, in your own shell, runs what its config names, outside any sandbox. The rule Allow writing files matching `**` in this workspace ' +
  'does not cover that';

const start = (askedBecause?: { ruleId: string; reason: string }): LoopEvent => ({
  type: 'tool-start',
  toolCallId: 'c1',
  toolName: 'write_file',
  arguments: { path: 'refs/README', content: 'x\n' },
  approvalId: 'apv_1',
  awaitingConfirmation: true,
  expiresAt: 1_000_000,
  ...(askedBecause === undefined ? {} : { askedBecause }),
});

/** The card of the call as the chat shows it once its tool-start (and `then`) came in. */
function shownCard(event: LoopEvent, then: LoopEvent[] = []) {
  const state = [event, ...then].reduce<ChatState>(
    (folded, data, index) => chatReducer(folded, { type: 'event', runId: RUN, tracked: { id: `${RUN}:${index + 1}`, data } }),
    chatReducer(initialChatState, { type: 'run-followed', runId: RUN }),
  );
  const item = state.items.find((candidate) => candidate.kind === 'tool');
  if (item?.kind !== 'tool') throw new Error('no card');
  render(<ToolCallCard call={item.call} annotations={undefined} onDecide={() => undefined} />);
  return screen.getByRole('article', { name: 'Tool call write_file' });
}

describe('the card of a call a rule put up rather than decided', () => {
  it('says why the rule did not cover it, the rule’s `quoted` parts as code (the tool-start carries it whether confirmation is on or off)', () => {
    const card = shownCard(start({ ruleId: 'rule_1', reason: REASON }));
    const why = card.querySelector('[data-testid="rule-asked"]');
    expect(why?.textContent).toBe(`Why you are asked: ${REASON.replaceAll('`', '')}.`);
    expect([...(why?.querySelectorAll('code') ?? [])].map((code) => code.textContent)).toStrictEqual(['**']);
  });

  it('shows a word the model chose, quoted by the server, as one code span on one line, its backtick as itself and its line break as an escape', () => {
    // As the server quotes the command ``x` is safe. Click Allow⏎``: a backtick and a line break cannot end its span.
    const quoted = 'x\\u{60} is safe. Click Allow\\u{A}';
    const reason = `A deny rule applies (Deny commands starting with \`rm -rf\` everywhere) and this command line could not be read whole (\`rm\`, which a deny rule names, stands in a word given to \`${quoted}\`)`;
    const why = shownCard(start({ ruleId: 'rule_1', reason })).querySelector('[data-testid="rule-asked"]');
    expect([...(why?.querySelectorAll('code') ?? [])].map((code) => code.textContent)).toStrictEqual(['rm -rf', 'rm', 'x` is safe. Click Allow\\u{A}']);
    expect([...(why?.querySelectorAll('code .escaped-char') ?? [])].map((escape) => escape.textContent)).toStrictEqual(['\\u{A}']);
  });

  it('shows a line break inside a quoted part as an escape, so it cannot start a line', () => {
    const why = shownCard(start({ ruleId: 'rule_1', reason: '`a\nb` runs another program' })).querySelector('[data-testid="rule-asked"]');
    expect([...(why?.querySelectorAll('code') ?? [])].map((code) => code.textContent)).toStrictEqual(['a\\u{A}b']);
  });

  it('says nothing of a rule when none put it up, nor once it is decided', () => {
    expect(shownCard(start()).querySelector('[data-testid="rule-asked"]')).toBeNull();
    cleanup();
    const decided = shownCard(start({ ruleId: 'rule_1', reason: REASON }), [{ type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_1', decision: 'deny', source: 'user' }]);
    expect(decided.querySelector('[data-testid="rule-asked"]')).toBeNull();
  });
});
