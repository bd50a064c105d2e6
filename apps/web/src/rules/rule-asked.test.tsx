import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { LoopEvent, LoopEventOf } from '../lib/api-types';
import { chatReducer, initialChatState, type ChatState } from '../chat/chat-reducer';
import { ToolCallCard } from '../chat/tool-call-card';

afterEach(cleanup);

const RUN = 'run_1';
const REASON = [
  {
    text:
      'This write would make the workspace folder a Git repository, or change one (with it, the folder holds a HEAD file and objects/ and refs/ folders): ' +
      'a git command run there later, in your own shell, runs what its config names, outside any sandbox. The rule Allow writing files matching ',
  },
  { code: '**' },
  { text: ' in this workspace does not cover that' },
];
const HOSTILE = 'x` then `rm -rf /` y\nAllow this';

const start = (askedBecause?: LoopEventOf<'tool-start'>['askedBecause']): LoopEvent => ({
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
  it('says why the rule did not cover it, drawing the code parts as code (the tool-start carries it whether confirmation is on or off)', () => {
    const card = shownCard(start({ ruleId: 'rule_1', reason: REASON }));
    const why = card.querySelector('[data-testid="rule-asked"]');
    expect(why?.textContent).toBe(`Why you are asked: ${REASON.map((part) => ('code' in part ? part.code : part.text)).join('')}.`);
    expect([...(why?.querySelectorAll('code') ?? [])].map((code) => code.textContent)).toStrictEqual(['**']);
  });

  it('shows a word the model chose as one code part on one line, its backtick as itself and its line break as an escape', () => {
    const reason = [{ text: 'A deny rule applies (Deny commands starting with ' }, { code: 'rm -rf' }, { text: ' everywhere) and this command line could not be read whole (' }, { code: 'rm' }, { text: ', which a deny rule names, stands in a word given to ' }, { code: 'x` is safe. Click Allow\n' }, { text: ')' }];
    const why = shownCard(start({ ruleId: 'rule_1', reason })).querySelector('[data-testid="rule-asked"]');
    expect([...(why?.querySelectorAll('code') ?? [])].map((code) => code.textContent)).toStrictEqual(['rm -rf', 'rm', 'x` is safe. Click Allow\\u{A}']);
    expect([...(why?.querySelectorAll('code .escaped-char') ?? [])].map((escape) => escape.textContent)).toStrictEqual(['\\u{A}']);
  });

  it("shows a rule's reason as quoted text of its own on one line: its backticks make no code, its line break no line", () => {
    const reason = [{ text: 'A deny rule applies (Deny commands starting with ' }, { code: 'rm' }, { text: ' everywhere: ' }, { quote: HOSTILE }, { text: ') and this command line could not be read whole' }];
    const why = shownCard(start({ ruleId: 'rule_1', reason })).querySelector('[data-testid="rule-asked"]');
    expect([...(why?.querySelectorAll('code') ?? [])].map((code) => code.textContent)).toStrictEqual(['rm']);
    expect([...(why?.querySelectorAll('q') ?? [])].map((quote) => quote.textContent)).toStrictEqual(['x` then `rm -rf /` y\\u{A}Allow this']);
    expect(why?.textContent).not.toMatch(/\n/);
  });

  it('draws a reason stored as a sentence before reasons were typed as plain text on one line', () => {
    const why = shownCard(start({ ruleId: 'rule_1', reason: '`a\nb` runs another program' })).querySelector('[data-testid="rule-asked"]');
    expect(why?.querySelectorAll('code')).toHaveLength(0);
    expect(why?.textContent).toBe('Why you are asked: `a\\u{A}b` runs another program.');
  });

  it('says nothing of a rule when none put it up, nor once it is decided', () => {
    expect(shownCard(start()).querySelector('[data-testid="rule-asked"]')).toBeNull();
    cleanup();
    const decided = shownCard(start({ ruleId: 'rule_1', reason: REASON }), [{ type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_1', decision: 'deny', source: 'user' }]);
    expect(decided.querySelector('[data-testid="rule-asked"]')).toBeNull();
  });
});
