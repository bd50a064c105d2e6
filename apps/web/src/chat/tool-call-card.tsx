import { toVisibleText, unshownDefaultsNote, type DeclaredArguments } from '@airlock/core';
import { useContext, useEffect, useMemo, useRef, useState, type FocusEvent, type KeyboardEvent, type ReactNode } from 'react';
import type { ToolArguments as Args, ToolAnnotations } from '../lib/api-types';
import { ArgumentEditor, draftFits } from './argument-editor';
import type { JsonSchema } from './argument-form';
import { FocusComposerContext } from './current-session';
import { DecisionControls } from './decision-controls';
import { editedGrantLabel, grantScope } from './grant-scope';
import { HeldEditsContext } from './held-edits';
import type { DecisionRequest } from './send-decision';
import { ToolArguments, VisibleTextView } from './tool-arguments';
import { toolBadges } from './tool-badges';
import { ToolResult } from './tool-result';
import { WaitingDraftsContext, type EditDraft, type WaitingDraft } from './waiting-drafts';
import { RuleAsked } from '../rules/rule-asked';
import { RuleProvenance } from '../rules/rule-provenance';
import { shownWhole } from '../lib/shown-whole';
import { behindModal } from '../lib/behind-modal';
import { SteadyButton } from '../lib/steady-button';
import { isTextEntry } from '../waiting/focus-approval';
import { useCallDecider, type DecidedBy, type TabDecision, type TabDecisionOutcome } from './tab-decisions';
import { isUndecided, type Allower, type Approver, type ToolCallState, type ToolCallStatus, type ToolCallView } from './tool-call-state';

type Tone = 'waiting' | 'busy' | 'ok' | 'bad' | 'muted';

const CARD_KEYS = 'Keys on this card: a Allow · d Deny · e Edit… · Shift+A Always allow… · r Deny with reason… (any other letter goes to the message box)';
const CARD_KEYS_EDITING = 'Keys on this card: d Deny · r Deny with reason… (Allow edited, in the editor, runs your change; any other letter goes to the message box)';

/**
 * How long a key typed on a card waits for the next key before it acts. A key in that time means the person was
 * typing (a message that starts with "a", "explain…", "run it…", or "Also…" after Shift+A): the key is dropped, and
 * the typing goes to the message box.
 */
export const KEYED_DECISION_DELAY_MS = 800;

/**
 * The card's keys. Those that decide, and those that open a form that takes the focus (the editor, the reason box:
 * the rest of a message would be typed into it), wait KEYED_DECISION_DELAY_MS. Shift+A's question opens at once:
 * it takes no focus, and its `y` waits in turn.
 */
type CardKey = { waits: true; label: string; act: () => void } | { waits: false; act: () => void };

/** Every state has a label and a tone: adding a state without one does not compile. */
export const statusPresentation: Record<ToolCallStatus, { label: string; tone: Tone }> = {
  'awaiting-decision': { label: 'Waiting for your decision', tone: 'waiting' },
  deciding: { label: 'Sending your decision…', tone: 'waiting' },
  allowed: { label: 'Allowed, waiting its turn', tone: 'muted' },
  running: { label: 'Running', tone: 'busy' },
  done: { label: 'Done', tone: 'ok' },
  error: { label: 'Failed', tone: 'bad' },
  denied: { label: 'Denied', tone: 'bad' },
  'timed-out': { label: 'Timed out waiting for a decision', tone: 'muted' },
  cancelled: { label: 'Cancelled', tone: 'muted' },
  disabled: { label: 'Not available', tone: 'muted' },
  duplicate: { label: 'Skipped: repeated call', tone: 'muted' },
  interrupted: { label: 'Interrupted', tone: 'bad' },
  recorded: { label: 'Finished', tone: 'muted' },
  unreadable: { label: 'Record damaged', tone: 'bad' },
};

export interface ToolCallCardProps {
  call: ToolCallView;
  /**
   * From tools.list; undefined when the server no longer lists the tool. Shown only for a call whose tool-start or
   * ledger row did not say what its tool was (stored before they did): the list is read now and then, and an MCP
   * server can rewrite a tool in between.
   */
  annotations: ToolAnnotations | undefined;
  /** Where the tool comes from ("builtin", "mcp:<server>"), when known: from tools.list, as `annotations`. */
  source?: string | undefined;
  /**
   * The tool's JSON Schema from tools.list, for the argument editor (undefined when not known: raw JSON only), and
   * for marking undeclared names only when the call's tool does not say what it declared (stored before it did).
   */
  inputSchema?: JsonSchema | undefined;
  onDecide: (call: ToolCallView, request: DecisionRequest) => void;
}

