import { canonicalJson, codeWord, reason, type Reason } from '@airlock/core';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { commandBaseName, hostOfUrl, isExactOnlyCommand, isExactOnlyProgram, matchHost } from '@airlock/api';
import { realProgramName } from './program-real-name';
import { allowsCommand, changesFileSystem, deniesCommand, folderAfter, installedNames, isWorkspaceProgram, leavesNoLink, runsProjectCode, setsShellVariables, type LineFacts } from './match-command';
import type { PathFacts } from './outside-workspace';
import { readCommandLine } from './command-line-reader';
import { commandPathUnderGit } from './command-path-inside';
import { folderHoldsLinkOut, type FoldersWalked, type LinkWalks } from './links-below';
import type { CommandLine, SimpleCommand } from './parse-command-line';
import type { ShellWord } from './shell-word';
import { COMPUTED_WORD, runnerCall } from './program-runners';
import { innerCommands } from './command-wrappers';
import { readsCommandsFromInput } from './reads-commands-from-input';
import { gitConfigCause, lookAtGitDirectories, submoduleConfigMayRun, type GitConfigCause, type GitLooks } from './submodule-configs';
import { opaqueProgramReason } from './opaque-program';
import { configFileMayRun } from './program-config-files';
import { GIT_RUNS_COMMANDS } from './git-arguments';
import { gitTopAboveWorkspace, type GitTopAbove } from './git-top-above';
import { matchPathGlob } from '@airlock/api';
import { workspaceRelativeNames } from './workspace-relative-names';
import { letterEscape, patternNaming } from './hidden-program-name';
import { MCP_TOOL, type Rule, type RuleScope } from '@airlock/api';
import { mcpToolName, mcpToolOtherNames } from '../mcp/mcp-tool';
import { isStrictlyWithin } from '../tools/path-within';

/** A tool call as the rules see it. */
export interface RuleCall {
  /** The tool name as the model sees it. */
  tool: string;
  arguments: Record<string, unknown>;
  /** Set for a tool an MCP server provides: the configured server name and the tool's name as the server lists it. */
  /** An MCP server's tool: its server, its name there, and a SHA-256 of its `toolVersion` (see McpToolMatch). */
  mcp?: { server: string; tool: string; toolVersion?: string };
  /**
   * The arguments given, with what the tool's schema declares for the ones left out filled in, as the loop fills a
   * call's (withToolDefaults): an exact-arguments rule written for `{}` is for the call that acts on the defaults.
   */
  withDefaults?: (args: Record<string, unknown>) => Readonly<Record<string, unknown>>;
}

export interface RuleContext {
  /** The chat the call belongs to. */
  sessionId: string;
  /**
   * What the looks at the Git directories of the workspace found so far for this judging (submodule-configs.ts),
   * shared by the calls judged with this context: for a draft rule's preview of past calls, where nothing runs
   * between them. Default: one call's rules and both their sides share one look.
   */
  walks?: GitLooks;
  /**
   * The walks for links leading out made so far for this judging (`folderHoldsLinkOut`), shared as `walks` is.
   * Default: one call's rules share one walk of each folder they ask about.
   */
  linkWalks?: LinkWalks;
  /** The workspace's absolute path, as workspace-scoped rules name it. */
  workspace: string;
  /** The person trusts this workspace: allow rules from its `.airlock/rules.json` count. Default: false. */
  workspaceTrusted?: boolean;
  /**
   * The real path a file tool would use for a requested path (links followed), or undefined when it would
   * refuse it. Given, a path must match a rule both as requested and as resolved to be allowed, and a deny
   * rule catches either. Default: paths are compared as requested only.
   */
  realPath?: (requested: string) => Promise<string | undefined>;
  /**
   * How many names (hard links) the regular file at an absolute real path has, or undefined for anything else. Given,
   * while a path deny rule applies to the tool, a file with more than one name is allowed by no path rule and is
   * asked about, naming the deny rule (another name may be one it denies). Default: with `realPath`, read from the
   * file system; without, not looked up.
   */
  linkCount?: (absolute: string) => Promise<number | undefined>;
  /**
   * Whether an absolute path a command line names leads inside the workspace once its links are followed, as the
   * programs it runs would follow them (false when that cannot be told). Given, the folder of a `cd` or `pushd`,
   * git's `-C` and the paths command rules check must lead inside by their real path as well as by their text, and a
   * glob among them counts as leading anywhere. Default: judged by their text only.
   */
  leadsInside?: (absolute: string) => Promise<boolean>;
  /**
   * Whether an absolute path a command line names leads, once its links are followed, into a `.git` folder of the
   * workspace (true when that cannot be told). Given, the paths command rules keep out of `.git` (a test runner's
   * operands) must stay out of it by where they lead as well as by their text: `pytest docs/hooks` with a link `docs
   * -> .git` the repository holds is asked about. Default: with `leadsInside`, looked up on the file system
   * (`commandPathUnderGit`); without, not looked up.
   */
  leadsUnderGit?: (absolute: string) => Promise<boolean>;
  /**
   * Whether the folder or file at an absolute path, or a folder above it in the workspace, holds a symbolic link that
   * leads out of the workspace or into `.git` (true when that cannot be told, or past the walk's bounds). Given, a
   * program that reads a folder and follows links there by itself (a test runner, a build or project tool: the folder
   * it runs in, or a test runner's operands) is allowed by no command rule while one is there: a link that arrived by
   * a call a rule allowed (`git checkout`, `tar -x`) leads it elsewhere. `folders`: those the program goes into
   * (`FoldersWalked`, default `collected`). Default: with `leadsInside`, looked up on the file system
   * (`folderHoldsLinkOut`); without, not looked up.
   */
  holdsLinkOut?: (absolute: string, folders?: FoldersWalked) => Promise<boolean>;
  /**
   * For the workspace-relative names of a file about to be written, the folder where the write would complete or
   * change a Git directory (`gitLayoutWrite`), or undefined. Given, no path rule allows such a write: it is asked,
   * saying why. Default: not looked up.
   */
  gitLayoutWrite?: (names: readonly string[]) => Promise<readonly string[] | undefined>;
  /**
   * The work tree git finds from a folder of the workspace when its top lies above the workspace (see
   * `PathFacts.gitTopAbove`). Default: with `leadsInside`, looked up on the file system (`gitTopAboveWorkspace`);
   * without, not looked up.
   */
  gitTopAbove?: (folder: string | undefined) => GitTopAbove | undefined;
}

