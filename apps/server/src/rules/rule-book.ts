import {
  describeRule,
  denialMessage,
  ruleDraftSchema,
  ruleSchema,
  type AirlockStore,
  type Cluster,
  type Rule,
  type RuleDraft,
  type RuleService,
  type RuleView,
  type ToolCallRecord,
  type WorkspaceRulesStatus,
  type WorkspaceTrust,
  type WorkspaceTrustChoice,
} from '@airlock/api';
import { codeWord, ConflictError, InvalidArgumentsError, LimitExceededError, NotFoundError, parseUntrustedJson, randomId, reason, toolVersion, withToolDefaults, type AnyTool, type OpenedPath, type PolicyOptions, type PolicyVerdict, type Reason, type ToolCall } from '@airlock/core';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { WorkspacePaths } from '../tools/workspace-paths';
import { commandPathInside } from './command-path-inside';
import { evaluateRules, gitConfigReason, type LeadsOut, type RuleCall, type RuleContext } from './evaluate-rules';
import { gitLayoutWrite } from './git-layout-write';
import type { LinkWalks } from './links-below';
import { proposeRule } from './propose-rule';
import type { GitConfigCause, GitLooks } from './submodule-configs';
import { loadWorkspaceRules, WORKSPACE_RULES_FILE, type WorkspaceRules } from './workspace-rules-file';

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

/** The most rules a person may keep: every call is checked against all of them, and the list is one answer. */
export const MAX_RULES = 1000;
/** The most characters all their matches may hold together, as JSON (a rule's own limit is 64 KiB): the list's bound. */
export const MAX_RULES_CHARS = 4 * 1024 * 1024;

function sizeOf(rule: Pick<Rule, 'match'>): number {
  return JSON.stringify(rule.match).length;
}

interface Kept {
  rule: Rule;
  hits: number;
  lastUsedAt: number | null;
}

/** The person's trust as stored: the SHA-256 of the content trusted, or a trust given before trust named content. */
type StoredTrust = { kind: 'none' } | { kind: 'content'; sha256: string } | { kind: 'unbound' };

/** The deny rules of the last valid content of the workspace's file: they keep applying while the file is invalid. */
interface LastValid {
  sha256: string;
  denies: readonly Rule[];
}

const lastValidSchema = z.object({ sha256: z.string(), denies: z.array(ruleSchema) });

/**
 * The rules that decide calls before grants and the person: the person's own (kept in the store, at chat,
 * workspace or global scope) and those of the workspace's `.airlock/rules.json`, read again at each evaluation.
 * The file's deny rules always apply; its allow rules only while it holds the very content the person trusted (its
 * SHA-256 is what the trust keeps), so a call that rewrites the file cannot allow the next one. While the file is
 * invalid, no allow from it applies and the deny rules of its last valid content (kept in the store) still do.
 */
export class RuleBook implements RuleService {
  private readonly kept = new Map<string, Kept>();
  /** Changes whenever what `evaluate` answers may have: a rule added, edited, removed, read again, or the file changed. */
  #version = 0;
  private readonly listeners = new Set<() => void>();
  /** Stored rules that fail the rule schema now (kept before a limit was checked): not used, removable by id. */
  private readonly unreadable = new Set<string>();
  /** The workspace file as last read, and how many reads were started and which of them it comes from. */
  private file: WorkspaceRules = { kind: 'absent' };
  private fileReads = 0;
  private fileReadShown = 0;
  private trust: StoredTrust = { kind: 'none' };
  /** The read of the stored rules under way (see reload). */
  private reading: Promise<void> = Promise.resolve();
  private lastValid: LastValid | undefined;
  private readonly log: (line: string) => void;
  private readonly now: () => number;
  /** Path rules match the file a tool would really touch: a link in the workspace cannot pass one file off as another. */
  private readonly realPath: (requested: string) => Promise<string | undefined>;
  /** Command rules judge a path by where it really leads: `cd link && make test` runs where the link leads. */
  private readonly leadsInside: (absolute: string) => Promise<boolean>;
  /** Path rules do not allow a write that makes a folder a Git repository, whose config git would run outside the sandbox. */
  private readonly gitLayoutWrite: (names: readonly string[]) => Promise<readonly string[] | undefined>;

