import type { AnyTool, ApprovalRegistry, AskedBecause, PendingApproval, PolicyVerdict } from '@airlock/core';
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
}

/**
 * Judges the calls waiting here again by the rules as they are now. A deny rule added or changed while a call waited
 * that catches it denies it at once, with the rule's reason, as it would have denied it put up under the rule (an
 * allow of it would be refused anyway: see the loop; the person no longer waits on a call that cannot run). One that
 * cannot tell it from a call it denies has it released only by a grant for its exact arguments, as if it had been put
 * up under that rule: else "Always allow" on a sibling of its tool, a grant for any call of the tool, let it run with
 * no person's allow.
 */
/** The rule id a call held because the rules could not judge it again is listed with (no rule asked about it). */
export const UNJUDGED = 'rules-unread';

export class WaitingCallsJudge {
  private running: Promise<void> = Promise.resolve();
  /** A pass of every session is queued and not started: a change meanwhile needs no other. */
  private allQueued = false;

  constructor(private readonly options: WaitingCallsJudgeOptions) {}

  /** Every waiting call of this instance, once the rules changed. Passes run one at a time. */
  judgeAll(): Promise<void> {
    if (this.allQueued) return this.running;
    this.allQueued = true;
    return this.queue(async () => {
      this.allQueued = false;
      for (const sessionId of new Set(this.options.sessions())) await this.judgeSession(sessionId);
    });
  }

  /** The session's waiting calls, now: before a grant of the chat is put in force. */
  judge(sessionId: string): Promise<void> {
    return this.queue(() => this.judgeSession(sessionId));
  }

  /** Settles once the passes queued so far are done: a person's allow lands after them, on the call as they left it. */
  idle(): Promise<void> {
    return this.running;
  }

  private queue(work: () => Promise<void>): Promise<void> {
    const next = this.running.then(work);
    this.running = next.catch((error: unknown) => this.options.log(`Could not judge the waiting calls again by the rules: ${error instanceof Error ? error.message : String(error)}`));
    return this.running;
  }

  private async judgeSession(sessionId: string): Promise<void> {
    const { registry, rules } = this.options;
    for (const call of registry.listPending(sessionId)) {
      const tool = this.options.toolOf(call);
      if (tool === undefined) continue;
      let verdict: PolicyVerdict | undefined;
      try {
        verdict = await rules.evaluate(sessionId, { id: call.toolCallId, name: call.toolName, arguments: call.arguments }, tool, { preview: true });
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

  private async holdToExactGrants(call: PendingApproval, sessionId: string, askedBecause: AskedBecause): Promise<void> {
    const { registry, store } = this.options;
    if (!registry.requireExactGrants(call.approvalId, sessionId, askedBecause)) return;
    this.options.changed(sessionId);
    // Kept for the call as restored after a restart or by the instance taking its run over, and for the waiting
    // list of every instance; a write that fails leaves it marked here, where its run is driven.
    await store.requireExactGrants(call.runId, call.toolCallId, askedBecause).catch((error: unknown) => this.options.log(`Could not keep that only an exact grant releases ${call.approvalId}: ${error instanceof Error ? error.message : String(error)}`));
  }
}
