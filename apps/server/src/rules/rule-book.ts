import { describeRule, denialMessage, ruleDraftSchema, type AirlockStore, type Cluster, type Rule, type RuleDraft, type RuleService, type RuleView, type ToolCallRecord, type WorkspaceRulesStatus } from '@airlock/api';
import { NotFoundError, randomId, type AnyTool, type PolicyVerdict, type ToolCall } from '@airlock/core';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { WorkspacePaths } from '../tools/workspace-paths';
import { evaluateRules, type RuleCall } from './evaluate-rules';
import { proposeRule } from './propose-rule';
import { loadWorkspaceRules, WORKSPACE_RULES_FILE } from './workspace-rules-file';

export interface RuleBookOptions {
  store: AirlockStore;
  /** Real path of the workspace: workspace-scoped rules name it, and its `.airlock/rules.json` is read. */
  workspace: string;
  /**
   * The real path a file tool would use for a requested one, or undefined when it would refuse it. Default: the
   * built-in file tools' own resolution in `workspace` (`WorkspacePaths`: links followed, kept inside it).
   */
  realPath?: (requested: string) => Promise<string | undefined>;
  /** Receives a line when the workspace's rules file is invalid. Default console.warn. */
  log?: (line: string) => void;
  /** Default Date.now. */
  now?: () => number;
  /** Instances sharing the store: a rule or trust changed on one is read again by the others. Default none. */
  cluster?: Cluster;
}

interface Kept {
  rule: Rule;
  hits: number;
  lastUsedAt: number | null;
}

/**
 * The rules that decide calls before grants and the person: the person's own (kept in the store, at chat,
 * workspace or global scope) and those of the workspace's `.airlock/rules.json` (read again whenever the file
 * changes; a bad file applies no rule from it; its allows count only once the person trusts the workspace).
 */
export class RuleBook implements RuleService {
  private readonly kept = new Map<string, Kept>();
  private fileRules: readonly Rule[] = [];
  private fileState: WorkspaceRulesStatus['state'] = 'absent';
  private fileError: string | undefined;
  private fileStamp = '';
  private trusted = false;
  private readonly log: (line: string) => void;
  private readonly now: () => number;
  /** Path rules match the file a tool would really touch: a link in the workspace cannot pass one file off as another. */
  private readonly realPath: (requested: string) => Promise<string | undefined>;

  private constructor(private readonly options: RuleBookOptions) {
    this.log = options.log ?? ((line) => console.warn(line));
    this.now = options.now ?? Date.now;
    this.realPath = options.realPath ?? fileToolRealPath(options.workspace);
  }

  static async open(options: RuleBookOptions): Promise<RuleBook> {
    const book = new RuleBook(options);
    options.cluster?.subscribe((message) => {
      if (message.type === 'rules' || message.type === 'resync') book.reload().catch((error: unknown) => book.log(`Could not read the rules again: ${error instanceof Error ? error.message : String(error)}`));
    });
    await book.reload();
    await book.refreshWorkspaceFile();
    return book;
  }

  /** Reads the person's rules and the workspace's trust from the store again. */
  private async reload(): Promise<void> {
    const stored = await this.options.store.listRules();
    const trusted = (await this.options.store.getSetting(trustKey(this.options.workspace))) === 'trusted';
    this.kept.clear();
    for (const entry of stored) this.kept.set(entry.rule.id, { ...entry });
    this.trusted = trusted;
  }

  private changed(): void {
    this.options.cluster?.publish({ type: 'rules' }).catch((error: unknown) => this.log(`Could not tell the other instances about a rule: ${error instanceof Error ? error.message : String(error)}`));
  }

  async evaluate(sessionId: string, call: ToolCall, tool: AnyTool, options: { preview?: boolean } = {}): Promise<PolicyVerdict | undefined> {
    await this.refreshWorkspaceFile();
    const rules = [...[...this.kept.values()].map((kept) => kept.rule), ...this.fileRules];
    if (rules.length === 0) return undefined;
    const decision = await evaluateRules(ruleCall(call.name, call.arguments, tool), rules, {
      sessionId,
      workspace: this.options.workspace,
      workspaceTrusted: this.trusted,
      realPath: this.realPath,
    });
    if (decision.decision === 'ask') return undefined;
    const rule = decision.rule;
    if (decision.decision === 'deny') {
      if (options.preview !== true) await this.countHit(rule.id);
      return { effect: 'deny', ruleId: rule.id, description: describeRule(rule), message: denialMessage(rule) };
    }
    // A command line can need one rule per part (`echo hi && pwd`): each is counted, and the card names them all.
    if (options.preview !== true) for (const used of decision.rules) await this.countHit(used.id);
    return { effect: 'allow', ruleId: rule.id, description: decision.rules.map(describeRule).join('; and ') };
  }

  async list(): Promise<RuleView[]> {
    await this.refreshWorkspaceFile();
    const own = [...this.kept.values()].map((kept) => view(kept, true));
    return [...own, ...this.fileRules.map((rule) => view({ rule, hits: 0, lastUsedAt: null }, false))];
  }

  async add(draft: RuleDraft): Promise<RuleView> {
    const rule = ruleDraftSchema.parse({ ...draft, source: 'user' });
    const kept: Kept = { rule: { ...rule, id: randomId('rule', 12), createdAt: new Date(this.now()).toISOString() }, hits: 0, lastUsedAt: null };
    await this.options.store.saveRule(kept.rule);
    this.kept.set(kept.rule.id, kept);
    this.changed();
    return view(kept, true);
  }