/** The tools whose path rules allow writing a file. */
const WRITE_TOOLS = new Set(['write_file']);
/** Where the machine's own programs are: a program named by a path elsewhere may be one a call wrote or copied. */
const SYSTEM_PROGRAM_FOLDER = /^\/(?:usr\/(?:local\/)?(?:s?bin|lib(?:exec|32|64)?|games)|s?bin|lib(?:32|64)?|opt|snap\/bin|nix\/store|gnu\/store|run\/current-system\/sw\/bin)\/(?!(?:.*\/)?\.\.?(?:\/|$))/;

/** The most paths of one command line whose links are looked up: past that, the line is asked about. */
const MAX_PATH_LOOKUPS = 256;
/** The most folders of one command line looked in for links that lead out (each a bounded walk): past that, the same. */
const MAX_TREE_LOOKUPS = 16;

export type RuleDecision =
  | { decision: 'deny'; rule: Rule }
  /** `rules`: every allow rule used, one per part of a command line (`rule` is the first). */
  | { decision: 'allow'; rule: Rule; rules: readonly Rule[] }
  | { decision: 'ask' }
  /**
   * A command-prefix deny rule for the tool applies (`because`, the first) and the command line is not judged whole
   * (`unread` says what), or a path deny rule does and the file has another name (a hard link): the rule cannot tell
   * whether it catches it, so the person is asked even with confirmation off.
   */
  | { decision: 'ask'; because: Rule; unread: Reason }
  /**
   * A path rule (`covering`, the first) would allow the write, but it would complete or change a Git directory in
   * the folder `gitDirectory` (workspace-relative names, `[]` for the workspace): git would run what its `config`
   * says there, outside any sandbox. The person is asked, even with confirmation off.
   */
  | { decision: 'ask'; covering: Rule; gitDirectory: readonly string[] }
  /**
   * Command rules would allow the line but for where it works (`leadsOut`): a command runs after one that may have
   * led the shell out of the workspace (`cd /tmp && ls`), or is given a folder or path that may lead out of it, by
   * its text or its links (`git -C link status`). A rule covers what it names in the workspace, so the call is asked
   * about; `within` is the rule of the command so judged, which the card names with the reason. It is no verdict of
   * its own: with confirmation off the call runs as one no rule decides.
   */
  | { decision: 'ask'; within: Rule; leadsOut: LeadsOut }
  /**
   * One command of the line (its name `uncovered`) starts with the words of a prefix rule (`within`, the first such)
   * that does not cover it as given: an option or word the rule does not take (one that runs other code, reads or
   * writes elsewhere, talks to another repository, a target or script word it does not name), and every other
   * command is covered. As `leadsOut`, only what the card says: with confirmation off the call runs as before.
   * `gitConfig`: the command is git, and a Git config git reads for every repository that lies in the workspace (the
   * person's, in a workspace that is the home folder, or a file one of them includes) sets a key that runs something
   * (`gitConfigReason` says which).
   */
  | { decision: 'ask'; within: Rule; uncovered: string; gitConfig?: GitConfigCause };

/** What took a command line out of the workspace, for the card: the words the person can find in the line. */
export interface LeadsOut {
  /** `moved`: a command that may have led the shell out (`cd /tmp`, `cd -`, `popd`, `source x`); `named`: a word a command is given. */
  kind: 'moved' | 'named';
  /** The command (`cd /tmp`) or the word (`link`, `/etc`), as the rules read it (quotes around a `$NAME` dropped). */
  text: string;
}

const HARD_LINKED = reason('a file with more than one name (a hard link): another of its names may be one the rule denies');

const SCOPE_ORDER: Record<RuleScope['kind'], number> = { chat: 0, workspace: 1, global: 2 };

/**
 * What the rules decide for a call. A deny rule that matches wins over every allow, at every scope. Allow rules
 * from a workspace file count only when `workspaceTrusted` (the person trusts its content). A command line is
 * allowed only when the parser saw through all of it and every simple command in it is allowed by some rule, none
 * run after a `cd` that may have left the workspace (`lineFacts`); a deny rule catches it when any command found
 * anywhere in it (also where the parser could not see through) matches. A line no rule decides, that a command deny
 * rule applies to and that is not judged whole (`unjudged`), is an ask that names the rule. A write a path rule
 * would allow, that would complete or change a Git directory (`gitLayoutWrite`), is an ask that says where.
 */
export function evaluateRules(call: RuleCall, rules: readonly Rule[], context: RuleContext): Promise<RuleDecision> {
  // One call is judged at one moment: its rules and both sides share one walk of the workspace (submodule-configs.ts,
  // links-below.ts).
  return evaluateOnce(call, rules, { ...context, walks: context.walks ?? new Map(), linkWalks: context.linkWalks ?? new Map() });
}