  private constructor(private readonly options: RuleBookOptions) {
    this.log = options.log ?? ((line) => console.warn(line));
    this.now = options.now ?? Date.now;
    this.realPath = options.realPath ?? fileToolRealPath(options.workspace);
    this.leadsInside = commandPathInside(options.workspace);
    this.gitLayoutWrite = gitLayoutWrite(options.workspace);
  }

  static async open(options: RuleBookOptions): Promise<RuleBook> {
    const book = new RuleBook(options);
    options.cluster?.subscribe((message) => {
      if (message.type === 'rules' || message.type === 'resync') book.reload().catch((error: unknown) => book.log(`Could not read the rules again: ${error instanceof Error ? error.message : String(error)}`));
    });
    await book.reload();
    await book.readWorkspaceFile();
    return book;
  }

  /**
   * Reads the person's rules, the workspace's trust and its file's last valid deny rules from the store again. One
   * read at a time, in order: an earlier read never lands after a later one.
   */
  reload(): Promise<void> {
    const read = this.reading.then(() => this.readStored());
    this.reading = read.catch(() => undefined);
    return read;
  }

  private async readStored(): Promise<void> {
    const stored = await this.options.store.listRules();
    const trust = parseTrust(await this.options.store.getSetting(trustKey(this.options.workspace)));
    const lastValid = this.parseLastValid(await this.options.store.getSetting(lastValidKey(this.options.workspace)));
    this.bump();
    this.kept.clear();
    this.unreadable.clear();
    for (const entry of stored) {
      // A rule kept before its limits were checked (one nested 3,000 deep broke every list and every terminal call)
      // is set aside, said once, and can still be removed by its id.
      const checked = ruleSchema.safeParse(entry.rule);
      if (checked.success) this.kept.set(entry.rule.id, { ...entry, rule: checked.data });
      else {
        this.unreadable.add(entry.rule.id);
        this.log(`Set aside the stored rule ${entry.rule.id}: ${checked.error.issues[0]?.message ?? 'not a valid rule'}. Remove it by its id.`);
      }
    }
    this.trust = trust;
    this.lastValid = lastValid;
  }

  version(): number {
    return this.#version;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private bump(): void {
    this.#version++;
    for (const listener of this.listeners) listener();
  }

  private changed(): void {
    this.bump();
    this.options.cluster?.publish({ type: 'rules' }).catch((error: unknown) => this.log(`Could not tell the other instances about a rule: ${error instanceof Error ? error.message : String(error)}`));
  }

  async evaluate(sessionId: string, call: ToolCall, tool: AnyTool, options: PolicyOptions = {}): Promise<PolicyVerdict | undefined> {
    return this.evaluateWith(await this.readWorkspaceFile(), sessionId, call, tool, options);
  }

  /** The workspace's file read once for every call judged with what it answers (the waiting calls, when the rules change). */
  async snapshot(): Promise<(sessionId: string, call: ToolCall, tool: AnyTool) => Promise<PolicyVerdict | undefined>> {
    const file = await this.readWorkspaceFile();
    return (sessionId, call, tool) => this.evaluateWith(file, sessionId, call, tool, { preview: true });
  }

  private async evaluateWith(file: WorkspaceRules, sessionId: string, call: ToolCall, tool: AnyTool, options: PolicyOptions): Promise<PolicyVerdict | undefined> {
    const rules = [...[...this.kept.values()].map((kept) => kept.rule), ...this.fileRules(file)];
    if (rules.length === 0) return undefined;
    const context = this.ruleContext(sessionId, file.kind === 'loaded' && this.trustOf(file) === 'trusted');
    const decision = await evaluateRules(ruleCall(call.name, call.arguments, tool), rules, options.opened === undefined ? context : openedContext(context, options.opened));
    if (decision.decision === 'ask') {
      if ('covering' in decision) return gitDirectoryVerdict(decision.covering, decision.gitDirectory);
      if ('leadsOut' in decision) return leadsOutVerdict(decision.within, decision.leadsOut);
      if ('uncovered' in decision) return uncoveredVerdict(decision.within, decision.uncovered, decision.gitConfig);
      return 'because' in decision ? askedVerdict(decision.because, decision.unread) : undefined;
    }
    const rule = decision.rule;
    if (decision.decision === 'deny') {
      if (options.preview !== true) await this.countHit(rule.id);
      return { effect: 'deny', ruleId: rule.id, description: describeRule(rule), message: denialMessage(rule), ...origin(rule) };
    }
    // A command line can need one rule per part (`echo hi && pwd`): each is counted, and the card names them all.
    if (options.preview !== true) for (const used of decision.rules) await this.countHit(used.id);
    return { effect: 'allow', ruleId: rule.id, description: reason(...decision.rules.flatMap((used, index) => (index === 0 ? [describeRule(used)] : ['; and ', describeRule(used)]))) };
  }