export function ToolCallCard({ call, annotations: listedAnnotations, source: listedSource, inputSchema, onDecide }: ToolCallCardProps) {
  const { state } = call;
  // The tool as the call was put up, which an allow covers (a decision on a tool rewritten since is refused).
  const annotations = call.tool?.annotations ?? listedAnnotations;
  const source = call.tool?.source ?? listedSource;
  const presentation = statusPresentation[state.status];
  const result = resultOf(state);
  const [confirmAlways, setConfirmAlways] = useState(false);
  const [reasonRequest, setReasonRequest] = useState(0);
  const drafts = useContext(WaitingDraftsContext);
  const undecided = state.status === 'awaiting-decision' || state.status === 'deciding';
  const approvalId = undecided ? state.approvalId : null;
  // A person's decision the card shows was this tab's, another tab's of this browser, or another client's: the run's
  // event does not say.
  const { mine, by, seesOtherTabs } = useCallDecider(call.approvalId ?? approvalId ?? undefined);
  const words = deciderWords(seesOtherTabs);
  /**
   * What the person typed on this call's card before it was last shown (a reload, another chat and back), while it
   * is still there: an edit cancelled or a reason emptied is gone, and never comes back.
   */
  const [restored, setRestored] = useState<WaitingDraft>(() => (approvalId === null ? undefined : drafts.read(approvalId)) ?? {});
  const draft = useRef<WaitingDraft>(restored);
  const keepDraft = (change: { edit: EditDraft | null } | { reason: string }) => {
    const next = { ...draft.current, ...change };
    const kept: WaitingDraft = {
      ...(next.edit === null || next.edit === undefined ? {} : { edit: next.edit }),
      ...(next.reason === undefined || next.reason === '' ? {} : { reason: next.reason }),
    };
    draft.current = kept;
    setRestored((before) => stillThere(before, kept));
    if (undecided) drafts.save(state.approvalId, kept, state.expiresAt);
  };
  const [editing, setEditing] = useState(restored.edit !== undefined);
  /** The open editor holds a change: no allow but its own may run the call (it would run the proposal). */
  const [editChanged, setEditChanged] = useState(restored.edit !== undefined);
  /**
   * A restored form edit waits for the tool's schema (tools.list can answer after the card shows): opened without
   * it, the editor would hold the proposal and the edit would be lost. Kept, and Allow kept off, until it fits.
   */
  const [editWaits, setEditWaits] = useState(restored.edit !== undefined && !draftFits(inputSchema, call.arguments, restored.edit));
  if (editWaits && restored.edit !== undefined && draftFits(inputSchema, call.arguments, restored.edit)) setEditWaits(false);
  const editHeld = editing && editChanged;
  const heldEdits = useContext(HeldEditsContext);
  const focusComposer = useContext(FocusComposerContext);
  const card = useRef<HTMLElement>(null);
  /** A decision typed on the card, sent when no other key follows within KEYED_DECISION_DELAY_MS. */
  const [keyed, setKeyed] = useState<string | null>(null);
  const keyedTimer = useRef(0);
  /** The letters the card took as its keys and has not acted on: a letter that follows gives them to the message box. */
  const taken = useRef('');
  const dropKeyed = () => {
    window.clearTimeout(keyedTimer.current);
    setKeyed(null);
  };
  const waitingForDecision = state.status === 'awaiting-decision';
  useEffect(() => {
    if (!editHeld || approvalId === null) return;
    return heldEdits.hold(approvalId);
  }, [editHeld, approvalId, heldEdits]);
  /** The call's last state while undecided: whether this tab was sending a decision when the call was decided. */
  const lastUndecided = useRef<Extract<ToolCallState, { status: 'awaiting-decision' | 'deciding' }> | null>(null);
  /** The call was decided elsewhere while the editor held a change: the editor closes, and the card says the edit went unused. */
  const [editDropped, setEditDropped] = useState(false);
  useEffect(() => {
    if (isUndecided(state)) {
      lastUndecided.current = state;
      return;
    }
    if (lastUndecided.current === null) return;
    if (editHeld && editWentUnused(lastUndecided.current, state, call.editedArguments)) setEditDropped(true);
    // Decided, here or elsewhere, or no longer waiting: nothing typed on it can be sent any more.
    drafts.drop(lastUndecided.current.approvalId);
    lastUndecided.current = null;
  }, [state, editHeld, call.editedArguments, drafts]);
  const shownName = useMemo(() => toVisibleText(call.toolName, { singleLine: true }), [call.toolName]);
  const startEditing = () => {
    setConfirmAlways(false);
    setEditing(true);
  };
  // Decided elsewhere (another tab, the list): a typed decision still pending is dropped; so is one on a card that goes,
  // and one that would run the proposal once the editor holds a change.
  useEffect(() => {
    if (!waitingForDecision || editHeld) {
      dropKeyed();
      taken.current = '';
    }
  }, [waitingForDecision, editHeld]);
  useEffect(() => () => window.clearTimeout(keyedTimer.current), []);
  const stopEditing = () => {
    keepDraft({ edit: null });
    setEditWaits(false);
    setEditing(false);
    setEditChanged(false);
    card.current?.focus();
  };
  // Only when the card itself has focus: typing in its reason box must not decide anything.
  // Keys typed while the card has focus can be a person typing a message who thinks the message box has it (the app
  // opens with the oldest waiting card in focus; a click on the card's text focuses it). So a key that decides is sent
  // only when no other key follows it soon (the key then goes, with what follows, to the message box), any letter that is
  // not one of the card's keys moves the focus, with the letter, to the message box, and Shift+A's confirmation is its
  // own key (y), never a space or Enter on a button.
  // A letter typed on one of the card's buttons (reached with Tab from the card) goes to the message box too.
  const onKeyDown = (event: KeyboardEvent<HTMLElement>) => {
    if (state.status !== 'awaiting-decision' || event.altKey || event.ctrlKey || event.metaKey) return;
    // A card an open dialog covers is not the one the person is looking at (the page behind is inert as well).
    if (behindModal(event.currentTarget)) return;
    if (event.target !== event.currentTarget) {
      if (event.key !== ' ' && !isTextEntry(event.target as Element)) typing(event);
      return;
    }
    if (keyed !== null) {
      dropKeyed();
      if (event.key === 'Escape') {
        event.preventDefault();
        taken.current = '';
      } else typing(event);
      return;
    }
    if (event.repeat) return;
    if (event.key === 'Escape' && confirmAlways) {
      event.preventDefault();
      closeConfirm();
      return;
    }
    const decide = (request: DecisionRequest) => () => {
      setConfirmAlways(false);
      onDecide(call, request);
    };
    // While the editor holds a change, a or Shift+A would run the proposal and drop the edit: they do nothing.
    const nothing: CardKey = { waits: false, act: () => undefined };
    const keys: Record<string, CardKey> = confirmAlways
      ? { y: editHeld ? nothing : { waits: true, label: 'Always allowing', act: decide({ decision: 'allow', always: true }) } }
      : {
          a: editHeld ? nothing : { waits: true, label: 'Allowing', act: decide({ decision: 'allow' }) },
          d: { waits: true, label: 'Denying', act: decide({ decision: 'deny' }) },
          A: editHeld ? nothing : { waits: false, act: () => setConfirmAlways(true) },
          e: { waits: true, label: 'Opening the editor', act: startEditing },
          r: { waits: true, label: 'Opening the reason box', act: () => setReasonRequest((count) => count + 1) },
        };
    const key = Object.hasOwn(keys, event.key) ? keys[event.key] : undefined;
    if (key === undefined) {
      typing(event);
      return;
    }
    event.preventDefault();
    taken.current += event.key;
    // A card keeps the focus when the person scrolls away to read another: a key read as this card's would decide a
    // call they cannot see. It brings the card into view; the key works once it is there.
    const buttons = card.current?.querySelector('.decision-buttons');
    if (buttons instanceof HTMLElement && !shownWhole(buttons)) {
      buttons.scrollIntoView({ block: 'nearest' });
      return;
    }
    if (!key.waits) {
      key.act();
      return;
    }
    keyedTimer.current = window.setTimeout(() => {
      setKeyed(null);
      taken.current = '';
      key.act();
    }, KEYED_DECISION_DELAY_MS);
    setKeyed(key.label);
  };
  /**
   * A printable key that is no decision: the person is typing. The letters the card took before it ("a" of "also",
   * Shift+A of "Always"), then it and what follows, go to the message box. A key with no character (Shift before a
   * capital) keeps them for the next.
   */
  const typing = (event: KeyboardEvent<HTMLElement>) => {
    if ([...event.key].length !== 1) return;
    setConfirmAlways(false);
    const typed = taken.current;
    taken.current = '';
    // Moved during keydown, the focus takes the key's character with it (not prevented), after the letters taken.
    focusComposer?.(typed);
  };
  /**
   * The focus leaving the card stops a key's decision not yet sent: keys typed elsewhere (the message box the person
   * clicked into) never reach the card to stop it. Left for another place of the page, it closes the "Always allow"
   * question too: the person turned to something else, and a `y` typed once the focus comes back (a click on the
   * card's text, Alt+N) would grant. Another window taking the focus leaves the question as it was.
   */
  const onBlur = (event: FocusEvent<HTMLElement>) => {
    if (event.relatedTarget instanceof Node && event.currentTarget.contains(event.relatedTarget)) return;
    dropKeyed();
    taken.current = '';
    if (event.relatedTarget !== null || document.hasFocus()) setConfirmAlways(false);
  };
  const closeConfirm = () => {
    taken.current = '';
    setConfirmAlways(false);
  };
  return (
    <article
      ref={card}
      className="tool-card"
      data-status={state.status}
      data-tone={presentation.tone}
      data-approval-id={undecided ? state.approvalId : undefined}
      tabIndex={undecided ? 0 : undefined}
      onKeyDown={undecided ? onKeyDown : undefined}
      onBlur={undecided ? onBlur : undefined}
      aria-label={`Tool call ${call.toolName}`}
    >
      <header className="tool-card-header">
        <code className="tool-name">
          <VisibleTextView text={shownName} />
        </code>
        {toolBadges(call.toolName, source, annotations).map((badge) => (
          <span key={badge.label} className={`badge badge-${badge.tone}`} title={badge.title}>
            {badge.label}
          </span>
        ))}
        <span className={`status status-${presentation.tone}`} data-testid="tool-status">
          {presentation.label}
        </span>
      </header>
      {call.editedArguments === undefined ? (
        <ToolArguments toolName={call.toolName} args={call.arguments} declared={call.tool?.declared} inputSchema={inputSchema} />
      ) : (
        <EditedArguments toolName={call.toolName} proposed={call.arguments} edited={call.editedArguments} status={state.status} editedBy={words.edited[by]} declared={call.tool?.declared} inputSchema={inputSchema} />
      )}
      {call.tool?.unshownDefaults !== undefined && (
        <p className="unshown-defaults-warning" role="note">
          {unshownDefaultsNote(call.tool.unshownDefaults)}
        </p>
      )}
      <StatusDetail state={state} by={by} words={words} />
      {!undecided && <NotAppliedNote mine={mine} by={by} words={words} />}
      {!undecided && call.alwaysNotSaved !== undefined && (
        <p className="detail" role="note">
          Allowed this once: “Always allow” could not be saved ({call.alwaysNotSaved}), so a call like this one will be asked again.
        </p>
      )}
      {call.resultUnknownToModel === true && (
        <p className="detail" role="note">
          {RESULT_UNKNOWN_TO_MODEL}
        </p>
      )}
      {undecided && call.askedBecause !== undefined && <RuleAsked asked={call.askedBecause} />}
      {editDropped && (
        <p className="problem" role="alert">
          {EDIT_DROPPED}
        </p>
      )}
      {undecided && <RestoredDraftNote draft={editWaits ? { ...restored, edit: undefined } : restored} />}
      {(state.status === 'awaiting-decision' || state.status === 'deciding') && (
        <DecisionControls
          toolName={call.toolName}
          state={state}
          annotations={annotations}
          onDecide={(request) => onDecide(call, request)}
          reasonRequest={reasonRequest}
          editing={editing}
          editHeld={editHeld}
          onEdit={() => (editing ? stopEditing() : startEditing())}
          reasonDraft={restored.reason}
          onReasonChange={(reason) => keepDraft({ reason })}
          decidedWhere={by === 'another-tab' ? 'in another tab' : by === 'elsewhere' ? words.elsewhere : 'in another tab or client'}
        />
      )}
      {undecided && editing && editWaits && <WaitingEditNote busy={state.status === 'deciding'} onCancel={stopEditing} />}
      {undecided && editing && !editWaits && (
        <ArgumentEditor
          toolName={call.toolName}
          schema={inputSchema}
          declared={call.tool?.declared}
          proposed={call.arguments}
          busy={state.status === 'deciding'}
          serverError={state.status === 'awaiting-decision' && state.problem?.kind === 'invalid-arguments' ? state.problem.message : null}
          alwaysScope={grantScope(call.toolName, annotations)}
          alwaysLabel={editedGrantLabel(call.toolName, annotations)}
          onAllow={(args, always) => onDecide(call, { decision: 'allow', arguments: args, ...(always ? { always: true } : {}) })}
          onCancel={stopEditing}
          onHeldChange={setEditChanged}
          draft={restored.edit}
          onDraftChange={(edit) => keepDraft({ edit })}
        />
      )}
      {undecided && (
        <p className="key-hint" role="status">
          {keyed !== null ? `${keyed}… any key stops it` : editHeld ? CARD_KEYS_EDITING : CARD_KEYS}
        </p>
      )}
      {state.status === 'awaiting-decision' && confirmAlways && (
        <div className="confirm-always" role="group" aria-label={`Confirm Always allow ${call.toolName}`}>
          <p>{grantScope(call.toolName, annotations)}</p>
          <SteadyButton className="btn btn-allow" disabled={editHeld} onClick={() => onDecide(call, { decision: 'allow', always: true })}>
            Yes, always allow
          </SteadyButton>
          <button type="button" className="btn" onClick={closeConfirm}>
            Cancel
          </button>
          <span className="key-hint">y to confirm · Esc to cancel</span>
        </div>
      )}
      {result !== null && <ToolResult result={result} cut={call.cut} label={ranTool(state.status) ? 'Result' : 'Told the model'} />}
    </article>
  );
}