async function evaluateOnce(call: RuleCall, rules: readonly Rule[], context: RuleContext): Promise<RuleDecision> {
  const applicable = rules
    .filter((rule) => appliesHere(rule, context))
    .sort((a, b) => SCOPE_ORDER[a.scope.kind] - SCOPE_ORDER[b.scope.kind] || sourceOrder(a) - sourceOrder(b));
  if (applicable.length === 0) return { decision: 'ask' };
  const view = new CallView(call, context);

  for (const rule of applicable) {
    if (rule.effect === 'deny' && (await view.denies(rule))) return { decision: 'deny', rule };
  }
  const allows = applicable.filter((rule) => rule.effect === 'allow');
  const commandDenies = applicable.filter((rule) => rule.effect === 'deny' && rule.match.kind === 'command-prefix' && rule.tool === call.tool);
  const [guard] = commandDenies;
  if (guard !== undefined) await view.lookAtGitDirectories();
  const unread = guard === undefined ? undefined : unjudged(await view.commandLine(), commandDenies, context);
  const ask: RuleDecision = guard === undefined || unread === undefined ? { decision: 'ask' } : { decision: 'ask', because: guard, unread };
  // A command line that led to more commands than are checked may hide one a deny rule would catch: while any such
  // rule applies, no rule allows it, not even one for its exact text.
  if (guard !== undefined) {
    const line = await view.commandLine();
    if (line?.kind === 'refused' && line.incomplete === true) return ask;
  }
  // A file with another name may be one a path deny rule names (`src/hard` for `secret/x`): no path rule allows it.
  const [pathGuard] = applicable.filter((rule) => rule.effect === 'deny' && rule.match.kind === 'path-glob' && rule.tool === call.tool);
  const linked: RuleDecision | undefined =
    pathGuard !== undefined && (await view.hardLinked()) ? { decision: 'ask', because: pathGuard, unread: HARD_LINKED } : undefined;
  let layout: Extract<RuleDecision, { covering: Rule }> | undefined;
  for (const rule of allows) {
    if (rule.match.kind === 'command-prefix' || (linked !== undefined && rule.match.kind === 'path-glob') || !(await view.allows(rule))) continue;
    const gitDirectory = rule.match.kind === 'path-glob' ? await view.gitDirectoryWritten() : undefined;
    if (gitDirectory === undefined) return { decision: 'allow', rule, rules: [rule] };
    layout ??= { decision: 'ask', covering: rule, gitDirectory };
  }
  if (layout !== undefined) return layout;
  if (linked !== undefined) return linked;
  const commandRules = allows.filter((rule) => rule.match.kind === 'command-prefix' && rule.tool === call.tool);
  if (commandRules.length === 0) return ask;
  const line = await view.commandLine();
  if (line?.kind !== 'seen') return ask;
  await view.lookAtGitDirectories();
  const judged = await judgeLine(line.commands, commandRules, context);
  if (judged === undefined) return ask;
  if ('within' in judged) return guard === undefined || unread === undefined ? { decision: 'ask', ...judged } : ask;
  const [first] = judged.rules;
  return first === undefined ? ask : { decision: 'allow', rule: first, rules: judged.rules };
}

/**
 * The rules that allow the commands of a line, one per command (each rule once); or, when the rules would allow it
 * but for where it works, the first place it leaves the workspace and the rule of the command so judged
 * (`outsideOf`); or undefined. Where a path leads once its links are followed (`context.leadsInside`, and whether
 * into `.git`: `leadsUnderGit`) is looked up between two passes: the first takes every path the rules check as its
 * text says and notes it, the second answers each from its lookup, a path the first did not note counting as outside
 * and under `.git`.
 */
async function judgeLine(
  commands: readonly SimpleCommand[],
  rules: readonly Rule[],
  context: RuleContext,
): Promise<{ rules: Rule[] } | { within: Rule; leadsOut: LeadsOut } | { within: Rule; uncovered: string } | undefined> {
  const { leadsInside } = context;
  let looked: Pick<LinePaths, 'leadsInside' | 'leadsUnderGit' | 'holdsLinkOut'> | undefined;
  if (leadsInside !== undefined) {
    const underGit = context.leadsUnderGit ?? commandPathUnderGit(context.workspace);
    const linkOut = context.holdsLinkOut ?? folderHoldsLinkOut(context.workspace, {}, context.linkWalks);
    const noted = new Set<string>();
    const notedGit = new Set<string>();
    // By the folders walked and the path (`treeKey`).
    const notedTrees = new Set<string>();
    const noting = {
      leadsInside: (absolute: string) => {
        noted.add(absolute);
        return true;
      },
      leadsUnderGit: (absolute: string) => {
        notedGit.add(absolute);
        return false;
      },
      holdsLinkOut: (absolute: string, folders: FoldersWalked = 'collected') => {
        notedTrees.add(treeKey(absolute, folders));
        return false;
      },
    };
    const first = rulesFor(commands, rules, lineFacts(commands, context, noting));
    if (first !== undefined && noted.size === 0 && notedGit.size === 0 && notedTrees.size === 0) return { rules: unique(first) };
    if (noted.size > MAX_PATH_LOOKUPS || notedGit.size > MAX_PATH_LOOKUPS || notedTrees.size > MAX_TREE_LOOKUPS) return undefined;
    const found = await answered(noted, (absolute) => leadsInside(absolute).catch(() => false));
    const underGitFound = await answered(notedGit, (absolute) => underGit(absolute).catch(() => true));
    const linkOutFound = await answered(notedTrees, (key) => {
      const [folders, absolute] = key.split('\0', 2) as [FoldersWalked, string];
      return linkOut(absolute, folders).catch(() => true);
    });
    // A path the first pass did not note counts as outside, as under `.git`, and as holding a link that leads out.
    looked = {
      leadsInside: (absolute) => found.has(absolute),
      leadsUnderGit: (absolute) => !notedGit.has(absolute) || underGitFound.has(absolute),
      holdsLinkOut: (absolute, folders = 'collected') => {
        const key = treeKey(absolute, folders);
        return !notedTrees.has(key) || linkOutFound.has(key);
      },
    };
    // A line not covered with every path inside is not covered with fewer: its lookups only say why.
    if (first !== undefined) {
      const second = rulesFor(commands, rules, lineFacts(commands, context, looked));
      if (second !== undefined) return { rules: unique(second) };
    }
  } else {
    const used = rulesFor(commands, rules, lineFacts(commands, context));
    if (used !== undefined) return { rules: unique(used) };
  }
  return outsideOf(commands, rules, context, looked) ?? namedNotCovered(commands, rules, lineFacts(commands, context, looked));
}