  async update(ruleId: string, draft: RuleDraft): Promise<RuleView> {
    const existing = this.kept.get(ruleId);
    if (!existing) throw new NotFoundError('rule', ruleId);
    const rule = ruleDraftSchema.parse({ ...draft, source: 'user' });
    const kept: Kept = { ...existing, rule: { ...rule, id: ruleId, createdAt: existing.rule.createdAt } };
    await this.options.store.saveRule(kept.rule);
    this.kept.set(ruleId, kept);
    this.changed();
    return view(kept, true);
  }

  async remove(ruleId: string): Promise<boolean> {
    if (!this.kept.has(ruleId)) return false;
    await this.options.store.deleteRule(ruleId);
    this.kept.delete(ruleId);
    this.changed();
    return true;
  }

  async propose(sessionId: string, call: { toolName: string; arguments: Record<string, unknown> }, scope: 'chat' | 'workspace' | 'global', tool?: AnyTool): Promise<{ draft: RuleDraft; description: string }> {
    const ruleScope = scope === 'chat' ? { kind: 'chat' as const, sessionId } : scope === 'workspace' ? { kind: 'workspace' as const, path: this.options.workspace } : { kind: 'global' as const };
    const draft = await proposeRule(ruleCall(call.toolName, call.arguments, tool), ruleScope, { workspace: this.options.workspace });
    return { draft, description: describeRule(draft) };
  }

  async preview(draft: RuleDraft, calls: readonly ToolCallRecord[]): Promise<ToolCallRecord[]> {
    const rule: Rule = { ...ruleDraftSchema.parse(draft), id: 'preview', createdAt: new Date(this.now()).toISOString() };
    const matched: ToolCallRecord[] = [];
    for (const call of calls) {
      const decision = await evaluateRules(ruleCall(call.toolName, call.arguments), [rule], {
        sessionId: call.sessionId,
        workspace: this.options.workspace,
        workspaceTrusted: true,
      });
      if (decision.decision !== 'ask') matched.push(call);
    }
    return matched;
  }

  async workspaceRules(): Promise<WorkspaceRulesStatus> {
    await this.refreshWorkspaceFile();
    return {
      file: path.join(this.options.workspace, WORKSPACE_RULES_FILE),
      state: this.fileState,
      ...(this.fileError === undefined ? {} : { error: this.fileError }),
      trusted: this.trusted,
    };
  }

  async trustWorkspace(trusted: boolean): Promise<WorkspaceRulesStatus> {
    await this.options.store.setSetting(trustKey(this.options.workspace), trusted ? 'trusted' : undefined);
    this.trusted = trusted;
    this.changed();
    return this.workspaceRules();
  }

  forgetSession(sessionId: string): void {
    for (const [id, kept] of this.kept) if (kept.rule.scope.kind === 'chat' && kept.rule.scope.sessionId === sessionId) this.kept.delete(id);
  }

  private async countHit(ruleId: string): Promise<void> {
    const kept = this.kept.get(ruleId);
    if (!kept) return;
    const at = this.now();
    kept.hits += 1;
    kept.lastUsedAt = at;
    await this.options.store.recordRuleHit(ruleId, at);
  }

  /** Reads the workspace's rules file again when its size or time changed (a cheap stat per evaluation). */
  private async refreshWorkspaceFile(): Promise<void> {
    const file = path.join(this.options.workspace, WORKSPACE_RULES_FILE);
    const stamp = await stat(file).then(
      (info) => `${info.size}:${info.mtimeMs}:${info.ino}`,
      () => 'none',
    );
    if (stamp === this.fileStamp) return;
    this.fileStamp = stamp;
    const loaded = await loadWorkspaceRules(this.options.workspace);
    switch (loaded.kind) {
      case 'absent':
        this.fileRules = [];
        this.fileState = 'absent';
        this.fileError = undefined;
        return;
      case 'loaded':
        this.fileRules = loaded.rules;
        this.fileState = 'loaded';
        this.fileError = undefined;
        return;
      case 'invalid':
        this.fileRules = [];
        this.fileState = 'invalid';
        this.fileError = loaded.error.message;
        this.log(`No rule from ${file} applies: ${loaded.error.message}`);
        return;
    }
  }
}

/** Resolves a requested path as read_file, write_file and list_directory do; undefined where they would refuse it. */
function fileToolRealPath(workspace: string): (requested: string) => Promise<string | undefined> {
  const paths = new WorkspacePaths(workspace);
  return (requested) => paths.resolve(requested).catch(() => undefined);
}

/** The person's trust in a workspace's own rules file is kept per workspace path, across restarts. */
function trustKey(workspace: string): string {
  return `workspace-rules-trusted:${workspace}`;
}

function ruleCall(toolName: string, args: Record<string, unknown>, tool?: AnyTool): RuleCall {
  const server = tool?.source?.startsWith('mcp:') ? tool.source.slice(4) : undefined;
  return server !== undefined && tool?.remoteName !== undefined ? { tool: toolName, arguments: args, mcp: { server, tool: tool.remoteName } } : { tool: toolName, arguments: args };
}

function view(kept: Kept, editable: boolean): RuleView {
  return { rule: kept.rule, description: describeRule(kept.rule), hits: kept.hits, lastUsedAt: kept.lastUsedAt, editable };
}