/** The parts of `restored` the person has not since dropped from `kept`; `restored` itself when none were. */
function stillThere(restored: WaitingDraft, kept: WaitingDraft): WaitingDraft {
  const editGone = restored.edit !== undefined && kept.edit === undefined;
  const reasonGone = restored.reason !== undefined && kept.reason === undefined;
  if (!editGone && !reasonGone) return restored;
  return { ...(editGone || restored.edit === undefined ? {} : { edit: restored.edit }), ...(reasonGone || restored.reason === undefined ? {} : { reason: restored.reason }) };
}

/**
 * Said on a card that opened with what the person had typed on it and not sent, for what was put back: nothing of it
 * was sent by showing it again.
 */
function RestoredDraftNote({ draft }: { draft: WaitingDraft }) {
  const what = [draft.edit === undefined ? null : 'your edit of the arguments', draft.reason === undefined ? null : 'your deny reason'].filter((part) => part !== null);
  if (what.length === 0) return null;
  return (
    <p className="detail restored-draft" role="note">
      Restored draft: {what.join(' and ')}, as you left {what.length === 1 ? 'it' : 'them'} before this card was last shown. Nothing has been sent yet.
    </p>
  );
}

/** In place of the editor while a restored form edit waits for the tool's schema. */
function WaitingEditNote({ busy, onCancel }: { busy: boolean; onCancel: () => void }) {
  return (
    <div className="detail restored-draft" role="note">
      <p>
        Your edit of the arguments, kept from before this card was last shown, goes back into its form once the server lists this tool. Nothing has been
        sent yet.
      </p>
      <button type="button" className="btn" onClick={onCancel} disabled={busy}>
        Cancel editing
      </button>
    </div>
  );
}

