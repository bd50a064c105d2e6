import type { RuleCall } from './evaluate-rules';
import {
  isExactOnlyCommand,
  isExactOnlyProgram,
  PREFIX_PROPOSED_COMMANDS,
  PROPOSE_EXACT_COMMANDS,
  PREFIX_SUBCOMMANDS,
  RUNNER_SUBCOMMANDS,
  SUBCOMMAND_COMMANDS,
  commandBaseName,
} from '@airlock/api';
import { hostOfUrl } from '@airlock/api';
import { allowsCommand, isKnownProgram, isWorkspaceProgram } from './match-command';
import { lookAtGitDirectories, type GitLooks } from './submodule-configs';
import { COMPUTED_WORD, runnerCall } from './program-runners';
import { readCommandLine } from './command-line-reader';
import type { SimpleCommand } from './parse-command-line';
import { escapeGlobName } from '@airlock/api';
import { workspaceRelativeNames } from './workspace-relative-names';
import { COMMAND_TOOL, MCP_TOOL, URL_TOOL, ruleDraftSchema, type RuleDraft, type RuleMatch, type RuleScope } from '@airlock/api';

/** A subcommand or script name, not an option, a path or a value. */
const SUBCOMMAND_LIKE = /^[A-Za-z][A-Za-z0-9_:.-]*$/;

export interface ProposeRuleOptions {
  /** The workspace's absolute path: path rules are relative to it. */
  workspace: string;
  /** The chat asking: its command lines take turns with other chats' in the reader. */
  owner?: string;
}

/**
 * The allow rule "Always allow" on `call` would save: `npm test --silent` → commands starting with
 * `npm test`; `ls -la` → commands starting with `ls` (only for `PREFIX_PROPOSED_COMMANDS`); any other command, a
 * program of the workspace (`./scripts/check.sh --fast`) and `npm install x` included → that exact command; a file →
 * that file (a read: its folder); a fetch → its host; an MCP call → that tool. Anything else → these exact arguments.
 */
export async function proposeRule(call: RuleCall, scope: RuleScope, options: ProposeRuleOptions): Promise<RuleDraft> {
  const fallback: RuleDraft = { effect: 'allow', tool: call.tool, match: { kind: 'exact-arguments', arguments: call.arguments }, scope, source: 'user' };
  const match = await proposeMatch(call, options);
  if (match === undefined) return fallback;
  const proposed = ruleDraftSchema.safeParse({ ...fallback, tool: match.kind === 'mcp-tool' ? MCP_TOOL : call.tool, match });
  return proposed.success ? proposed.data : fallback;
}

async function proposeMatch(call: RuleCall, options: ProposeRuleOptions): Promise<RuleMatch | undefined> {
  if (call.mcp !== undefined) {
    const { server, tool, toolVersion } = call.mcp;
    return { kind: 'mcp-tool', server, tool, ...(toolVersion === undefined ? {} : { toolVersion }) };
  }
  switch (call.tool) {
    case COMMAND_TOOL:
      return typeof call.arguments.command === 'string' ? proposeCommand(call.arguments.command, options) : undefined;
    case URL_TOOL:
      return typeof call.arguments.url === 'string' ? proposeHost(call.arguments.url) : undefined;
    case 'read_file':
    case 'write_file':
    case 'list_directory':
      return proposePath(call, options.workspace);
    default:
      return undefined;
  }
}

async function proposeCommand(text: string, options: ProposeRuleOptions): Promise<RuleMatch | undefined> {
  const line = await readCommandLine(text, options.owner);
  if (line.kind !== 'seen' || line.commands.length !== 1) return undefined;
  const command = line.commands[0]!;
  const proposal = prefixFor(command);
  // A prefix that would not cover the very call it is made from (an option that runs other code) is made exact.
  // The Git directories its git calls may read are looked at first: the judging cannot wait for them.
  const facts = { workspace: options.workspace, folder: options.workspace, walks: new Map() as GitLooks };
  await lookAtGitDirectories([command], [facts], facts.walks);
  if (proposal?.kind === 'command-prefix' && !proposal.exact && !allowsCommand(proposal, command, facts)) return exactFor(command);
  return proposal;
}

function exactFor(command: SimpleCommand): RuleMatch | undefined {
  const tokens: string[] = [];
  for (const word of command.words) {
    if (word.kind !== 'literal') return undefined;
    tokens.push(word.value);
  }
  return { kind: 'command-prefix', tokens, exact: true };
}

