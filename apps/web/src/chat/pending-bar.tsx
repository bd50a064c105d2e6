import { blankRunsOfArguments, EDGE_BLANK_NOTATIONS, FOLDED_BLANK_NOTATIONS, visibleArguments, type DeclaredArguments } from '@airlock/core';
import { useState } from 'react';
import type { ToolInfo } from '../lib/api-types';
import { SteadyButton, type UnsteadyReason } from '../lib/steady-button';
import { UnsteadyClickHint } from './decision-controls';
import { useHeldEdits } from './held-edits';
import type { ToolCallView } from './tool-call-state';

export interface PendingBarProps {
  calls: readonly ToolCallView[];
  /**
   * The tools as listed (tools.list), whose schemas say which argument names a call's tool does not declare when its
   * tool-start does not say what the tool declared as it was put up (stored before it did).
   */
  tools: ReadonlyMap<string, ToolInfo>;
  /**
   * Decides `waiting`, the calls the bar showed as waiting when it was clicked: never one that came after. An allow
   * leaves out those a deny rule asked about, allowed only on their cards.
   */
  onDecideAll: (decision: 'allow' | 'deny', waiting: readonly ToolCallView[]) => void;
}

/**
 * With several calls waiting, one place to decide them all. Each card keeps its own buttons. Its buttons re-arm
 * whenever the set of waiting calls changes, even to one of the same size: one call decided in another tab and
 * another put up in its place leave the bar reading the same, and a click meant for the calls seen before would
 * decide one nobody saw.
 */
export function PendingBar({ calls, tools, onDecideAll }: PendingBarProps) {
  const [ignoredClick, setIgnoredClick] = useState<UnsteadyReason | null>(null);
  /** The calls the last Allow all left for their cards: said while they still wait. */
  const [leftByAllowAll, setLeftByAllowAll] = useState<readonly string[]>([]);
  const heldEdits = useHeldEdits();
  const stillLeft = calls.filter((call) => call.state.status === 'awaiting-decision' && leftByAllowAll.includes(call.key)).length;
  if (calls.length < 2) return stillLeft === 0 ? null : <LeftNote count={stillLeft} />;
  const waiting = calls.filter((call) => call.state.status === 'awaiting-decision');
  // Allow all would run a call being edited as the model proposed it, dropping the edit.
  const editing = waiting.some((call) => call.state.status === 'awaiting-decision' && heldEdits.has(call.state.approvalId));
  // A call a deny rule asked about is allowed only on its card, where it says why it is asked: Allow all leaves it.
  const asked = waiting.filter((call) => call.exactGrantsOnly === true);
  const askedByDenyRule = asked.length;
  // Which calls an Allow all leaves out is part of what it decides: a change there re-arms it too.
  const decides = JSON.stringify(waiting.map((call) => (call.exactGrantsOnly === true ? `${call.key} left` : call.key)).sort());
  const decideAll = (decision: 'allow' | 'deny') => {
    setIgnoredClick(null);
    if (decision === 'deny') {
      setLeftByAllowAll([]);
      onDecideAll('deny', waiting);
      return;
    }
    setLeftByAllowAll(asked.map((call) => call.key));
    onDecideAll('allow', waiting.filter((call) => call.exactGrantsOnly !== true));
  };
  const shown = waiting.map((call) => visibleArguments(call.toolName, call.arguments, declaredOf(call, tools)));
  const withHidden = shown.filter((call) => call.hiddenCount > call.nonAsciiCount).length;
  const withNonAscii = shown.filter((call) => call.nonAsciiCount > 0).length;
  const withUndeclared = shown.filter((call) => call.undeclaredCount > 0).length;
  const withUnchecked = shown.filter((call) => call.undeclaredCount === 0 && call.uncheckedCount > 0).length;
  const withUnshownDefaults = waiting.filter((call) => call.tool?.unshownDefaults !== undefined).length;
  const runs = shown.map((call) => blankRunsOfArguments(call));
  const withFolds = runs.filter((found) => found.folded > 0).length;
  const withEdges = runs.filter((found) => found.edges > 0 || found.afterBackslash > 0).length;
  const [spaces, tabs] = FOLDED_BLANK_NOTATIONS;
  const [space, tab] = EDGE_BLANK_NOTATIONS;
  return (
    <div className="pending-bar" role="region" aria-label="Waiting tool calls">
      <span>{calls.length} tool calls are waiting for your decision.</span>
      <SteadyButton className="btn btn-allow" disabled={waiting.length === askedByDenyRule || editing} decides={decides} onClick={() => decideAll('allow')} onUnsteadyClick={setIgnoredClick}>
        Allow all
      </SteadyButton>
      <SteadyButton className="btn btn-deny" disabled={waiting.length === 0} decides={decides} onClick={() => decideAll('deny')} onUnsteadyClick={setIgnoredClick}>
        Deny all
      </SteadyButton>
      {ignoredClick !== null && ignoredClick !== 'changed' && <UnsteadyClickHint reason={ignoredClick} />}
      {ignoredClick === 'changed' && (
        <p className="problem" role="status">
          Nothing was decided: the waiting calls changed as you clicked. Look at them again, then click again if you meant it.
        </p>
      )}
      {editing && (
        <p className="detail" role="note">
          Allow all is off while you edit one of them: allow your edit on its card, or cancel it.
        </p>
      )}
      {askedByDenyRule > 0 && (
        <p className="detail" role="note">
          {askedByDeny(askedByDenyRule, waiting.length)}
        </p>
      )}
      {stillLeft > 0 && <LeftNote count={stillLeft} />}
      {withUndeclared > 0 && (
        <p className="undeclared-warning" role="note">
          {undeclaredNote(withUndeclared)}
        </p>
      )}
      {withUnchecked > 0 && (
        <p className="undeclared-warning" role="note">
          {uncheckedNote(withUnchecked)}
        </p>
      )}
      {withUnshownDefaults > 0 && (
        <p className="unshown-defaults-warning" role="note">
          {withUnshownDefaults === 1
            ? 'One of them may run with defaults its card does not show (said on its card). Read its card before you allow all.'
            : `${withUnshownDefaults} of them may run with defaults their cards do not show (said on their cards). Read their cards before you allow all.`}
        </p>
      )}
      {(withHidden > 0 || withNonAscii > 0 || withFolds > 0 || withEdges > 0) && (
        <p className="pending-warning" role="note">
          {withHidden > 0 && `${someOf(withHidden, 'hidden characters')}: read the marked codes on ${withHidden === 1 ? 'its card' : 'their cards'} before you allow all.`}
          {withHidden > 0 && withNonAscii > 0 && ' '}
          {withNonAscii > 0 && `${someOf(withNonAscii, `characters outside ASCII in ${withNonAscii === 1 ? 'its' : 'their'} code`)}, shown as marked codes: read ${withNonAscii === 1 ? 'its card' : 'their cards'} before you allow all.`}
          {(withHidden > 0 || withNonAscii > 0) && withFolds > 0 && ' '}
          {withFolds > 0 && (
            <>
              {someOf(withFolds, 'long runs of spaces or tabs')}, each shown as one <code>{spaces}</code> or <code>{tabs}</code>: read {withFolds === 1 ? 'its card' : 'their cards'} before you
              allow all.
            </>
          )}
          {(withHidden > 0 || withNonAscii > 0 || withFolds > 0) && withEdges > 0 && ' '}
          {withEdges > 0 && (
            <>
              {someOf(withEdges, 'spaces or tabs at the end of a line or around a one-line value')}, each shown as <code>{space}</code> or <code>{tab}</code>: read{' '}
              {withEdges === 1 ? 'its card' : 'their cards'} before you allow all.
            </>
          )}
        </p>
      )}
    </div>
  );
}