const EDIT_DROPPED = 'This call was decided elsewhere, perhaps in another tab, before your edit was sent: your edit was not used.';

/**
 * Whether an edit the editor held when the call was decided went unused: the call was decided while this tab sent
 * nothing (another tab, the waiting list), or while it sent the edit, which came too late (the call holds no edit).
 * A deny this tab sent, and a timeout or a stop the card shows for itself, say nothing more.
 */
function editWentUnused(before: ToolCallState, now: ToolCallState, editedArguments: Args | undefined): boolean {
  if (now.status === 'timed-out' || now.status === 'cancelled') return false;
  if (before.status !== 'deciding') return true;
  return before.decision === 'allow' && editedArguments === undefined;
}

/** What the edited arguments are to the call, by where it is now. */
const editedLabel: Record<ToolCallStatus, string> = {
  'awaiting-decision': 'Edited to',
  deciding: 'Will run with',
  allowed: 'Will run with',
  running: 'Running with',
  done: 'Ran with',
  error: 'Ran with',
  interrupted: 'Ran with',
  recorded: 'Ran with',
  unreadable: 'Edited to',
  denied: 'Edited to (not run)',
  'timed-out': 'Edited to (not run)',
  cancelled: 'Edited to (not run)',
  disabled: 'Edited to (not run)',
  duplicate: 'Edited to (not run)',
};