/** A walk for links leading out, as `judgeLine` notes it: the folders walked, then the path. */
const treeKey = (absolute: string, folders: FoldersWalked) => `${folders}\0${absolute}`;

/** The paths of `paths` for which `lookUp` answers true, looked up at once. */
async function answered(paths: ReadonlySet<string>, lookUp: (absolute: string) => Promise<boolean>): Promise<Set<string>> {
  const answers = await Promise.all([...paths].map(async (absolute) => [absolute, await lookUp(absolute)] as const));
  return new Set(answers.filter(([, answer]) => answer).map(([absolute]) => absolute));
}

/**
 * The one command of a line no rule covers, when a prefix rule starts with its words (`npm test` for `npm test --
 * --watch`, `git` for `git push https://…`) and every other command is covered: the rule and the command's name, for
 * the card. Undefined when no rule starts so, an exact rule alone does (it names all its words), or more than one
 * command is not covered.
 */
function namedNotCovered(commands: readonly SimpleCommand[], rules: readonly Rule[], facts: readonly LineFacts[]): { within: Rule; uncovered: string } | undefined {
  let found: { within: Rule; uncovered: string } | undefined;
  for (const [index, command] of commands.entries()) {
    if (facts[index]!.leftWorkspace === true) return undefined;
    if (rules.some((candidate) => candidate.match.kind === 'command-prefix' && allowsCommand(candidate.match, command, facts[index]))) continue;
    const [name] = command.words;
    const within = rules.find(
      (candidate) =>
        candidate.match.kind === 'command-prefix' &&
        !candidate.match.exact &&
        candidate.match.tokens.every((token, at) => {
          const word = command.words[at];
          return word?.kind === 'literal' && word.value === token;
        }),
    );
    if (found !== undefined || within === undefined || name?.kind !== 'literal') return undefined;
    const gitConfig = gitConfigCause(command, facts[index]!);
    found = { within, uncovered: name.value, ...(gitConfig === undefined ? {} : { gitConfig }) };
  }
  return found;
}

/**
 * Why the rules do not cover a line they would cover inside the workspace: judged once more with every word that
 * may lead out taken for one that stays inside, each noted where it stands. When the line is covered so, the first
 * noted is the reason and the rule of its command (for a command that moved the shell, of the first command after
 * it) is the one named. Never an allow: only what the card says.
 */
function outsideOf(
  commands: readonly SimpleCommand[],
  rules: readonly Rule[],
  context: RuleContext,
  looked: Pick<LinePaths, 'leadsInside' | 'leadsUnderGit' | 'holdsLinkOut'> | undefined,
): { within: Rule; leadsOut: LeadsOut } | undefined {
  const seen: { leadsOut: LeadsOut; at: number }[] = [];
  const facts = lineFacts(commands, context, { ...looked, seen: (leadsOut, at) => seen.push({ leadsOut, at }) });
  const used = rulesFor(commands, rules, facts);
  if (used === undefined) return undefined;
  // A command that moved the shell counts for those after it (a `cd` at the end moves none of them), a word for its own.
  const [first] = seen
    .map(({ leadsOut, at }) => ({ leadsOut, at: leadsOut.kind === 'moved' ? at + 1 : at }))
    .filter(({ at }) => at < commands.length)
    .sort((a, b) => a.at - b.at || (a.leadsOut.kind === 'moved' ? -1 : 1));
  if (first === undefined) return undefined;
  // The rule named is that of the first command it runs there, past more `cd`s (`cd /tmp && cd x && make test`).
  let at = first.at;
  if (first.leadsOut.kind === 'moved') while (at < commands.length - 1 && folderAfter(commands[at]!, {}) !== undefined) at += 1;
  const within = used[at];
  return within === undefined ? undefined : { within, leadsOut: first.leadsOut };
}

/** The rule that allows each command of a line, in its order, or undefined when some command is not allowed. */
function rulesFor(commands: readonly SimpleCommand[], rules: readonly Rule[], facts: readonly LineFacts[]): Rule[] | undefined {
  const used: Rule[] = [];
  for (const [index, command] of commands.entries()) {
    // After a `cd` that may have left the workspace, a command runs in a folder the person never saw, whose code it
    // may run (`cd ~/other && make test` its Makefile, `npm test` its package.json, `pytest` its conftest.py,
    // `./configure` itself): no command rule, prefix or exact, names where it runs. An `exact-arguments` rule for
    // the whole line (what "Always allow" proposes for it) names the `cd` too, and was judged above.
    if (facts[index]!.leftWorkspace === true) return undefined;
    const rule = rules.find((candidate) => candidate.match.kind === 'command-prefix' && allowsCommand(candidate.match, command, facts[index]));
    if (rule === undefined) return undefined;
    used.push(rule);
  }
  return used;
}

