import type { AnyTool, ApprovalRegistry, AskedBecause, PendingApproval, PolicyVerdict, ToolCall } from '@airlock/core';
import type { RuleService } from './context';
import type { AirlockStore } from './store';

export interface WaitingCallsJudgeOptions {
  registry: ApprovalRegistry;
  rules: RuleService;
  store: Pick<AirlockStore, 'requireExactGrants'>;
  /** The sessions whose runs this instance drives (a call can wait here only in one of them). */
  sessions: () => Iterable<string>;
  /** The tool a waiting call was put up with, as the rules are to judge it; undefined when it is gone. */
  toolOf: (call: PendingApproval) => AnyTool | undefined;
  /** Told of a session one of whose waiting calls changed. */
  changed: (sessionId: string) => void;
  log: (line: string) => void;
  /**
   * How long the rules may take over one call (a file system that hangs) before it is held as one they could not
   * judge, so the chats after it are judged and their decisions land. Default JUDGE_CALL_TIME_LIMIT_MS.
   */
  callTimeLimitMs?: number;
}

/** The rules' own checks give up sooner (a command line's parse after 5 s): this bounds what they do not. */
export const JUDGE_CALL_TIME_LIMIT_MS = 30_000;

/**
 * How long after a failed write of a call's hold (only an exact grant releases it) the write is tried again; each
 * failure doubles the wait, up to MARK_RETRY_MAX_MS.
 */
export const MARK_RETRY_FIRST_MS = 250;
export const MARK_RETRY_MAX_MS = 30_000;

/** The rule id a call held because the rules could not judge it again is listed with (no rule asked about it). */
export const UNJUDGED = 'rules-unread';

type Evaluate = (sessionId: string, call: ToolCall, tool: AnyTool) => Promise<PolicyVerdict | undefined>;

/** A chat's pass, queued and not started. */
interface Due {
  done: Promise<void>;
  settle: () => void;
  /** Asked for before a grant: judged by the rules read anew (the workspace's file included), not as a pass read them. */
  fresh: boolean;
}

/**
 * Judges the calls waiting here again by the rules as they are now. A deny rule added or changed while a call waited
 * that catches it denies it at once, with the rule's reason, as it would have denied it put up under the rule (an
 * allow of it would be refused anyway: see the loop; the person no longer waits on a call that cannot run). One that
 * cannot tell it from a call it denies has it released only by a grant for its exact arguments, as if it had been put
 * up under that rule: else "Always allow" on a sibling of its tool, a grant for any call of the tool, let it run with
 * no person's allow.
 *
 * Passes are made one chat at a time, one after the other, and the rules are read once for as long as they do not
 * change (see RuleService.snapshot), not once a call. A decision waits only for the passes over its own chat, whose
 * queued pass goes first: a decision, which touches only its chat's calls, does not wait behind every chat's.
 */
export class WaitingCallsJudge {
  /** Chats whose pass is queued and not started, in order. */
  private readonly due = new Map<string, Due>();
  /** Chats a decision or a grant waits on: their queued pass goes before the others. */
  private readonly urgent = new Set<string>();
  /** The chat being judged now, and when its pass is done. */
  private current: { sessionId: string; done: Promise<void> } | undefined;
  private pumping = false;
  /** The timers of holds whose write failed, to try again; none is set once stopped. */
  private readonly retries = new Set<ReturnType<typeof setTimeout>>();
  private stopped = false;

  constructor(private readonly options: WaitingCallsJudgeOptions) {}

  /** Tries no held call's write again: for a service shutting down. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
  }

  /** Every waiting call of this instance, once the rules changed. */
  judgeAll(): Promise<void> {
    return Promise.all([...new Set(this.options.sessions())].map((sessionId) => this.enqueue(sessionId, false))).then(() => undefined);
  }

  /** The waiting calls of a chat whose run was just taken up here from the store (another instance's, say). */
  judgeRestored(sessionId: string): Promise<void> {
    return this.enqueue(sessionId, false);
  }

  /** The session's waiting calls, now and by the rules read anew, before the others: before a grant of the chat is put in force. */
  judge(sessionId: string): Promise<void> {
    const done = this.enqueue(sessionId, true);
    this.urgent.add(sessionId);
    return done;
  }

  /**
   * Settles once the passes over the chat queued so far are done, its queued one taken first: a person's decision lands
   * after them, on the call as they left it. Two decisions in a chat wait alike, so they still land in order.
   */
  idle(sessionId: string): Promise<void> {
    const due = this.due.get(sessionId);
    if (due !== undefined) {
      this.urgent.add(sessionId);
      return due.done;
    }
    return this.current?.sessionId === sessionId ? this.current.done : Promise.resolve();
  }

  private enqueue(sessionId: string, fresh: boolean): Promise<void> {
    let due = this.due.get(sessionId);
    if (due === undefined) {
      let settle = () => {};
      const done = new Promise<void>((resolve) => (settle = resolve));
      due = { done, settle, fresh };
      this.due.set(sessionId, due);
    } else if (fresh) due.fresh = true;
    void this.pump();
    return due.done;
  }