/** Both versions of a call the person edited before allowing: what the model proposed, struck, and what ran. */
function EditedArguments({ toolName, proposed, edited, status, editedBy, declared, inputSchema }: { toolName: string; proposed: Args; edited: Args; status: ToolCallStatus; editedBy: string; declared: DeclaredArguments | undefined; inputSchema: JsonSchema | undefined }) {
  return (
    <div className="arguments-versions">
      <div className="arguments-version arguments-proposed" role="group" aria-label="Proposed arguments">
        <div className="version-label">Proposed by the model</div>
        <ToolArguments toolName={toolName} args={proposed} declared={declared} inputSchema={inputSchema} />
      </div>
      <div className="arguments-version arguments-edited" role="group" aria-label="Edited arguments">
        <div className="version-label">
          {editedLabel[status]} · {editedBy}
        </div>
        <ToolArguments toolName={toolName} args={edited} declared={declared} inputSchema={inputSchema} />
      </div>
    </div>
  );
}

/** How a card names who made the person's decision it shows, by who this browser knows made it. */
interface DeciderWords {
  /** Where a decision this browser did not send was made: with no storage shared by tabs, it may be another tab. */
  elsewhere: string;
  /** A person's allow of a call waiting its turn. */
  allowed: Record<DecidedBy, string>;
  /** A person's allow of a call running or done; nothing to add when it was this tab's. */
  ran: Record<DecidedBy, string | null>;
  /** Before a person's deny reason. */
  reason: Record<DecidedBy, string>;
  /** After what the arguments were edited to. */
  edited: Record<DecidedBy, string>;
}