function unique(rules: readonly Rule[]): Rule[] {
  return [...new Set(rules)];
}

/**
 * What each command of a line is judged with: whether any command of the line may set variables, whether one
 * before it may have led the shell out of the workspace (`leftWorkspace`, each `cd` judged by the ones before it) or
 * changed the file system (`fileSystemChanged`: its paths may name anything by then), and the folder the `cd`s
 * before it name (where, with `leadsInside`, its relative paths are looked up). The commands a line shows run in its
 * order (a loop or a function is not seen through); a `cd` in a pipeline or in the background changes no folder for
 * the rest, but is counted as though it did. A command after it that may run while it runs (in its pipeline, or after it when it runs in the
 * background: `SimpleCommand.alongsideUntil`) counts for `fileSystemChanged` as one before it does, and for
 * `printedAsFound` when each such command runs code of the project's (`runsProjectCode`) or leaves no link (`leavesNoLink`).
 */
function lineFacts(commands: readonly SimpleCommand[], context: RuleContext, paths: LinePaths = {}): LineFacts[] {
  const { leadsInside, leadsUnderGit, holdsLinkOut, seen, pathsAsNow } = paths;
  const setsVariables = commands.some(setsShellVariables);
  const facts: LineFacts[] = [];
  let left = false;
  let changed = false;
  let changedOtherwise = false;
  let folder = context.workspace;
  const changes = commands.map(changesFileSystem);
  const otherChanges = commands.map((command, index) => changes[index] === true && !leavesNoLink(command) && !runsProjectCode(command));
  const gitTopAbove = context.gitTopAbove ?? (context.leadsInside === undefined ? undefined : gitTopAboveWorkspace(context.workspace));
  for (const [index, command] of commands.entries()) {
    // Those that run while it runs count as well as those before it: `pytest t | …`, `pytest t & rm -rf t; ln -s …`.
    const alongside = changes.slice(index + 1, command.alongsideUntil ?? index + 1).some(Boolean);
    const byProjectCode = !changedOtherwise && !otherChanges.slice(index + 1, command.alongsideUntil ?? index + 1).some(Boolean);
    const here: PathFacts = {
      workspace: context.workspace,
      ...(context.walks === undefined ? {} : { walks: context.walks }),
      leftWorkspace: left,
      ...((changed || alongside) && pathsAsNow !== true ? { fileSystemChanged: true, ...(byProjectCode ? { printedAsFound: true } : {}) } : {}),
      ...(changed || alongside ? { changedBefore: true } : {}),
      folder,
      ...(leadsInside === undefined ? {} : { leadsInside }),
      ...(leadsUnderGit === undefined ? {} : { leadsUnderGit }),
      ...(holdsLinkOut === undefined ? {} : { holdsLinkOut }),
      ...(gitTopAbove === undefined ? {} : { gitTopAbove }),
    };
    const outsideSeen = seen === undefined ? undefined : (word: ShellWord) => seen({ kind: 'named', text: wordText(word) }, index);
    facts.push({ setsVariables, ...here, ...(outsideSeen === undefined ? {} : { outsideSeen }), ...(pathsAsNow === true ? { onlyWhatRuns: true } : {}) });
    const next = folderAfter(command, here);
    if (next === 'outside') {
      if (seen === undefined) left = true;
      else seen({ kind: 'moved', text: command.words.map(wordText).join(' ') }, index);
    } else if (next?.folder !== undefined) folder = next.folder;
    if (changes[index] === true) changed = true;
    if (otherChanges[index] === true) changedOtherwise = true;
  }
  return facts;
}

/** How `lineFacts` looks at paths: where links lead (see `RuleContext.leadsInside`), and, only to say why, `seen`. */
interface LinePaths {
  leadsInside?: (absolute: string) => boolean;
  /** Whether a path leads into a `.git` folder of the workspace by its links (see `RuleContext.leadsUnderGit`). */
  leadsUnderGit?: (absolute: string) => boolean;
  /** Whether a folder a program reads may hold a link that leads out (see `RuleContext.holdsLinkOut`). */
  holdsLinkOut?: (absolute: string, folders?: FoldersWalked) => boolean;
  /**
   * Given, nothing counts as leading out of the workspace: each command that may lead the shell out, and each word
   * that may name a place outside, is handed here with the index of its command instead (`outsideOf`).
   */
  seen?: (leadsOut: LeadsOut, at: number) => void;
  /**
   * Only for `unjudged`: paths are judged by the file system as it is, even after a command that may change it (a
   * deny rule judges what runs, not where a path leads), and where a link a command makes leads is not judged
   * (`LineFacts.onlyWhatRuns`). Default: after such a command every path may lead out.
   */
  pathsAsNow?: boolean;
}

function wordText(word: ShellWord): string {
  return word.kind === 'literal' ? word.value : word.text;
}

/**
 * What keeps the command deny rules `denies` from judging a line whole, or undefined when they judge it: a deny rule
 * sees only the commands the parser found with the words it could read, so a line the reader refused (too long, too
 * deep, cut short, unreadable), or one that runs a command that is not plain, may run what a rule would catch.
 */
function unjudged(line: CommandLine | undefined, denies: readonly Rule[], context: RuleContext): Reason | undefined {
  if (line === undefined) return reason('no command line to read');
  if (line.kind === 'refused') return reason(line.reason);
  const denied = new Set(denies.flatMap((rule) => (rule.match.kind === 'command-prefix' ? [commandBaseName(rule.match.tokens[0] ?? '')] : [])));
  const facts = lineFacts(line.commands, context, { pathsAsNow: true });
  for (const [index, command] of line.commands.entries()) {
    const why = notPlain(command, denied, facts[index]!);
    if (why !== undefined) return why;
  }
  return undefined;
}

