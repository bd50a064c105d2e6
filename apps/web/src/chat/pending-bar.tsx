import { visibleArguments } from '@airlock/core';
import { useState } from 'react';
import { SteadyButton } from '../lib/steady-button';
import { UnsteadyClickHint } from './decision-controls';
import type { ToolCallView } from './tool-call-state';

/** With several calls waiting, one place to decide them all. Each card keeps its own buttons. */
export function PendingBar({ calls, onDecideAll }: { calls: readonly ToolCallView[]; onDecideAll: (decision: 'allow' | 'deny') => void }) {
  const [ignoredClick, setIgnoredClick] = useState(false);
  if (calls.length < 2) return null;
  const waiting = calls.filter((call) => call.state.status === 'awaiting-decision');
  const decideAll = (decision: 'allow' | 'deny') => {
    setIgnoredClick(false);
    onDecideAll(decision);
  };
  const withHidden = waiting.filter((call) => visibleArguments(call.toolName, call.arguments).hiddenCount > 0).length;
  return (
    <div className="pending-bar" role="region" aria-label="Waiting tool calls">
      <span>{calls.length} tool calls are waiting for your decision.</span>
      <SteadyButton className="btn btn-allow" disabled={waiting.length === 0} onClick={() => decideAll('allow')} onUnsteadyClick={() => setIgnoredClick(true)}>
        Allow all
      </SteadyButton>
      <SteadyButton className="btn btn-deny" disabled={waiting.length === 0} onClick={() => decideAll('deny')} onUnsteadyClick={() => setIgnoredClick(true)}>
        Deny all
      </SteadyButton>
      {ignoredClick && <UnsteadyClickHint />}
      {withHidden > 0 && (
        <p className="pending-warning" role="note">
          {withHidden === 1 ? 'One of them contains hidden characters' : `${withHidden} of them contain hidden characters`}: read the marked codes on
          {withHidden === 1 ? ' its card' : ' their cards'} before you allow all.
        </p>
      )}
    </div>
  );
}
