import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { LoopEvent, StoredMessage, ToolCallRecord } from '../lib/api-types';
import { chatReducer, initialChatState, type ChatState } from './chat-reducer';
import { ledgerRecord } from './test-ledger-record';
import { ToolCallCard } from './tool-call-card';

afterEach(cleanup);

const RUN = 'run_1';
const FORGED = 'page text [… 48213 characters cut …] more';
const NOTE = /Shortened before the model saw it/;

/** Every tool card of the chat, as the chat view renders them. */
function renderCalls(state: ChatState) {
  for (const item of state.items) if (item.kind === 'tool') render(<ToolCallCard call={item.call} annotations={undefined} onDecide={() => undefined} />);
}

function followed(events: LoopEvent[]): ChatState {
  const start = chatReducer(initialChatState, { type: 'run-followed', runId: RUN, message: 'fetch it' });
  return events.reduce((state, event, index) => chatReducer(state, { type: 'event', runId: RUN, tracked: { id: `${RUN}:${index + 1}`, data: event } }), start);
}

const callEvents = (end: Partial<Extract<LoopEvent, { type: 'tool-end' }>>): LoopEvent[] => [
  { type: 'tool-start', toolCallId: 'c1', toolName: 'web_fetch', arguments: { url: 'https://example.test/' }, approvalId: '', awaitingConfirmation: false },
  { type: 'tool-decision', toolCallId: 'c1', approvalId: '', decision: 'allow', source: 'confirmation-off' },
  { type: 'tool-end', toolCallId: 'c1', toolName: 'web_fetch', outcome: 'executed', result: FORGED, ...end },
];

function reloaded(record: Partial<ToolCallRecord>): ChatState {
  const messages: StoredMessage[] = [
    { role: 'user', content: 'fetch it' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'web_fetch', arguments: { url: 'https://example.test/' } }] },
    { role: 'tool', toolCallId: 'c1', toolName: 'web_fetch', content: FORGED },
  ];
  const row = ledgerRecord({ toolCallId: 'c1', toolName: 'web_fetch', decision: 'allow', source: 'confirmation-off', outcome: 'executed', result: FORGED, ...record });
  return chatReducer(initialChatState, { type: 'history-loaded', history: { messages, runIds: messages.map(() => row.runId), toolCalls: [row], pending: [], follow: null } });
}

describe('the note that a result was shortened', () => {
  it('is not shown for a live result whose text only contains a marker', () => {
    renderCalls(followed(callEvents({})));
    expect(screen.getByText(FORGED)).toBeTruthy();
    expect(screen.queryByText(NOTE)).toBeNull();
  });

  it('is shown, with the server’s count, for a live result its tool-end says was cut', () => {
    renderCalls(followed(callEvents({ cut: { characters: 512 } })));
    expect(screen.getByText(NOTE).textContent).toBe('Shortened before the model saw it: 512 characters in the middle were left out.');
  });

  it('after a reload, comes from the ledger row: shown with its cut, not for a row without one', () => {
    renderCalls(reloaded({ cut: { bytes: 70_000 } }));
    expect(screen.getByText(NOTE).textContent).toBe('Shortened before the model saw it: 70,000 bytes in the middle were left out.');
    cleanup();
    renderCalls(reloaded({ cut: null }));
    expect(screen.getByText(FORGED)).toBeTruthy();
    expect(screen.queryByText(NOTE)).toBeNull();
  });
});

describe('a result with hidden characters', () => {
  it('shows each as an escape and says how many there are, as on the arguments', () => {
    const result = 'weather: sunny \u202Edecided\u202C \u001b[31mred\u001b[0m \u200Bok';
    renderCalls(followed(callEvents({ result })));
    const text = document.querySelector('.result-text')!.textContent;
    expect(text).toBe('weather: sunny \\u{202E}decided\\u{202C} \\u{1B}[31mred\\u{1B}[0m \\u{200B}ok');
    expect(screen.getByTestId('result-hidden-characters').textContent).toBe('5 hidden characters shown as \\u{…}: the model reads them.');
  });
});
