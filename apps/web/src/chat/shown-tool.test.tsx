import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { LoopEvent, LoopEventOf, PendingApproval, StoredMessage, ToolAnnotations } from '../lib/api-types';
import { chatReducer, initialChatState, type ChatState } from './chat-reducer';
import { ledgerRecord } from './test-ledger-record';
import { ToolCallCard } from './tool-call-card';
import type { ToolCallView } from './tool-call-state';

afterEach(cleanup);

const RUN = 'run_1';
const TOOL = 'wx__get_weather';
const none: ToolAnnotations = { readOnly: false, destructive: false, executesCode: false, exactGrants: false, idempotent: false, openWorld: false };
/** The tool as tools.list said it was when the page read it: a read-only, idempotent tool. */
const listedReadOnly: ToolAnnotations = { ...none, readOnly: true, idempotent: true };

/** A call put up after the MCP server rewrote the tool: its tool-start says destructive. */
const start: LoopEventOf<'tool-start'> = {
  type: 'tool-start',
  toolCallId: 'c1',
  toolName: TOOL,
  arguments: { city: 'Paris' },
  approvalId: 'apv_1',
  awaitingConfirmation: true,
  expiresAt: null,
  tool: { source: 'mcp:wx', annotations: { ...none, destructive: true } },
};

function startedCall(event: LoopEvent): ToolCallView {
  const following: ChatState = chatReducer(initialChatState, { type: 'run-followed', runId: RUN, message: 'weather in Paris?' });
  const state = chatReducer(following, { type: 'event', runId: RUN, tracked: { id: `${RUN}:1`, data: event } });
  const item = state.items.find((candidate) => candidate.kind === 'tool');
  if (item?.kind !== 'tool') throw new Error('no card');
  return item.call;
}

function badges(): string[] {
  const card = screen.getByRole('article', { name: `Tool call ${TOOL}` });
  return [...card.querySelectorAll('.tool-card-header .badge')].map((badge) => badge.textContent ?? '');
}

describe('the tool a card shows', () => {
  it('shows the hints its tool-start carried, not those of a tool list read before the tool was rewritten', () => {
    render(<ToolCallCard call={startedCall(start)} annotations={listedReadOnly} source="mcp:wx" onDecide={() => undefined} />);
    expect(badges()).toStrictEqual(['MCP · wx', 'wx says: destructive']);
    const card = screen.getByRole('article', { name: `Tool call ${TOOL}` });
    expect(within(card).queryByText('wx says: read-only')).toBeNull();
  });

  it('says what Always allow covers from the tool-start too', () => {
    const exact: LoopEvent = { ...start, tool: { source: 'mcp:wx', annotations: { ...none, exactGrants: true } } };
    render(<ToolCallCard call={startedCall(exact)} annotations={listedReadOnly} source="mcp:wx" onDecide={() => undefined} />);
    expect(screen.getAllByText(/runs this call with these exact arguments again/).length).toBeGreaterThan(0);
    expect(screen.queryAllByText(/runs any wx__get_weather call/)).toStrictEqual([]);
  });

  it('a tool-start stored before it carried its tool falls back to the tool as listed now', () => {
    const { tool: _tool, ...older } = start;
    render(<ToolCallCard call={startedCall(older)} annotations={listedReadOnly} source="mcp:wx" onDecide={() => undefined} />);
    expect(badges()).toStrictEqual(['MCP · wx', 'wx says: read-only', 'wx says: idempotent']);
  });
});

/**
 * The chat read from the server with a call of a run the page does not follow still waiting: its card is built from
 * its ledger row (`shown`: the tool as its row says it was put up; null for a row stored before the ledger kept it).
 */
function waitingFromLedger(shown: ToolCallView['tool'] | null): ToolCallView {
  const messages: StoredMessage[] = [
    { role: 'user', content: 'weather in Paris?' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: TOOL, arguments: { city: 'Paris' } }] },
  ];
  const row = ledgerRecord({ runId: RUN, toolCallId: 'c1', toolName: TOOL, arguments: { city: 'Paris' }, approvalId: 'apv_1', executesCode: false, tool: shown ?? null });
  const pending: PendingApproval[] = [{ approvalId: 'apv_1', sessionId: 'chat_1', runId: RUN, toolCallId: 'c1', toolName: TOOL, arguments: { city: 'Paris' }, requestedAt: 1, expiresAt: null }];
  const state = chatReducer(initialChatState, { type: 'history-loaded', history: { messages, runIds: [RUN, RUN], toolCalls: [row], pending, follow: null } });
  const item = state.items.find((candidate) => candidate.kind === 'tool');
  if (item?.kind !== 'tool') throw new Error('no card');
  return item.call;
}

describe('the tool a card rebuilt from the ledger shows', () => {
  it('shows the hints its ledger row kept from when the call was put up, not those of the tool list read now', () => {
    const call = waitingFromLedger(start.tool);
    expect(call.state.status).toBe('awaiting-decision');
    render(<ToolCallCard call={call} annotations={listedReadOnly} source="mcp:wx" onDecide={() => undefined} />);
    expect(badges()).toStrictEqual(['MCP · wx', 'wx says: destructive']);
  });

  it('says what Always allow covers from the ledger row too', () => {
    render(<ToolCallCard call={waitingFromLedger({ source: 'mcp:wx', annotations: { ...none, exactGrants: true } })} annotations={listedReadOnly} source="mcp:wx" onDecide={() => undefined} />);
    expect(screen.getAllByText(/runs this call with these exact arguments again/).length).toBeGreaterThan(0);
    expect(screen.queryAllByText(/runs any wx__get_weather call/)).toStrictEqual([]);
  });

  it('a row stored before the ledger kept the tool falls back to the tool as listed now', () => {
    render(<ToolCallCard call={waitingFromLedger(null)} annotations={listedReadOnly} source="mcp:wx" onDecide={() => undefined} />);
    expect(badges()).toStrictEqual(['MCP · wx', 'wx says: read-only', 'wx says: idempotent']);
  });
});