/**
 * Why a command is not plain, or undefined when it is: a plain command runs the program its literal name says, with
 * words that run no other (a prefix rule for its bare name would allow it: no shell, interpreter, wrapper or runner,
 * no option that runs code such as git's `-c` or `rebase -x`, nothing the deny side finds behind it such as `linux64
 * …`, `ccache …` or `scp -o ProxyCommand=…`), and, where a deny rule names the program, with every word known (`rm
 * -rf$IFS x` may be `rm -rf x`). No table of such programs is complete, so a command in whose words (other than its
 * name) a program a deny rule names stands, as a word or a word of a line inside one (`--httpd='rm -rf v x'`), is not
 * plain either: `echo rm` is asked about under a rule for `rm -rf`.
 */
function notPlain(command: SimpleCommand, denied: ReadonlySet<string>, facts: LineFacts): Reason | undefined {
  const [first] = command.words;
  if (first?.kind !== 'literal') return reason('a command whose name the shell computes');
  const name = commandBaseName(first.value);
  // git runs the subcommand its program's name says: `git-http-push …` is judged as `git http-push …` is.
  const dashed = /^git-([a-z][a-z0-9-]*)$/.exec(name);
  if (dashed !== null) return notPlain({ ...command, words: [{ kind: 'literal', value: 'git' }, { kind: 'literal', value: dashed[1]! }, ...command.words.slice(1)] }, denied, facts);
  const otherName = [...denied].find((program) => program !== name && mayBeCalled(name, program));
  if (otherName !== undefined) return reason(codeWord(name), ' may be ', codeWord(otherName), ', which a deny rule names, under another name');
  if (isExactOnlyProgram(first.value)) return reason(codeWord(name), ' runs whatever it is given');
  // A file of the workspace may be any program (a copy of a shell reading its input, a script a call wrote): what it
  // runs is not read, so it is not judged whole.
  if (isWorkspaceProgram(first.value) || (first.value.startsWith('/') && facts.workspace !== undefined && isWithinFolder(facts.workspace, first.value))) {
    return reason(codeWord(first.value), ' is a program of the workspace, which may run anything');
  }
  // Named by a path outside the system's program folders (`/tmp/e`, `~/bin/x`, `../x`), it may be a copy a call made
  // of a script of the workspace, as the workspace's own programs are: not judged whole either.
  if (first.value.includes('/') && !SYSTEM_PROGRAM_FOLDER.test(first.value)) {
    return reason(codeWord(first.value), ' is a program outside the system\'s folders, which may run anything');
  }
  // `editor` is vim, `/usr/bin/pager` is less: judged by the program the name leads to as well.
  const real = realProgramName(first.value);
  if (real !== undefined && isExactOnlyCommand(real)) return reason(codeWord(name), ' is ', codeWord(real), ', which runs whatever it is given');
  const realDenied = real === undefined ? undefined : [...denied].find((program) => program !== name && !readAs(name, program) && (readAs(real, program) || mayBeCalled(real, program)));
  if (realDenied !== undefined) return reason(codeWord(name), ' is ', codeWord(real!), ', which may be ', codeWord(realDenied), ', which a deny rule names');
  if (command.inputPiped === true && readsCommandsFromInput(command, facts.workspace)) return reason(codeWord(name), ' runs the commands its input holds, which the line pipes into it');
  if (runnerCall(command.words.map((word) => (word.kind === 'literal' ? word.value : COMPUTED_WORD))).kind !== 'none') return reason(codeWord(name), ' runs another program');
  if (submoduleConfigMayRun(command, facts)) {
    const cause = gitConfigCause(command, facts);
    if (cause !== undefined) return reason(codeWord(name), ' may run what a Git config says: ', gitConfigReason(cause));
    return reason(codeWord(name), ' runs what a Git directory of a submodule, worktree or nested repository sets, which a call may have written');
  }
  const config = configFileMayRun(command, facts);
  if (config !== undefined) return config;
  if (!allowsCommand({ kind: 'command-prefix', tokens: [first.value], exact: false }, command, facts)) return reason(codeWord(name), ' is given words that may run other code');
  const inner = innerCommands(command.words.map((word) => (word.kind === 'literal' ? word.value : undefined)));
  if (inner.words.length > 0 || inner.commandLines.length > 0) return reason(codeWord(name), ' runs another command');
  // Looked for in any word: a word after the subcommand that is one of these only asks once more.
  if (name === 'git' && command.words.some((word) => word.kind === 'literal' && GIT_RUNS_COMMANDS.has(word.value))) return reason(codeWord('git'), ' runs a command it is given');
  if (denied.has(name) && command.words.some((word) => word.kind !== 'literal')) return reason(codeWord(name), ' is given a word the shell computes');
  const named = deniedNameIn(command.words.slice(1), denied);
  if (named !== undefined) return reason(codeWord(named), ', which a deny rule names, stands in a word given to ', codeWord(name));
  // No table of programs that run what they are given is complete: one not known to only read and print is judged
  // by what it is fed and given (`… | base64 -d | erl`, `fakeroot-sysv sh -c …`).
  return hiddenNameIn(command.words.slice(1), denied, name) ?? opaqueProgramReason(command, first.value);
}

/**
 * What a Git config git reads for every repository sets that makes a git call run what a call may have written, for
 * the card: the file (or the variable of the call's environment) and the key.
 */