/** What Allow all does with calls a deny rule asked about among the waiting ones. */
function askedByDeny(asked: number, waiting: number): string {
  if (asked === waiting) {
    return asked === 1
      ? 'Allow all is off: a deny rule asked about it (its card says why). Read its card and decide it there.'
      : `Allow all is off: a deny rule asked about all ${asked} of them (their cards say why). Read their cards and decide them there.`;
  }
  return asked === 1
    ? 'Allow all leaves out the one a deny rule asked about (its card says why): read its card and decide it there.'
    : `Allow all leaves out the ${asked} a deny rule asked about (their cards say why): read their cards and decide them there.`;
}

/** After an Allow all, the calls it left out, while they still wait. */
function LeftNote({ count }: { count: number }) {
  return (
    <p className="detail" role="status" aria-label="Left by Allow all">
      {count === 1
        ? 'Allow all left one call waiting: a deny rule asked about it. Read its card and decide it there.'
        : `Allow all left ${count} calls waiting: a deny rule asked about them. Read their cards and decide them there.`}
    </p>
  );
}

/** Some of the waiting calls have a name their tool's schema does not declare, as their cards mark it. */
function undeclaredNote(count: number): string {
  return count === 1
    ? 'One of them has an argument that is not a parameter of its tool (marked on its card): the tool may ignore it and run with its own default instead. Read its card before you allow all.'
    : `${count} of them have arguments that are not parameters of their tools (marked on their cards): the tools may ignore them and run with their own defaults instead. Read their cards before you allow all.`;
}

/** Some of the waiting calls have names that could not be checked against their tools' parameters. */
function uncheckedNote(count: number): string {
  return count === 1
    ? 'One of them has an argument whose name could not be checked against its tool (marked on its card): count it as not a parameter, which the tool may ignore. Read its card before you allow all.'
    : `${count} of them have arguments whose names could not be checked against their tools (marked on their cards): count them as not parameters, which the tools may ignore. Read their cards before you allow all.`;
}

/**
 * What a waiting call's argument names are checked against: what its tool declared as the call was put up, else
 * (a tool-start stored before it said) the tool as listed, else nothing known.
 */
function declaredOf(call: ToolCallView, tools: ReadonlyMap<string, ToolInfo>): { declared: DeclaredArguments } | { schema: ToolInfo['inputSchema'] } {
  if (call.tool?.declared !== undefined) return { declared: call.tool.declared };
  const listed = tools.get(call.toolName);
  return listed === undefined ? { declared: NOT_LISTED } : { schema: listed.inputSchema };
}

const NOT_LISTED: DeclaredArguments = { unknown: 'not-listed' };

/** `One of them contains …` / `N of them contain …`. */
function someOf(count: number, what: string): string {
  return count === 1 ? `One of them contains ${what}` : `${count} of them contain ${what}`;
}
