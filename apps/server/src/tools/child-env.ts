import { cleanSearchPath } from './search-path';

/** Variables a child process may inherit; everything else (API keys, tokens, tool configuration) stays behind. */
const ALLOWED_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'TZ',
  'TMPDIR',
  'TEMP',
  'TMP',
  'COLORTERM',
  'NO_COLOR',
]);

const ALLOWED_PREFIXES = ['LC_'];

/** Names that look secret are dropped even when allowlisted (a `LC_TOKEN` is still a token). */
const SECRET_NAME = /(_KEY$|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)/i;

/** Secret values shorter than this are only matched whole, so a one-letter value cannot blank out PATH. */
const MIN_SECRET_SUBSTRING = 8;

export interface ChildEnvOptions {
  /** Where allowlisted variables are taken from. */
  source: Readonly<Record<string, string | undefined>>;
  /** Values that must never reach the child, whole or inside another value. Default none. */
  secretValues?: readonly string[];
  /** The child's working directory, exported as PWD. */
  cwd: string;
  /** The workspace: PATH loses its empty and relative entries and those in it (`cleanSearchPath`). Default: PATH as is. */
  workspace?: string;
  /** Variables the tool itself sets (e.g. PYTHONUNBUFFERED); secret filters apply to them too. Default none. */
  extra?: Readonly<Record<string, string>>;
}

/** The environment for a process the model runs: an allowlist of harmless variables, minus anything secret. */
export function buildChildEnv(options: ChildEnvOptions): Record<string, string> {
  const secrets = (options.secretValues ?? []).filter((value) => value.length > 0);
  const leaksSecret = (value: string) =>
    secrets.some((secret) => value === secret || (secret.length >= MIN_SECRET_SUBSTRING && value.includes(secret)));
  const env: Record<string, string> = {};
  const candidates: [string, string | undefined][] = [
    ...Object.entries(options.source).filter(([name]) => isAllowedName(name)),
    ['PWD', options.cwd],
    ...Object.entries(options.extra ?? {}),
  ];
  for (const [name, value] of candidates) {
    if (value === undefined || SECRET_NAME.test(name) || leaksSecret(value)) continue;
    env[name] = name === 'PATH' && options.workspace !== undefined ? cleanSearchPath(value, options.workspace).path : value;
  }
  return env;
}

function isAllowedName(name: string): boolean {
  return ALLOWED_NAMES.has(name) || ALLOWED_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/**
 * Git refuses a bare repository it finds by itself (Git 2.38 and later): a folder of the workspace holding `HEAD`,
 * `config` with `core.fsmonitor`, `objects/` and `refs/` as ordinary files (a clone can ship them) is otherwise taken
 * for a repository by `cd vendor/tool && git status`, which then runs that fsmonitor. Given as command-line
 * configuration, which no repository's config overrides, to every process Airlock starts that works on the
 * workspace: the tools' and the stdio MCP servers' (a Git MCP server's "read-only" status runs it as well, unsandboxed).
 */
export const PROCESS_GIT_CONFIG: readonly (readonly [string, string])[] = [['safe.bareRepository', 'explicit']];

/**
 * `env` with Git settings added as `git -c` would give them (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_<n>`,
 * `GIT_CONFIG_VALUE_<n>`), after the entries it already holds. A count Git would refuse is replaced.
 */
export function withGitConfig(env: Readonly<Record<string, string>>, settings: readonly (readonly [key: string, value: string])[]): Record<string, string> {
  const given = env.GIT_CONFIG_COUNT;
  const first = given !== undefined && /^\d{1,6}$/.test(given) ? Number(given) : 0;
  const result: Record<string, string> = { ...env, GIT_CONFIG_COUNT: String(first + settings.length) };
  settings.forEach(([key, value], index) => {
    result[`GIT_CONFIG_KEY_${first + index}`] = key;
    result[`GIT_CONFIG_VALUE_${first + index}`] = value;
  });
  return result;
}