function deciderWords(seesOtherTabs: boolean): DeciderWords {
  const elsewhere = seesOtherTabs ? 'in another browser or client' : 'in another tab or client';
  // A decision this browser has no record of may also be its own from before a restart: each start serves the page
  // from a new origin, whose storage holds none of the former one's records.
  const unrecorded = seesOtherTabs ? `${elsewhere}, or before the server restarted` : elsewhere;
  return {
    elsewhere,
    allowed: {
      you: `You allowed it. ${WAITS_ITS_TURN}`,
      'another-tab': `You allowed it in another tab. ${WAITS_ITS_TURN}`,
      elsewhere: `Allowed ${unrecorded}. ${WAITS_ITS_TURN}`,
      unknown: `Allowed. ${WAITS_ITS_TURN}`,
    },
    ran: { you: null, 'another-tab': 'You allowed it in another tab.', elsewhere: `Allowed ${unrecorded}.`, unknown: null },
    reason: { you: 'Your reason', 'another-tab': 'Your reason, given in another tab', elsewhere: `Reason given ${unrecorded}`, unknown: 'Reason' },
    edited: { you: 'edited by you', 'another-tab': 'edited by you in another tab', elsewhere: `edited ${unrecorded}`, unknown: 'edited' },
  };
}

/**
 * Said on a decided card when this tab's own decision on it did not take: the call was decided first elsewhere (the
 * card shows that decision), the server refused it, or no clear answer came to it.
 */