function prefixFor(command: SimpleCommand): RuleMatch | undefined {
  const words = command.words;
  const literal: string[] = [];
  for (const word of words) {
    if (word.kind !== 'literal') break;
    literal.push(word.value);
  }
  const everyWordKnown = literal.length === words.length;
  const exact = everyWordKnown ? ({ kind: 'command-prefix', tokens: literal, exact: true } as const) : undefined;
  const [name] = literal;
  if (name === undefined) return undefined;
  // A program of the workspace is judged by no table: a rule for it covers only the words it names.
  if (isWorkspaceProgram(name)) return exact;
  const base = commandBaseName(name);
  if (isExactOnlyProgram(name) || PROPOSE_EXACT_COMMANDS.has(base)) return exact;
  // The person saw a dry run: a prefix rule would cover the real one (`npm publish --dry-run` → `npm publish`).
  if (literal.some(isDryRun)) return exact;
  const call = runnerCall(words.map((word) => (word.kind === 'literal' ? word.value : COMPUTED_WORD)));
  const program = call.kind === 'runner' ? words[call.program] : undefined;
  if (call.kind === 'runner' && (call.head.length > 1 || (program?.kind === 'literal' && isKnownProgram(program.value)))) {
    // What a runner runs is proposed as that command would be (`uv run rm -rf x` exact, as `rm -rf x` is), without
    // the runner's harmless options (`uv run --frozen make test` → `uv run make test`).
    const target = program === undefined ? undefined : prefixFor({ ...command, words: words.slice(call.program) });
    if (target?.kind !== 'command-prefix' || target.exact) return exact;
    return { kind: 'command-prefix', tokens: [...call.head, ...target.tokens], exact: false };
  }
  if (!SUBCOMMAND_COMMANDS.has(base)) return PREFIX_PROPOSED_COMMANDS.has(base) ? { kind: 'command-prefix', tokens: [name], exact: false } : exact;

  const [, subcommand, target] = literal;
  if (subcommand === undefined || !SUBCOMMAND_LIKE.test(subcommand)) return exact;
  // A pnpm or Yarn word that is none of its own commands names one of the project's scripts or programs (`pnpm lint`).
  const script = call.kind === 'runner';
  if (!script && base !== 'make' && PREFIX_SUBCOMMANDS.get(base)?.has(subcommand) !== true) return exact;
  if (base === 'make' || !RUNNER_SUBCOMMANDS.has(subcommand)) return { kind: 'command-prefix', tokens: [name, subcommand], exact: false };
  // A script's name (`npm run build`); programs that runners run are judged above.
  if (target === undefined || !SUBCOMMAND_LIKE.test(target) || isExactOnlyCommand(commandBaseName(target))) return exact;
  return { kind: 'command-prefix', tokens: [name, subcommand, target], exact: false };
}

function isDryRun(word: string): boolean {
  return word === '--dry-run' || word === '--dryrun' || word.startsWith('--dry-run=');
}

/**
 * A host rule covers every port and both schemes of the host. It is proposed only for a named host at its scheme's
 * own port (`https://docs.example.com/a`): a URL with a port of its own (`http://127.0.0.1:8000/`, where the next port
 * may be another service's API), or with an address for a host, or `localhost`, is allowed as these exact arguments.
 */
function proposeHost(url: string): RuleMatch | undefined {
  const host = hostOfUrl(url);
  if (host === undefined) return undefined;
  const { port } = new URL(url);
  const address = host.startsWith('[') || /^[0-9.]+$/.test(host);
  if (port !== '' || address || host === 'localhost' || host.endsWith('.localhost')) return undefined;
  return { kind: 'host', host };
}

function proposePath(call: RuleCall, workspace: string): RuleMatch | undefined {
  const given = call.arguments.path ?? (call.tool === 'list_directory' ? '.' : undefined);
  if (typeof given !== 'string') return undefined;
  const names = workspaceRelativeNames(workspace, given);
  if (names === undefined) return undefined;
  const escaped = names.map(escapeGlobName);
  if (call.tool === 'list_directory') return { kind: 'path-glob', glob: [...escaped, '**'].join('/') };
  if (escaped.length === 0) return undefined;
  if (call.tool === 'read_file' && escaped.length > 1) return { kind: 'path-glob', glob: [...escaped.slice(0, -1), '**'].join('/') };
  return { kind: 'path-glob', glob: escaped.join('/') };
}
