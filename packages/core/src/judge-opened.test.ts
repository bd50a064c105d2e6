import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalRegistry } from './approval-registry';
import type { ToolCall } from './messages';
import { runToolLoop, type PolicyOptions, type PolicyVerdict, type RunToolLoopOptions } from './run-tool-loop';
import { collectRun, ScriptedModel, textStep, toolCallStep } from './testing';
import { defineTool, toolVersion, type OpenedPath, type OpenedRefusal } from './tool';

const SESSION = 'opened-session';
const OPENED: OpenedPath = { real: '/ws/src/x', links: 2 };

const allow: PolicyVerdict = { effect: 'allow', ruleId: 'rule_src', description: [{ text: 'Allow reading src/**' }] };
const deny: PolicyVerdict = { effect: 'deny', ruleId: 'rule_secret', description: [{ text: 'Deny reading secret/**' }], message: 'not the secrets' };
const asks: PolicyVerdict = { effect: 'ask', ruleId: 'rule_secret', description: [{ text: 'a file with more than one name' }] };
const asksWhenConfirming: PolicyVerdict = { ...asks, onlyWhenConfirming: true };

/**
 * A run of one `read` call, whose tool asks the rules about what it "opened" and answers what they said; `before` is
 * what the rules say of the call, `opened` what they say once it has opened. `decide`: the person's answer when the
 * call is put up.
 */
async function run(options: {
  before: PolicyVerdict | undefined;
  opened: PolicyVerdict | undefined;
  confirmToolCalls?: boolean;
  decide?: { arguments?: Record<string, unknown> };
  grant?: 'any' | 'exact';
  withoutPolicy?: boolean;
}) {
  const seen: { call: ToolCall; options: PolicyOptions | undefined }[] = [];
  const answers: (OpenedRefusal | undefined | 'no judge')[] = [];
  const tool = defineTool({
    name: 'read',
    description: 'reads a file',
    parameters: z.object({ path: z.string() }),
    annotations: { readOnly: true },
    async execute(_args, context) {
      answers.push(context.judgeOpened === undefined ? 'no judge' : await context.judgeOpened(OPENED));
      return 'read';
    },
  });
  const registry = new ApprovalRegistry();
  if (options.grant !== undefined) {
    registry.grant({ sessionId: SESSION, toolName: 'read', executesCode: false, toolVersion: toolVersion(tool), ...(options.grant === 'exact' ? { arguments: { path: 'src/x' } } : {}) });
  }
  const policy: RunToolLoopOptions['policy'] = async (call, _tool, given) => {
    if (given?.opened === undefined) return options.before;
    seen.push({ call, options: given });
    return options.opened;
  };
  const loop = runToolLoop({
    model: new ScriptedModel([toolCallStep({ name: 'read', arguments: { path: 'src/x' }, id: 'c1' }), textStep('ok')]),
    messages: [{ role: 'user', content: 'hi' }],
    tools: [tool],
    registry,
    sessionId: SESSION,
    confirmToolCalls: options.confirmToolCalls ?? true,
    ...(options.withoutPolicy === true ? {} : { policy }),
  });
  await collectRun(loop, (event) => {
    if (event.type !== 'tool-start' || !event.awaitingConfirmation) return;
    const edit = options.decide?.arguments;
    registry.resolve(event.approvalId, 'allow', { sessionId: SESSION, ...(edit === undefined ? {} : { arguments: edit }) });
  });
  return { answers, seen };
}

describe("ToolContext.judgeOpened: the rules' look at what a tool opened, held to what let the call through", () => {
  it("asks the policy with the call as it runs and what was opened, as a look that counts no hit", async () => {
    const { answers, seen } = await run({ before: allow, opened: allow });
    expect(answers).toStrictEqual([undefined]);
    expect(seen).toStrictEqual([{ call: { id: 'c1', name: 'read', arguments: { path: 'src/x' } }, options: { preview: true, opened: OPENED } }]);
  });

  it("a rule's allow stands only while a rule allows what was opened", async () => {
    expect((await run({ before: allow, opened: undefined })).answers).toStrictEqual([{ kind: 'changed', allowedBy: 'rule' }]);
    expect((await run({ before: allow, opened: asks })).answers).toStrictEqual([{ kind: 'changed', allowedBy: 'rule', reason: 'a file with more than one name' }]);
  });

  it('a deny rule refuses what was opened, whoever let the call through', async () => {
    const denied = { kind: 'denied', reason: 'not the secrets', fromWorkspaceFile: false };
    expect((await run({ before: allow, opened: deny })).answers).toStrictEqual([denied]);
    expect((await run({ before: undefined, opened: deny, confirmToolCalls: false })).answers).toStrictEqual([denied]);
    expect((await run({ before: undefined, opened: deny, decide: {} })).answers).toStrictEqual([denied]);
    expect((await run({ before: asks, opened: { ...deny, fromWorkspaceFile: true }, decide: {} })).answers).toStrictEqual([{ ...denied, fromWorkspaceFile: true }]);
  });

  it('a call no rule decided, run with confirmation off or by a grant for any call of the tool, is refused once a rule would have it asked', async () => {
    const changed = { kind: 'changed', allowedBy: 'unasked', reason: 'a file with more than one name' };
    expect((await run({ before: undefined, opened: asks, confirmToolCalls: false })).answers).toStrictEqual([changed]);
    expect((await run({ before: undefined, opened: asks, grant: 'any' })).answers).toStrictEqual([changed]);
    // An ask that holds only with confirmation on does not stop a call run with it off.
    expect((await run({ before: undefined, opened: asksWhenConfirming, confirmToolCalls: false })).answers).toStrictEqual([undefined]);
  });

  it("the person's allow, and a grant for the exact arguments, stand but for a deny: the person may have allowed the very file a rule asked about", async () => {
    expect((await run({ before: asks, opened: asks, decide: {} })).answers).toStrictEqual([undefined]);
    expect((await run({ before: undefined, opened: undefined, decide: {} })).answers).toStrictEqual([undefined]);
    expect((await run({ before: asks, opened: asks, grant: 'exact' })).answers).toStrictEqual([undefined]);
  });

  it('judges the arguments the person edited the call to', async () => {
    const { seen } = await run({ before: undefined, opened: undefined, decide: { arguments: { path: 'src/y' } } });
    expect(seen.map((look) => look.call.arguments)).toStrictEqual([{ path: 'src/y' }]);
  });

  it('is not given without rules', async () => {
    expect((await run({ before: undefined, opened: undefined, confirmToolCalls: false, withoutPolicy: true })).answers).toStrictEqual(['no judge']);
  });
});