  private next(): [string, Due] | undefined {
    for (const sessionId of this.urgent) {
      this.urgent.delete(sessionId);
      const due = this.due.get(sessionId);
      if (due !== undefined) return [sessionId, due];
    }
    const first = this.due.entries().next();
    return first.done === true ? undefined : first.value;
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    // The rules as read for the passes so far, and the version they were read at.
    let read: { version: number | undefined; evaluate: Evaluate } | undefined;
    try {
      for (let first = true; ; first = false) {
        // Rules that answer at once never give the thread back: without this, a pass over thousands of chats held
        // every other request, and every decision's turn, until it ended.
        if (!first) await new Promise((resolve) => setImmediate(resolve));
        const next = this.next();
        if (next === undefined) break;
        const [sessionId, due] = next;
        this.due.delete(sessionId);
        this.current = { sessionId, done: due.done };
        try {
          if (read === undefined || due.fresh || read.version === undefined || read.version !== this.options.rules.version?.()) read = await this.withinLimit(this.read()).catch(unread);
          await this.judgeSession(sessionId, read.evaluate);
        } catch (error) {
          this.options.log(`Could not judge the waiting calls of ${sessionId} again by the rules: ${error instanceof Error ? error.message : String(error)}`);
        } finally {
          this.current = undefined;
          due.settle();
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  /** The rules as they are now, read once for many calls; each call alone where the rules cannot be read so. */
  private async read(): Promise<{ version: number | undefined; evaluate: Evaluate }> {
    const { rules } = this.options;
    // The version before the read: a read of the rules that finishes first may find them changed, and what this one
    // returns must not pass for that version, or the change would never be read for the chats after.
    const version = rules.version?.();
    const evaluate: Evaluate = rules.snapshot === undefined ? (sessionId, call, tool) => rules.evaluate(sessionId, call, tool, { preview: true }) : await rules.snapshot();
    return { version, evaluate };
  }

  private async judgeSession(sessionId: string, evaluate: Evaluate): Promise<void> {
    const { registry } = this.options;
    for (const call of registry.listPending(sessionId)) {
      const tool = this.options.toolOf(call);
      if (tool === undefined) continue;
      let verdict: PolicyVerdict | undefined;
      try {
        verdict = await this.withinLimit(evaluate(sessionId, { id: call.toolCallId, name: call.toolName, arguments: call.arguments }, tool));
      } catch (error) {
        // A call the changed rules could not judge (the workspace's rules file unreadable, say) may be one they hold:
        // it is held as one a deny rule cannot tell from one it denies, and its card says why. The other calls are
        // judged still.
        const detail = error instanceof Error ? error.message : String(error);
        this.options.log(`Could not judge ${call.approvalId} again by the rules (${detail}): only a grant for its exact arguments releases it`);
        await this.holdToExactGrants(call, sessionId, { ruleId: UNJUDGED, reason: [{ text: `The rules changed while this call waited and could not judge it again (${detail}): it is released only by an allow of these exact arguments, not by a grant for any call of its tool` }] });
        continue;
      }
      if (verdict?.effect === 'deny') {
        registry.denyByRule(call.approvalId, sessionId, { ...verdict, effect: 'deny' });
        continue;
      }
      if (call.exactGrantsOnly === true || verdict?.effect !== 'ask' || verdict.onlyWhenConfirming === true) continue;
      await this.holdToExactGrants(call, sessionId, { ruleId: verdict.ruleId, reason: verdict.description });
    }
  }

  private withinLimit<T>(judged: Promise<T>): Promise<T> {
    const limit = this.options.callTimeLimitMs ?? JUDGE_CALL_TIME_LIMIT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the rules took longer than ${limit} ms to judge it`)), limit);
    });
    return Promise.race([judged, late]).finally(() => clearTimeout(timer));
  }

  private async holdToExactGrants(call: PendingApproval, sessionId: string, askedBecause: AskedBecause): Promise<void> {
    if (!this.options.registry.requireExactGrants(call.approvalId, sessionId, askedBecause)) return;
    this.options.changed(sessionId);
    await this.storeHold(call, sessionId, askedBecause, MARK_RETRY_FIRST_MS);
  }

  /**
   * Keeps the hold in the store, for the call as restored after a restart or by the instance taking its run over, and
   * for the waiting list of every instance, which reads it there. A write that fails is tried again, later each time,
   * for as long as the call waits here so held: before, it was only logged, and with several instances the others
   * listed the call as one any grant of its tool releases (their "Allow all" took it in), though it was held here.
   */
  private async storeHold(call: PendingApproval, sessionId: string, askedBecause: AskedBecause, delay: number): Promise<void> {
    let kept: boolean;
    try {
      kept = await this.options.store.requireExactGrants(call.runId, call.toolCallId, askedBecause);
    } catch (error) {
      this.options.log(`Could not keep that only an exact grant releases ${call.approvalId} (trying again in ${delay} ms): ${error instanceof Error ? error.message : String(error)}`);
      kept = false;
    }
    // Not kept: the write failed, or the call's start is still being written (it was held while that write was under
    // way) and the hold found no row to go on. Written again for as long as the call waits here so held.
    if (!kept) {
      if (this.stopped) return;
      const timer = setTimeout(() => {
        this.retries.delete(timer);
        if (this.heldHere(call.approvalId, sessionId)) void this.storeHold(call, sessionId, askedBecause, Math.min(delay * 2, MARK_RETRY_MAX_MS));
      }, delay);
      this.retries.add(timer);
      return;
    }
    // Watchers here read the waiting list again: it now says so wherever it is read.
    if (delay > MARK_RETRY_FIRST_MS) this.options.changed(sessionId);
  }

  /** Whether the call still waits here, held to exact grants (not decided, nor handed to another instance). */
  private heldHere(approvalId: string, sessionId: string): boolean {
    return this.options.registry.listPending(sessionId).some((call) => call.approvalId === approvalId && call.exactGrantsOnly === true);
  }
}

/** Rules that could not be read: each call is judged as one they failed to judge (held), and the next pass reads again. */
function unread(error: unknown): { version: undefined; evaluate: Evaluate } {
  return { version: undefined, evaluate: () => Promise.reject(error instanceof Error ? error : new Error(String(error))) };
}