  /**
   * What the rules are judged with, the same for `evaluate` and `preview`: the preview lists a call only where the
   * rule would decide it (links followed, a `cd` or `git -C` leading out, a write making a Git repository).
   */
  private ruleContext(sessionId: string, workspaceTrusted: boolean): RuleContext {
    return { sessionId, workspace: this.options.workspace, workspaceTrusted, realPath: this.realPath, leadsInside: this.leadsInside, gitLayoutWrite: this.gitLayoutWrite };
  }

  async list(): Promise<RuleView[]> {
    const file = await this.readWorkspaceFile();
    const own = [...this.kept.values()].map((kept) => view(kept, true));
    return [...own, ...this.fileRules(file).map(fileRuleView)];
  }

  async add(draft: RuleDraft): Promise<RuleView> {
    const rule = ruleDraftSchema.parse({ ...draft, source: 'user' });
    if (this.kept.size >= MAX_RULES) throw new LimitExceededError('rules (remove some first)', MAX_RULES);
    this.checkTotal(sizeOf(rule));
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
    this.checkTotal(sizeOf(rule) - sizeOf(existing.rule));
    const kept: Kept = { ...existing, rule: { ...rule, id: ruleId, createdAt: existing.rule.createdAt } };
    await this.options.store.saveRule(kept.rule);
    this.kept.set(ruleId, kept);
    this.changed();
    return view(kept, true);
  }

  /** Refuses a change that would take the rules past MAX_RULES_CHARS together (`added`: what it adds, perhaps less than 0). */
  private checkTotal(added: number): void {
    let total = 0;
    for (const kept of this.kept.values()) total += sizeOf(kept.rule);
    if (added > 0 && total + added > MAX_RULES_CHARS) throw new LimitExceededError('characters of rules together (remove some first)', MAX_RULES_CHARS);
  }

  async remove(ruleId: string): Promise<boolean> {
    if (this.unreadable.has(ruleId)) {
      await this.options.store.deleteRule(ruleId);
      this.unreadable.delete(ruleId);
      this.changed();
      return true;
    }
    if (!this.kept.has(ruleId)) return false;
    await this.options.store.deleteRule(ruleId);
    this.kept.delete(ruleId);
    this.changed();
    return true;
  }

