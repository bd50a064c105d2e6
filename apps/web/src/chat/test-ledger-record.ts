// Test support: a ledger row as the server sends it, undecided and not run unless `fields` say otherwise.
import type { ToolCallRecord } from '../lib/api-types';

export function ledgerRecord(fields: Partial<ToolCallRecord> = {}): ToolCallRecord {
  return {
    runId: 'run_0',
    sessionId: 'chat_1',
    toolCallId: 'c1',
    toolName: 'terminal',
    arguments: { command: 'ls' },
    editedArguments: null,
    approvalId: '',
    executesCode: true,
    toolVersion: 'v1',
    exactGrantsOnly: false,
    askedBecause: null,
    tool: null,
    requestedAt: 1,
    expiresAt: null,
    decision: null,
    source: null,
    reason: null,
    decidedByGrant: null,
    decidedByRule: null,
    decidedByRuleText: null,
    decidedAt: null,
    connectionId: null,
    clientLabel: null,
    startedAt: null,
    outcome: null,
    result: null,
    cut: null,
    endedAt: null,
    ...fields,
  };
}
