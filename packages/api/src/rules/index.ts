export * from './rule';
export { EXACT_ONLY_COMMANDS, PROPOSE_EXACT_COMMANDS, PREFIX_PROPOSED_COMMANDS, PREFIX_SUBCOMMANDS, GIT_PREFIX_SUBCOMMANDS, SUBCOMMAND_COMMANDS, RUNNER_SUBCOMMANDS, FOLLOWED_WRAPPERS, CROSS_TARGET, commandBaseName, isExactOnlyCommand, isExactOnlyProgram } from './exact-only-commands';
export { checkPathGlob, normalisePathGlob, escapeGlobName, matchPathGlob } from './path-glob';
export { checkHostPattern, normaliseHost, hostOfUrl, matchHost } from './host-match';
export { describeRule, denialMessage, quoteToken } from './describe-rule';