function NotAppliedNote({ mine, by, words }: { mine: TabDecision | undefined; by: DecidedBy; words: DeciderWords }) {
  if (mine === undefined) return null;
  const first = by === 'another-tab' ? 'in another tab' : by === 'elsewhere' ? words.elsewhere : 'in another tab or client';
  const maybeYours = by === 'another-tab' ? 'the decision shown was made in another tab' : `the decision shown may be yours or one made ${words.elsewhere}`;
  const notes: Record<TabDecisionOutcome, string | null> = {
    sent: null,
    accepted: null,
    superseded: `Your ${mine.decision} was not applied: this call was decided ${first} first.`,
    refused: `Your ${mine.decision} was refused by the server and not applied.`,
    failed: `The server failed while taking your ${mine.decision}: ${maybeYours}.`,
    unanswered: `No answer came to your ${mine.decision}: ${maybeYours}.`,
  };
  const note = notes[mine.outcome];
  return note === null ? null : (
    <p className="detail" role="note">
      {note}
    </p>
  );
}

const RESULT_UNKNOWN_TO_MODEL =
  "The model was not given this call's result (its stored message is damaged or missing): it was told the call has no recorded result and may have done part or all of its work.";

const UNREADABLE_DETAIL = 'Its ledger row is damaged and was left out: how it was decided, and whether it ran, are not known.';

function StatusDetail({ state, by, words }: { state: ToolCallState; by: DecidedBy; words: DeciderWords }): ReactNode {
  switch (state.status) {
    case 'awaiting-decision':
    case 'deciding':
    case 'error':
    case 'cancelled':
    case 'recorded':
      return null;
    case 'unreadable':
      return <p className="detail">{UNREADABLE_DETAIL}</p>;
    case 'allowed':
      if (state.approvedBy === 'rule') return <RuleProvenance rule={state.rule} effect="allow" suffix={WAITS_ITS_TURN} />;
      if (state.approvedBy === 'you') return <p className="detail">{words.allowed[by]}</p>;
      return <p className="detail">{allowedDetail[state.approvedBy]}</p>;
    case 'running':
    case 'done':
      if (state.approvedBy === 'rule') return <RuleProvenance rule={state.rule} effect="allow" />;
      if (state.approvedBy === 'you' && words.ran[by] !== null) return <p className="detail">{words.ran[by]}</p>;
      return approverDetail[state.approvedBy] === null ? null : <p className="detail">{approverDetail[state.approvedBy]}</p>;
    case 'denied':
      if (state.deniedByRule !== undefined) return <RuleProvenance rule={state.deniedByRule} effect="deny" />;
      if (state.reason === null) return null;
      return (
        <p className="detail">
          {words.reason[by]}: {state.reason}
        </p>
      );
    case 'timed-out':
      return <p className="detail">No decision came in time, so it did not run.</p>;
    case 'disabled':
      return <p className="detail">This tool is turned off or unknown, so it did not run.</p>;
    case 'duplicate':
      return <p className="detail">The same call already ran in this message.</p>;
    case 'interrupted':
      return <p className="detail">Interrupted — it was running when the server stopped and may have done part of its work.</p>;
  }
}

const WAITS_ITS_TURN = 'It runs once the calls before it are done.';

const approverDetail: Record<Exclude<Approver, 'rule'>, string | null> = {
  you: null,
  'not-asked': null,
  grant: 'Allowed by an “Always allow” in this chat.',
  'no-confirmation': 'Ran without asking: confirmation is off for this chat.',
};

const allowedDetail: Record<Exclude<Allower, 'rule' | 'you'>, string> = {
  grant: `Allowed by an “Always allow” in this chat. ${WAITS_ITS_TURN}`,
};

function ranTool(status: ToolCallStatus): boolean {
  return status === 'done' || status === 'error' || status === 'interrupted' || status === 'recorded';
}

function resultOf(state: ToolCallState): string | null {
  switch (state.status) {
    case 'awaiting-decision':
    case 'deciding':
    case 'allowed':
    case 'running':
      return null;
    case 'done':
    case 'error':
    case 'denied':
    case 'timed-out':
    case 'cancelled':
    case 'disabled':
    case 'duplicate':
    case 'interrupted':
    case 'recorded':
    case 'unreadable':
      return state.result;
  }
}