export function gitConfigReason(cause: GitConfigCause): Reason {
  if (cause.bound === true) return reason('more Git configs are included than are looked at (past ', codeWord(cause.file), '), and one of the rest may set a key that runs a program');
  if (cause.key === undefined) return reason(codeWord(cause.file), ', a Git config git reads for every repository, lies in the workspace and is not there yet or cannot be read: a call may write it');
  if (/^GIT_CONFIG_/.test(cause.file)) return reason(codeWord(cause.file), ' of the environment git runs with sets ', codeWord(cause.key), ', which runs a program');
  return reason(
    codeWord(cause.file),
    ' sets ',
    codeWord(cause.key),
    ', which runs a program or leads to one; git reads this file for every repository, and it lies in the workspace, where a call may have written it',
  );
}

/**
 * Whether the program named `name` may be `program` installed under a name the deny side does not read as the
 * program's: one that holds it as a part (`npm-install-helper`, `git-credential-x`). The names it does read as the
 * program's (`pip3`, `npm-cli.js`, git's `git-push` as `git push`: see `installedNames`, `deniesCommand`) are judged as
 * the program itself. No list of such names is complete, so under a deny rule for the program such a command is
 * asked about rather than run unjudged.
 */
function mayBeCalled(name: string, program: string): boolean {
  if (readAs(name, program)) return false;
  return name.split(/[-._]/).some((part) => part === program || part.replace(/\d+$/, '') === program);
}

/** Whether the deny side reads a command named `name` as `program` (`pip3` as pip, `git-push` as `git push`). */
function readAs(name: string, program: string): boolean {
  return installedNames(name).has(program) || (program === 'git' && /^git-[a-z][a-z0-9-]*$/.test(name));
}

/**
 * Why a word given to `name` may become a program a deny rule names where it runs, or undefined: a pattern the
 * shell expands to one (`ld.so /bin/r[m] -rf x`, `{r,x}m`), or an escape printf, `echo -e` or `$'…'` turns into a
 * letter (`printf '\x72m -rf x' | ninja -f /dev/stdin`). Looked for only under a command deny rule, in one pass.
 */
function hiddenNameIn(words: readonly ShellWord[], denied: ReadonlySet<string>, name: string): Reason | undefined {
  if (denied.size === 0) return undefined;
  for (const word of words) {
    const text = word.kind === 'literal' ? word.value : word.text;
    const pattern = patternNaming(text, denied, INNER_WORD_SEPARATORS_BUT_BRACES);
    if (pattern !== undefined) return reason('a word given to ', codeWord(name), ' is a pattern that may name ', codeWord(pattern), ', which a deny rule names');
    const escape = letterEscape(text);
    if (escape !== undefined) return reason('a word given to ', codeWord(name), ' holds an escape (', codeWord(escape), ') that may spell a program a deny rule names');
  }
  return undefined;
}

/** What splits a word into the words of a command line it may hold (`ProxyCommand=rm -rf v`, `a;rm`, `x,rm`). */
const INNER_WORD_SEPARATORS = /[\s=;&|()<>`{},:]+/;
/** The same, for patterns: a brace expression is read whole (`{r,x}m`). */
const INNER_WORD_SEPARATORS_BUT_BRACES = /[\s=;&|()<>`:]+/;

/**
 * The first program of `denied` whose name (`/bin/rm` as `rm`) stands in `words` as a word or as a word of a line
 * one holds, quotes and backslashes dropped (`'r'm` is `rm` to a shell that reads it).
 */