  async propose(sessionId: string, call: { toolName: string; arguments: Record<string, unknown> }, scope: 'chat' | 'workspace' | 'global', tool?: AnyTool): Promise<{ draft: RuleDraft; description: Reason }> {
    const ruleScope = scope === 'chat' ? { kind: 'chat' as const, sessionId } : scope === 'workspace' ? { kind: 'workspace' as const, path: this.options.workspace } : { kind: 'global' as const };
    const draft = await proposeRule(ruleCall(call.toolName, call.arguments, tool), ruleScope, { workspace: this.options.workspace, owner: sessionId });
    // Found before the decision is made: a call whose arguments cannot be kept in a rule is not decided by an allow
    // that would then fail to save its rule.
    const checked = ruleDraftSchema.safeParse(draft);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new InvalidArgumentsError(call.toolName, [{ path: '(rule)', message: issue?.message ?? 'cannot be kept as a rule' }]);
    }
    return { draft: checked.data, description: describeRule(checked.data) };
  }

  async preview(draft: RuleDraft, calls: readonly ToolCallRecord[], tools: readonly AnyTool[] = []): Promise<ToolCallRecord[]> {
    const rule: Rule = { ...ruleDraftSchema.parse(draft), id: 'preview', createdAt: new Date(this.now()).toISOString() };
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const matched: ToolCallRecord[] = [];
    // Nothing runs while a preview is judged: the workspace is walked once for all its git calls, and each folder a
    // runner reads once for all the calls that ask about it.
    const walks: GitLooks = new Map();
    const linkWalks: LinkWalks = new Map();
    for (const call of calls) {
      // Judged with the tool as it is now, as `evaluate` judges a call: its declared defaults fill the rule's
      // arguments, its server and version name an MCP tool.
      const decision = await evaluateRules(ruleCall(call.toolName, call.arguments, byName.get(call.toolName)), [rule], { ...this.ruleContext(call.sessionId, true), walks, linkWalks });
      if (decision.decision !== 'ask') matched.push(call);
    }
    return matched;
  }

  async workspaceRules(): Promise<WorkspaceRulesStatus> {
    return this.statusOf(await this.readWorkspaceFile());
  }

  async trustWorkspace(choice: WorkspaceTrustChoice): Promise<WorkspaceRulesStatus> {
    if (!choice.trusted) {
      await this.options.store.setSetting(trustKey(this.options.workspace), undefined);
      this.trust = { kind: 'none' };
      this.changed();
      return this.workspaceRules();
    }
    const file = await this.readWorkspaceFile();
    // The person trusts what they were shown: a file rewritten since (by a call they allowed, say) is shown anew.
    if (file.kind !== 'loaded' || file.sha256 !== choice.sha256) {
      throw new ConflictError('workspace-rules-changed', `${this.filePath()} no longer holds the rules you were shown: read them again before trusting them`);
    }
    await this.options.store.setSetting(trustKey(this.options.workspace), `sha256:${file.sha256}`);
    this.trust = { kind: 'content', sha256: file.sha256 };
    this.changed();
    return this.statusOf(file);
  }

  /**
   * Called once the store has deleted the chat with its rules. The other instances are told to read the rules again
   * (whether or not this one held any of the chat's: one may have been added through another just now), so that no
   * rule of the deleted chat lists or decides anything for a new chat of the same id.
   */
  forgetSession(sessionId: string): void {
    for (const [id, kept] of this.kept) if (kept.rule.scope.kind === 'chat' && kept.rule.scope.sessionId === sessionId) this.kept.delete(id);
    this.changed();
  }

  private async countHit(ruleId: string): Promise<void> {
    const kept = this.kept.get(ruleId);
    if (!kept) return;
    const at = this.now();
    kept.hits += 1;
    kept.lastUsedAt = at;
    await this.options.store.recordRuleHit(ruleId, at);
  }

  private filePath(): string {
    return path.join(this.options.workspace, WORKSPACE_RULES_FILE);
  }

  /**
   * Reads the workspace's rules file (at most 256 KiB) at each use: its size and times cannot tell a rewrite
   * made within the file system's clock tick, or with its times put back, and the hash is what trust names.
   * Callers use the read they are given: a later read finishing first is never replaced by an earlier one.
   */
  private async readWorkspaceFile(): Promise<WorkspaceRules> {
    const read = ++this.fileReads;
    const loaded = await loadWorkspaceRules(this.options.workspace);
    if (read < this.fileReadShown) return loaded;
    this.fileReadShown = read;
    const previous = this.file;
    if (loaded.kind === previous.kind && contentOf(loaded) === contentOf(previous)) return previous;
    this.file = loaded;
    this.bump();
    if (loaded.kind === 'invalid') {
      const kept = this.lastValid?.denies.length ?? 0;
      const denies = kept === 1 ? 'the deny rule of its last valid content still applies' : `the ${kept} deny rules of its last valid content still apply`;
      this.log(`${loaded.error.message}. No allow rule from it applies${kept === 0 ? ', nor any deny rule.' : `; ${denies}.`}`);
    }
    if (loaded.kind === 'loaded' && this.lastValid?.sha256 !== loaded.sha256) await this.keepLastValid(loaded.sha256, loaded.rules);
    return loaded;
  }

  private async keepLastValid(sha256: string, rules: readonly Rule[]): Promise<void> {
    const lastValid: LastValid = { sha256, denies: rules.filter((rule) => rule.effect === 'deny') };
    this.lastValid = lastValid;
    await this.options.store
      .setSetting(lastValidKey(this.options.workspace), JSON.stringify(lastValid))
      .catch((error: unknown) => this.log(`Could not keep the deny rules of ${this.filePath()}: ${error instanceof Error ? error.message : String(error)}`));
  }

  private parseLastValid(stored: string | undefined): LastValid | undefined {
    if (stored === undefined) return undefined;
    try {
      const parsed = lastValidSchema.parse(parseUntrustedJson(stored));
      return { sha256: parsed.sha256, denies: parsed.denies.filter((rule) => rule.effect === 'deny' && rule.source === 'workspace-file') };
    } catch (error) {
      this.log(`The kept deny rules of ${this.filePath()} are unreadable and do not apply: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }

  /** The file's rules that take part in deciding: a valid file's own, or the last valid one's denies while it is invalid. */
  private fileRules(file: WorkspaceRules): readonly Rule[] {
    switch (file.kind) {
      case 'absent':
        return [];
      case 'loaded':
        return file.rules;
      case 'invalid':
        return this.lastValid?.denies ?? [];
    }
  }

  private trustOf(file: WorkspaceRules): WorkspaceTrust {
    switch (this.trust.kind) {
      case 'none':
        return 'untrusted';
      case 'unbound':
        return 'changed';
      case 'content':
        return contentOf(file) === this.trust.sha256 ? 'trusted' : 'changed';
    }
  }

  private statusOf(file: WorkspaceRules): WorkspaceRulesStatus {
    const sha256 = contentOf(file);
    return {
      file: this.filePath(),
      state: file.kind,
      ...(file.kind === 'invalid' ? { error: file.error.message } : {}),
      ...(sha256 === undefined ? {} : { sha256 }),
      trust: this.trustOf(file),
      rules: this.fileRules(file).map(fileRuleView),
    };
  }
}

/**
 * A deny rule applies and could not tell whether it catches the call: the person decides it, even with confirmation
 * off, and its card says why.
 */
function askedVerdict(rule: Rule, unread: Reason): PolicyVerdict {
  const what = rule.match.kind === 'path-glob' ? 'it cannot tell whether it names this file' : 'this command line could not be read whole';
  const description = reason('A deny rule applies (', describeRule(rule), `) and ${what} (`, unread, ')');
  return { effect: 'ask', ruleId: rule.id, description, ...origin(rule) };
}

/**
 * Why a command rule did not cover a line it names: where it works lies, or may lie, outside the workspace. The
 * words quoted are the model's, cut as every word of a call is. Said on the card; with confirmation off the call runs
 * as one no rule decides.
 */
function leadsOutVerdict(rule: Rule, leadsOut: LeadsOut): PolicyVerdict {
  const description =
    leadsOut.kind === 'moved'
      ? reason(codeWord(leadsOut.text), ' may leave the workspace, and the rule (', describeRule(rule), ') covers commands run inside it only')
      : reason(codeWord(leadsOut.text), ' may lead outside the workspace (by its text or a link), and the rule (', describeRule(rule), ') covers what a command names inside it only');
  return { effect: 'ask', ruleId: rule.id, description, onlyWhenConfirming: true, ...origin(rule) };
}

/**
 * Why a prefix rule that starts with a command's words did not cover it as given: the card says so, and for git
 * that may run what a Git config of the workspace sets, which config and key.
 */
function uncoveredVerdict(rule: Rule, name: string, gitConfig?: GitConfigCause): PolicyVerdict {
  if (gitConfig !== undefined) {
    const description = reason('The rule (', describeRule(rule), ') does not cover ', codeWord(name), ' here: ', gitConfigReason(gitConfig));
    return { effect: 'ask', ruleId: rule.id, description, onlyWhenConfirming: true, ...origin(rule) };
  }
  const description = reason(
    'The rule (',
    describeRule(rule),
    ') does not cover all that ',
    codeWord(name),
    ' is given here: an option or word it does not take (one that may run other code, read or write elsewhere, or a target or script word the rule does not name)',
  );
  return { effect: 'ask', ruleId: rule.id, description, onlyWhenConfirming: true, ...origin(rule) };
}

/** The ask for a write that makes a folder a Git repository; the folder's names are the model's, so they are not shown. */
function gitDirectoryVerdict(rule: Rule, folder: readonly string[]): PolicyVerdict {
  const where = folder.length === 0 ? 'the workspace folder' : 'a folder of the workspace';
  const description = reason(
    `This write would make ${where} a Git repository, or change one (with it, the folder holds a HEAD file and objects/ ` +
      `and refs/ folders): a git command run there later, in your own shell, runs what its config names, outside any ` +
      `sandbox. The rule `,
    describeRule(rule),
    ' does not cover that',
  );
  return { effect: 'ask', ruleId: rule.id, description, ...origin(rule) };
}

/**
 * Where a verdict's rule came from: one of the workspace's rules file is said to be, so the model is told of a deny
 * made from it (the rule's, or an allow's refused when the rule could not tell the call from one it denies) that it
 * is no word of the person's, as a deny read back from the call's ledger row is told by the rule's id.
 */
function origin(rule: Rule): { fromWorkspaceFile?: true } {
  return rule.source === 'workspace-file' ? { fromWorkspaceFile: true } : {};
}

/**
 * `context` for a call whose tool has opened what it acts on: its path rules judge that (its real path, and how many
 * names it has), read from the descriptor, rather than what the path leads to by the time they look.
 */
function openedContext(context: RuleContext, opened: OpenedPath): RuleContext {
  return { ...context, realPath: () => Promise.resolve(opened.real), linkCount: () => Promise.resolve(opened.links) };
}

/** Resolves a requested path as read_file, write_file and list_directory do; undefined where they would refuse it. */
function fileToolRealPath(workspace: string): (requested: string) => Promise<string | undefined> {
  const paths = new WorkspacePaths(workspace);
  return (requested) => paths.resolve(requested).catch(() => undefined);
}

/**
 * The person's trust in a workspace's own rules file, kept per workspace path across restarts: `sha256:<hex>` of
 * the content trusted. The value `trusted` of earlier versions names no content, so it trusts none.
 */
function trustKey(workspace: string): string {
  return `workspace-rules-trusted:${workspace}`;
}

function lastValidKey(workspace: string): string {
  return `workspace-rules-last-valid:${workspace}`;
}

function parseTrust(stored: string | undefined): StoredTrust {
  if (stored === undefined) return { kind: 'none' };
  const content = /^sha256:([0-9a-f]{64})$/.exec(stored);
  return content === null ? { kind: 'unbound' } : { kind: 'content', sha256: content[1]! };
}

function ruleCall(toolName: string, args: Record<string, unknown>, tool?: AnyTool): RuleCall {
  const withDefaults = tool === undefined ? {} : { withDefaults: (given: Record<string, unknown>) => withToolDefaults(tool, given) };
  const server = tool?.source?.startsWith('mcp:') ? tool.source.slice(4) : undefined;
  if (server === undefined || tool?.remoteName === undefined) return { tool: toolName, arguments: args, ...withDefaults };
  return { tool: toolName, arguments: args, mcp: { server, tool: tool.remoteName, toolVersion: toolDigest(tool) }, ...withDefaults };
}

const digests = new WeakMap<AnyTool, string>();

/** A SHA-256 of the tool's `toolVersion`, what an MCP tool rule made by "Always allow" keeps (see McpToolMatch). */
function toolDigest(tool: AnyTool): string {
  let digest = digests.get(tool);
  if (digest === undefined) {
    digest = createHash('sha256').update(toolVersion(tool)).digest('hex');
    digests.set(tool, digest);
  }
  return digest;
}

/** The hash of what was read, or undefined when nothing was. */
function contentOf(file: WorkspaceRules): string | undefined {
  return file.kind === 'absent' ? undefined : file.sha256;
}

function fileRuleView(rule: Rule): RuleView {
  return view({ rule, hits: 0, lastUsedAt: null }, false);
}

function view(kept: Kept, editable: boolean): RuleView {
  return { rule: kept.rule, description: describeRule(kept.rule), hits: kept.hits, lastUsedAt: kept.lastUsedAt, editable };
}