function deniedNameIn(words: readonly ShellWord[], denied: ReadonlySet<string>): string | undefined {
  if (denied.size === 0) return undefined;
  for (const word of words) {
    const text = (word.kind === 'literal' ? word.value : word.text).replace(/["'\\]/g, '');
    for (const token of text.split(INNER_WORD_SEPARATORS)) {
      const base = commandBaseName(token);
      if (denied.has(base)) return base;
    }
  }
  return undefined;
}

async function fileLinkCount(absolute: string): Promise<number | undefined> {
  const found = await stat(absolute);
  return found.isFile() ? found.nlink : undefined;
}

function sourceOrder(rule: Rule): number {
  return rule.source === 'user' ? 0 : 1;
}

function appliesHere(rule: Rule, context: RuleContext): boolean {
  if (rule.effect === 'allow' && rule.source === 'workspace-file' && context.workspaceTrusted !== true) return false;
  switch (rule.scope.kind) {
    case 'chat':
      return rule.scope.sessionId === context.sessionId;
    case 'workspace':
      return path.resolve(rule.scope.path) === path.resolve(context.workspace);
    case 'global':
      return true;
  }
}

/** What one call is, worked out once and only as far as the rules at hand need. */
class CallView {
  #commandLine: Promise<CommandLine | undefined> | undefined;
  #paths: Promise<{ requested: string[] | undefined; real: string[] | undefined; resolved: boolean; absolute?: string }> | undefined;
  #gitDirectory: Promise<readonly string[] | undefined> | undefined;

  constructor(
    private readonly call: RuleCall,
    private readonly context: RuleContext,
  ) {}

  commandLine(): Promise<CommandLine | undefined> {
    const command = this.call.arguments.command;
    this.#commandLine ??= typeof command === 'string' ? readCommandLine(command, this.context.sessionId) : Promise.resolve(undefined);
    return this.#commandLine;
  }

  /**
   * Looks, before the line is judged, at the Git directories its git calls may read (`lookAtGitDirectories`), so that
   * the judging, which cannot wait, finds them in `context.walks`.
   */
  async lookAtGitDirectories(): Promise<void> {
    const line = await this.commandLine();
    const { walks } = this.context;
    if (line?.kind !== 'seen' || walks === undefined) return;
    await lookAtGitDirectories(line.commands, lineFacts(line.commands, this.context), walks);
  }

  paths(): Promise<{ requested: string[] | undefined; real: string[] | undefined; resolved: boolean; absolute?: string }> {
    this.#paths ??= (async () => {
      const given = this.call.arguments.path ?? (this.call.tool === 'list_directory' ? '.' : undefined);
      if (typeof given !== 'string') return { requested: undefined, real: undefined, resolved: false };
      const requested = workspaceRelativeNames(this.context.workspace, given);
      if (this.context.realPath === undefined) return { requested, real: undefined, resolved: false };
      const real = await this.context.realPath(given).catch(() => undefined);
      if (real === undefined) return { requested, real: undefined, resolved: true };
      return { requested, real: workspaceRelativeNames(this.context.workspace, real), resolved: true, absolute: real };
    })();
    return this.#paths;
  }

  /** Whether this call's file, as resolved, is a regular file with more than one name (`context.linkCount`). */
  async hardLinked(): Promise<boolean> {
    const { absolute } = await this.paths();
    const count = this.context.linkCount ?? (this.context.realPath === undefined ? undefined : fileLinkCount);
    if (absolute === undefined || count === undefined) return false;
    return ((await count(absolute).catch(() => undefined)) ?? 1) > 1;
  }

  /** Where writing this call's file would complete or change a Git directory (`context.gitLayoutWrite`), if anywhere. */
  gitDirectoryWritten(): Promise<readonly string[] | undefined> {
    this.#gitDirectory ??= (async () => {
      const { gitLayoutWrite } = this.context;
      if (gitLayoutWrite === undefined || !WRITE_TOOLS.has(this.call.tool)) return undefined;
      const { requested, real } = await this.paths();
      for (const names of [requested, real]) {
        const folder = names === undefined ? undefined : await gitLayoutWrite(names);
        if (folder !== undefined) return folder;
      }
      return undefined;
    })();
    return this.#gitDirectory;
  }

  async denies(rule: Rule): Promise<boolean> {
    const { match } = rule;
    switch (match.kind) {
      case 'command-prefix': {
        if (rule.tool !== this.call.tool) return false;
        const line = await this.commandLine();
        return line !== undefined && line.reachable.some((words) => deniesCommand(match, words));
      }
      case 'path-glob': {
        if (rule.tool !== this.call.tool) return false;
        const { requested, real } = await this.paths();
        return [requested, real].some((names) => names !== undefined && matchPathGlob(match.glob, names));
      }
      case 'host':
      case 'mcp-tool':
      case 'mcp-server':
      case 'exact-arguments':
        return this.matchesPlainly(rule);
    }
  }

  async allows(rule: Rule): Promise<boolean> {
    const { match } = rule;
    switch (match.kind) {
      case 'command-prefix':
        return false;
      case 'path-glob': {
        if (rule.tool !== this.call.tool) return false;
        const { requested, real, resolved } = await this.paths();
        if (requested === undefined || !matchPathGlob(match.glob, requested)) return false;
        return !resolved || (real !== undefined && matchPathGlob(match.glob, real));
      }
      case 'host':
      case 'mcp-tool':
      case 'mcp-server':
      case 'exact-arguments':
        return this.matchesPlainly(rule);
    }
  }

  private matchesPlainly(rule: Rule): boolean {
    const { match } = rule;
    const { call } = this;
    switch (match.kind) {
      case 'host': {
        const url = call.arguments.url;
        const host = rule.tool === call.tool && typeof url === 'string' ? hostOfUrl(url) : undefined;
        return host !== undefined && matchHost(match.host, host);
      }
      case 'mcp-tool':
        // A deny covers the tool in every version; an allow made for one version covers only that one.
        return (
          rule.tool === MCP_TOOL &&
          call.mcp?.server === match.server &&
          call.mcp.tool === match.tool &&
          (rule.effect === 'deny' || match.toolVersion === undefined || match.toolVersion === call.mcp.toolVersion)
        );
      case 'mcp-server':
        return rule.tool === MCP_TOOL && call.mcp?.server === match.server;
      case 'exact-arguments':
        // The call's arguments have the tool's declared defaults filled in; so, for the comparison, have the rule's.
        return namesTool(rule, call) && canonicalJson(call.withDefaults?.(match.arguments) ?? match.arguments) === canonicalJson(call.arguments);
      case 'command-prefix':
      case 'path-glob':
        return false;
    }
  }
}

/**
 * Whether an exact-arguments rule names the call's tool. A deny rule also names an MCP tool by its plain
 * `<server>__<tool>` when the tool is offered under a hashed name because that name would read as another server's
 * tool (`mcpToolName`): a rule written before the hash, or for the name as it read, must not stop denying. That name
 * may be two servers' tools: a deny covers each, an allow none, since it does not say which one was meant. So does a
 * deny naming the tool with that hash once the other server is gone and the name is plain again (the hash is of the
 * server and the tool: it means this tool alone, and an allow still none, as it was written for another name).
 */
function namesTool(rule: Rule, call: RuleCall): boolean {
  if (rule.tool === call.tool) return true;
  if (rule.effect !== 'deny' || call.mcp === undefined) return false;
  const { server, tool } = call.mcp;
  return rule.tool === mcpToolName(server, tool) || mcpToolOtherNames(server, tool).includes(rule.tool);
}

/** Whether `entry` (absolute) lies inside `folder` (a name there starting with `..`, `..x`, is inside too). */
function isWithinFolder(folder: string, entry: string): boolean {
  return isStrictlyWithin(folder, entry);
}
