import { codeWord, reason, type Reason } from '@airlock/core';
import { lstatSync, opendirSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import path from 'node:path';
import { commandBaseName } from '@airlock/api';
import { buildChildEnv } from '../tools/child-env';
import { readSmallFile } from '../tools/workspace-git-dir';
import { isWithin } from '../tools/path-within';
import type { LineFacts } from './match-command';
import type { SimpleCommand } from './parse-command-line';
import { gitGlobalOptions } from './git-arguments';
import { packageManagerCommand } from './package-manager-commands';
import { NPM_HARMLESS } from './program-runners';
import { tomlSets } from './toml-keys';

/** A go env file larger than this is taken as setting what go runs (go env -w writes a few lines). */
const MAX_GO_ENV_BYTES = 64 * 1024;
/** A kubeconfig larger than this is taken as naming a command (one with a few clusters' certificates is ~20 KiB). */
const MAX_KUBECONFIG_BYTES = 256 * 1024;
/** The most entries of the module cache's `golang.org` folder read: past that, one is taken as a toolchain. */
const MAX_CACHE_ENTRIES = 4096;
/** Links followed and folders gone up at most in finding where a path leads. */
const MAX_LEAD_STEPS = 64;

/**
 * Keys of a go env file that run nothing and fetch nothing, whatever their value: the target, the module mode and
 * telemetry. Any other key set to a value may (`GOFLAGS=-toolexec=…`, `CC`, `GOTOOLCHAIN`, `GOPROXY` with `GOSUMDB=off`,
 * `GOAUTH=command …`, `GOMODCACHE` leading to a planted toolchain).
 */
const GO_ENV_HARMLESS: ReadonlySet<string> = new Set([
  'GO111MODULE', 'GOOS', 'GOARCH', 'GOAMD64', 'GOARM', 'GOARM64', 'GO386', 'GOMIPS', 'GOMIPS64', 'GOPPC64',
  'GORISCV64', 'GOWASM', 'GOEXPERIMENT', 'GOTELEMETRY', 'CGO_ENABLED',
]);

/**
 * Programs that read the person's kubeconfig and run its users' `exec` credential plugins (client-go): kubecolor runs
 * kubectl with its words, stern and k9s are built on the same library.
 */
const KUBECONFIG_READERS: ReadonlySet<string> = new Set(['kubectl', 'oc', 'helm', 'kubecolor', 'stern', 'k9s']);
/** A gh config larger than this is taken as naming a program (gh writes a few lines). */
const MAX_GH_CONFIG_BYTES = 64 * 1024;
/**
 * What in gh's config names a program it runs: a `browser`, `editor` or `pager` given a value (gh writes them empty),
 * at any depth (a host's own), an alias whose value starts with `!` (a shell line, quoted or anchored), and any flow
 * mapping, backslash, block scalar or YAML alias, which a line's look cannot read.
 */
const GH_CONFIG_RUNS = /[{\\]|:[ \t]*(?:&\S+[ \t]+)?(?:["']?!|[|>*])|^\s*["']?(?:browser|editor|pager)["']?\s*:[ \t]*(?!(?:""|''|~|null)?[ \t]*(?:#.*)?$)\S/im;
/** A Yarn rc file or an `nx.json` larger than this is taken as naming a program (each holds some lines). */
const MAX_PROJECT_CONFIG_BYTES = 64 * 1024;
/**
 * What in a `.yarnrc.yml` names code Yarn runs at every command, `yarn why` and `yarn --version` too: `yarnPath`
 * (node runs that file in Yarn's place; Yarn 1 reads it as well) and `plugins` (each loaded), as a key at any depth
 * (an anchor may be merged in) and in any case, but for `plugins: []`; and any flow mapping (not a `${NAME}` Yarn
 * puts a variable in), backslash or explicit key (`? yarnPath`), which a line's look cannot read.
 */
const YARNRC_YML_RUNS = /(?<!\$)\{|\\|^\s*\?|^\s*["']?(yarn[-_]?path|plugins)["']?\s*:(?![ \t]*\[[ \t]*\][ \t]*(?:#.*)?$)/im;
/** What in Yarn 1's `.yarnrc` names the program it runs in its own place (`yarn-path "./x.js"`), and any backslash. */
const YARNRC_RUNS = /\\|^\s*["']?(?:--)?(yarn[-_]?path)\b/im;
/**
 * What in pnpm's `.npmrc` or `pnpm-workspace.yaml` names code it loads at every command: a `pnpmfile` or
 * `global-pnpmfile` (`globalPnpmfile`), and `configDependencies`, whose `pnpm-plugin-*` pnpmfiles are loaded; not
 * `ignore-pnpmfile`. Any backslash too.
 */
const PNPM_SETTINGS_RUN = /\\|(?<![\w-])((?:global-?)?pnpmfile|config-?dependencies)(?![\w-])/i;
/**
 * A file a program reads in each folder it looks in, and what in it runs code (its first group that matched the key);
 * none: the file is code the program loads.
 */
interface ProjectConfig {
  file: string;
  runs?: RegExp | ((text: string) => string | null);
  /** A folder whose every entry the program loads, which counts when it holds any. Default: false. */
  folder?: boolean;
}
/**
 * The files pnpm reads from the folder it runs in and each folder above: the pnpmfile whose hooks pnpm 10.8 and later
 * load at every command (`updateConfig`), `pnpm ls` and `pnpm why` too, and the settings that name one.
 */
const PNPM_CONFIGS: readonly ProjectConfig[] = [
  { file: '.pnpmfile.cjs' },
  { file: '.pnpmfile.mjs' },
  { file: '.npmrc', runs: PNPM_SETTINGS_RUN },
  { file: 'pnpm-workspace.yaml', runs: PNPM_SETTINGS_RUN },
];
/** The options that name the folder each runs in, whose config it reads. */
const FOLDER_OPTIONS = new Map([
  ['yarn', ['--cwd']],
  // Read by pnpmFolders, which knows every spelling of pnpm's --dir.
  ['pnpm', ['--dir']],
  ['composer', ['--working-dir', '-d']],
  ['poetry', ['--directory', '-C', '--project', '-P']],
  ['nx', []],
  // Mercurial's parser (Python's getopt) takes a start of a long option and a short one last in a group.
  ['hg', ['-R', '--repository', '--cwd']],
  ['mypy', []],
  // Read by pnpmFolders: npm's parser (nopt) reads --prefix and -C as pnpm's does.
  ['npm', ['--prefix']],
]);
/** The files Yarn reads at every command from the folder it runs in and each folder above, and what in them runs code. */
const YARN_CONFIGS: readonly ProjectConfig[] = [
  { file: '.yarnrc.yml', runs: YARNRC_YML_RUNS },
  { file: '.yarnrc', runs: YARNRC_RUNS },
];
/**
 * What in an `nx.json` names code nx loads at every command, `nx show` and `nx report` too: `plugins` given any but
 * an empty list, `extends` (a file that may list them), and any backslash (a key spelt with an escape).
 */
const NX_JSON_RUNS = /\\|"(plugins)"\s*:(?!\s*\[\s*\])|"(extends)"\s*:/;
/**
 * Sections of an hgrc that run nothing: `[paths]`, which `hg clone` writes, and in `[ui]` who commits and how much is
 * printed. Any other (`[hooks]`, `[extensions]`, `[alias]`, `[merge-tools]`, `[pager]`, `[ui]`'s `editor`, `merge`,
 * `ssh` …) or a `%include` may name a command or a Python file hg runs at a command, `hg status` too.
 */
const HGRC_HARMLESS_UI = new Set(['username', 'verbose', 'quiet', 'debug', 'interactive', 'paginate', 'color', 'tweakdefaults', 'logtemplate', 'style']);

/** The first section or key of an hgrc that is not a harmless one (`[paths]`, HGRC_HARMLESS_UI), or `%include`; null for none. */
function hgrcRuns(text: string): string | null {
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    if (line.startsWith('%')) return line.split(/\s/, 1)[0]!;
    const header = /^\[([^\]]*)\]/.exec(line);
    if (header !== null) {
      section = header[1]!.trim();
      if (section !== 'paths' && section !== 'ui') return `[${section}]`;
      continue;
    }
    // A continuation line belongs to the key before it.
    if (/^\s/.test(raw)) continue;
    const key = line.split('=', 1)[0]!.trim();
    if (section === 'ui' && !HGRC_HARMLESS_UI.has(key)) return `ui.${key}`;
    if (section === '') return key;
  }
  return null;
}

/**
 * The files Mercurial reads at every command: the repository's `.hg/hgrc` (and a share's `hgrc-not-shared`; a
 * `sharedpath` sends it to another repository's), found from the folder it runs in up, and the person's `~/.hgrc`.
 */
const HG_CONFIGS: readonly ProjectConfig[] = [
  { file: path.join('.hg', 'hgrc'), runs: hgrcRuns },
  { file: path.join('.hg', 'hgrc-not-shared'), runs: hgrcRuns },
  { file: path.join('.hg', 'sharedpath'), runs: () => '' },
  { file: '.hgrc', runs: hgrcRuns },
  { file: path.join('.config', 'hg', 'hgrc'), runs: hgrcRuns },
];
/**
 * What in a mypy INI config (`mypy.ini`, `.mypy.ini`, `setup.cfg`, the person's `~/.config/mypy/config`) runs code or
 * writes where it says, in any section and any case (configparser's keys): `plugins` (each a module or a `.py` file
 * mypy imports), `python_executable` (a program mypy runs to find its packages), `junit_xml` and a `…_report` (files
 * and folders it writes).
 */
const MYPY_INI_RUNS = /^\s*(plugins|python_executable|junit_xml|\w*_report)\s*[=:]/im;

/** The same in a `pyproject.toml`'s `[tool.mypy]`, read as TOML (a dotted or quoted key, an inline table). */
function mypyTomlRuns(text: string): string | null {
  for (const key of ['plugins', 'python_executable', 'junit_xml']) {
    const set = tomlSets(text, ['tool', 'mypy', key]);
    if (set !== false) return set === undefined ? '' : key;
  }
  return /_report\b/.test(text) ? '…_report' : null;
}

/**
 * The files mypy reads its config from: the first there of `mypy.ini`, `.mypy.ini`, `pyproject.toml` with a
 * `[tool.mypy]`, `setup.cfg` with a `[mypy]` (mypy 1.0 in the folder it runs in; later versions from each folder up
 * to the repository's), then the person's (`~/.config/mypy/config`, `~/.mypy.ini`): each counts.
 */
const MYPY_CONFIGS: readonly ProjectConfig[] = [
  { file: 'mypy.ini', runs: MYPY_INI_RUNS },
  { file: '.mypy.ini', runs: MYPY_INI_RUNS },
  { file: 'pyproject.toml', runs: mypyTomlRuns },
  { file: 'setup.cfg', runs: MYPY_INI_RUNS },
  { file: path.join('.config', 'mypy', 'config'), runs: MYPY_INI_RUNS },
];
/**
 * What in an `.npmrc` names a program npm runs at a command a rule may cover as plain: `git` (for a git spec, `npm
 * view git+https://…` too), `browser` and `viewer` (`npm docs`, `npm help`), `editor`, `shell`, npm 6's
 * `onload-script` (a module loaded at every command), and another config file (`userconfig`, `globalconfig`); as a
 * key in any case, quoted or as an array (`git[]`), and any backslash. `script-shell` and `node-options` reach only
 * the scripts npm runs, which are the project's code already.
 */
const NPMRC_RUNS = /\\|^\s*["']?(git|browser|viewer|editor|shell|onload-script|userconfig|globalconfig)["']?\s*(?:\[\])?\s*=/im;
/** npm's commands that run the project's scripts or a program it is given, which run the project's code anyway. */
const NPM_SCRIPT_COMMANDS: ReadonlySet<string> = new Set(['test', 'start', 'stop', 'restart', 'run', 'exec', 'install-test', 'install-ci-test']);

/** Whether an npm call runs a script or a program (`npm test`, `npm run build`), past harmless options only. */
function runsNpmScript(command: SimpleCommand): boolean {
  const words = command.words.slice(1);
  const at = words.findIndex((word) => word.kind !== 'literal' || !NPM_HARMLESS.has(word.value));
  const word = words[at];
  return word?.kind === 'literal' && NPM_SCRIPT_COMMANDS.has(packageManagerCommand('npm', word.value) ?? '');
}
/** The files each reads from the folder it runs in and each folder above, and what in them runs code. */
const PROJECT_CONFIGS = new Map<string, readonly ProjectConfig[]>([
  ['yarn', YARN_CONFIGS],
  ['pnpm', PNPM_CONFIGS],
  ['composer', [{ file: 'composer.json', runs: composerJsonRuns }]],
  // Poetry 2's project plugins: installed into `.poetry/plugins` as `requires-plugins` names them, loaded at every command.
  ['poetry', [{ file: path.join('.poetry', 'plugins'), folder: true }, { file: 'pyproject.toml', runs: (text) => (tomlSets(text, ['tool', 'poetry', 'requires-plugins']) === false ? null : 'requires-plugins') }]],
  ['nx', [{ file: 'nx.json', runs: NX_JSON_RUNS }]],
  ['hg', HG_CONFIGS],
  ['mypy', MYPY_CONFIGS],
  ['npm', [{ file: '.npmrc', runs: NPMRC_RUNS }]],
]);
/** The option naming the kubeconfig, anywhere in the words (`--kubeconfig ./kc`, `--kubeconfig=./kc`). */
const KUBECONFIG_OPTION = /^--kubeconfig(?:=|$)/;
/**
 * What in a kubeconfig may run a command: an `exec` credential plugin, an `auth-provider` (gcp's `cmd-path`). Looked
 * for as a word in any case (client-go reads YAML as JSON, whose keys match in any case), and any backslash (a key
 * spelt with an escape, `"\u0065xec"`).
 */
const KUBECONFIG_RUNS = /\\|\b(?:exec|auth-provider|cmd-path)\b/i;

/**
 * Why a go, kubectl, oc or helm call may run a command that a config file it reads from the home folder names, when
 * that file lies in the workspace (a workspace that is or holds the home folder, which the server warns of, or a
 * folder of the home folder that leads into it), where a call may have written it; undefined otherwise. go reads its
 * env file (`~/.config/go/env`: `GOFLAGS=-toolexec=./x.sh` runs it at every `go build`, `CC`, `GOTOOLCHAIN` …) and
 * runs a toolchain from its module cache (`~/go/pkg/mod/golang.org/toolchain@…/bin/go`) when a go.mod or go.work
 * names a newer Go, never checking it again once unpacked; kubectl, oc and helm run the `exec` credential plugin of
 * `~/.kube/config`, or of one they are given (`--kubeconfig ./kc`) or write (`config set-credentials`, `config set`).
 * nmap takes scripts and data from `~/.nmap` before its own; GnuPG's programs run what their configs in `~/.gnupg` name.
 * After a command on the line that may have changed the file system, such a file in the workspace
 * counts whatever is there. Read synchronously, bounded: a few small files and one folder of at most 4,096 entries.
 */
export function configFileMayRun(command: SimpleCommand, line: LineFacts): Reason | undefined {
  const [first] = command.words;
  if (first?.kind !== 'literal' || line.workspace === undefined) return undefined;
  const name = commandBaseName(first.value);
  const project = PROJECT_NAMES.get(name) ?? name;
  const readers = CONFIG_READERS.filter((reader) => reader.reads(name, command, project));
  if (readers.length === 0) return undefined;
  const home = buildChildEnv({ source: process.env, cwd: '/' }).HOME ?? homedir();
  const workspace = path.resolve(line.workspace);
  const realWorkspace = leadsTo(workspace);
  const look: ConfigLook = {
    name,
    project,
    command,
    line,
    home,
    workspace,
    inWorkspace: (file) => isWithin(workspace, file) || isWithin(realWorkspace, leadsTo(file)),
    changed: line.changedBefore === true || line.fileSystemChanged === true,
    shown: (file) => (isWithin(home, file) ? `~/${path.relative(home, file)}` : file),
  };
  for (const reader of readers) {
    const why = reader.mayRun(look);
    if (why !== undefined) return why;
  }
  return undefined;
}

/** Programs that read the configs of another's project: Yarn's second name, Mercurial's command server, mypy's daemon. */
const PROJECT_NAMES: ReadonlyMap<string, string> = new Map([
  ['yarnpkg', 'yarn'],
  ['chg', 'hg'],
  ['dmypy', 'mypy'],
]);

/** What a check of a call's config files works from. */
interface ConfigLook {
  /** The program's name as the call gives it, and the project whose configs it reads (PROJECT_NAMES). */
  name: string;
  project: string;
  command: SimpleCommand;
  line: LineFacts;
  /** The home folder a call's programs have (HOME as a call gets it). */
  home: string;
  workspace: string;
  /** Whether a file lies in the workspace, by its text or where its links lead. */
  inWorkspace: (file: string) => boolean;
  /** A command before it on the line may have changed the file system: a file in the workspace may hold anything. */
  changed: boolean;
  /** How a file is named to the person (`~/…` in the home folder). */
  shown: (file: string) => string;
}

/** Programs that read config files a call may have written: which calls do, and why such a file may run a command. */
interface ConfigReader {
  reads: (name: string, command: SimpleCommand, project: string) => boolean;
  mayRun: (look: ConfigLook) => Reason | undefined;
}

/** Each reader a call is one of is asked in turn, the first reason found given. */
const CONFIG_READERS: readonly ConfigReader[] = [
  { reads: (name) => name === 'go', mayRun: goEnvMayRun },
  // An npm call that runs a script or a program runs the project's code anyway (runsNpmScript).
  { reads: (_name, command, project) => FOLDER_OPTIONS.has(project) && !(project === 'npm' && runsNpmScript(command)), mayRun: projectFoldersMayRun },
  { reads: (name) => name === 'nmap', mayRun: nmapFolderMayRun },
  // git signs and verifies through gpg (`-S`, `--show-signature`, `%G?`, or as its config says), which reads ~/.gnupg.
  { reads: (name, command) => name === 'git' && gitMayRunGpg(command), mayRun: (look) => gnupgConfigMayRun(look, 'gpg') },
  { reads: (name, command) => homeConfigReader(name, command) !== undefined, mayRun: homeConfigMayRun },
  { reads: (name) => GNUPG_PROGRAMS.has(name), mayRun: (look) => gnupgConfigMayRun(look, look.name) },
  { reads: isNixProgram, mayRun: nixHomeMayRun },
  { reads: (name) => name === 'gh', mayRun: ghConfigMayRun },
  { reads: (name) => KUBECONFIG_READERS.has(name), mayRun: kubeconfigMayRun },
];

/**
 * Why Yarn, pnpm, npm, composer, Poetry, nx, Mercurial or mypy may run code a config file of the folder it runs in,
 * or one it is given, is or names: each is read from that folder and every folder above it (and the home folder's,
 * for some), and a call may have written one.
 */
function projectFoldersMayRun(look: ConfigLook): Reason | undefined {
  const { name, project, command, workspace, home } = look;
  const folder = path.resolve(workspace, look.line.folder ?? workspace);
  const starts = [folder];
  const givenBy = new Map<string, string[]>();
  for (const option of FOLDER_OPTIONS.get(project) ?? []) {
    const given = project === 'pnpm' || project === 'npm' ? pnpmFolders(command) : givenFolders(command, option, project === 'poetry' || project === 'hg');
    if (given === null) return reason(codeWord(name), ' is given a folder to run in (', codeWord(option), ') the shell computes, whose config may name a program it runs');
    givenBy.set(option, given);
    for (const value of given) starts.push(path.resolve(folder, value));
  }
  if (project === 'poetry') {
    // Poetry takes --project from the --directory it is given (`-C a -P b` is a/b).
    const directories = [...(givenBy.get('--directory') ?? []), ...(givenBy.get('-C') ?? [])];
    const projects = [...(givenBy.get('--project') ?? []), ...(givenBy.get('-P') ?? [])];
    for (const directory of directories) for (const projectFolder of projects) starts.push(path.resolve(folder, directory, projectFolder));
  }
  // Yarn and pnpm read the home folder's as well (`~/.yarnrc.yml`, `~/.npmrc`).
  const folders = [...upward(starts), ...(project === 'yarn' || project === 'pnpm' || project === 'npm' || project === 'hg' || project === 'mypy' ? [home] : [])];
  // Named from the workspace, as the person sees its files (a long absolute path is cut short on the card).
  const named = (file: string) => (isWithin(workspace, file) ? `./${path.relative(workspace, file)}` : look.shown(file));
  return projectConfigMayRun({ name, folders, configs: PROJECT_CONFIGS.get(project) ?? [], inWorkspace: look.inWorkspace, changed: look.changed, shown: named });
}

/** gh's config (a browser, an editor, a pager or an alias it runs) and its extensions, in a workspace holding the home folder. */
function ghConfigMayRun({ home, inWorkspace, changed, shown }: ConfigLook): Reason | undefined {
  // os.UserConfigDir's gh folder: a call's gh has no GH_CONFIG_DIR or XDG_CONFIG_HOME (buildChildEnv).
  const config = path.join(home, '.config', 'gh', 'config.yml');
  const text = !inWorkspace(config) ? null : changed ? undefined : fileText(config, MAX_GH_CONFIG_BYTES);
  if (text !== null && (text === undefined || GH_CONFIG_RUNS.test(text))) {
    return reason(codeWord('gh'), ' reads ', codeWord(shown(config)), ', its config in the workspace, where a call may have written it, which names a browser, an editor, a pager or a shell alias it runs');
  }
  // gh's extensions folder (XDG_DATA_HOME's, which a call's gh has not): `gh evil` runs its `gh-evil`.
  const extensions = path.join(home, '.local', 'share', 'gh', 'extensions');
  if (inWorkspace(extensions) && (changed || holdsEntry(extensions, () => true))) {
    return reason(codeWord('gh'), ' runs the extensions of ', codeWord(shown(extensions)), ', which lies in the workspace, where a call may have written one');
  }
  return undefined;
}

/** The kubeconfig readers' (kubectl, oc, helm …): a kubeconfig given or written, helm's plugins, the person's kubeconfig. */
function kubeconfigMayRun({ name, command, home, inWorkspace, changed, shown }: ConfigLook): Reason | undefined {
  const words = command.words.slice(1).map((word) => (word.kind === 'literal' ? word.value : undefined));
  if (words.some((word) => word !== undefined && KUBECONFIG_OPTION.test(word)) || (words.includes('config') && words.some((word) => word === undefined || word === 'set-credentials' || word === 'set'))) {
    return reason(codeWord(name), ' is given a kubeconfig, or writes credentials into the person\'s, whose credential plugin may be a command it runs');
  }
  // helm's plugins folder (XDG_DATA_HOME's, which a call's helm has not): a downloader plugin runs for `helm pull x://…`,
  // a dependency's repository of its scheme, a post-renderer plugin for an install.
  const plugins = path.join(home, '.local', 'share', 'helm', 'plugins');
  if (name === 'helm' && inWorkspace(plugins) && (changed || holdsEntry(plugins, () => true))) {
    return reason(codeWord('helm'), ' runs the plugins of ', codeWord(shown(plugins)), ', which lies in the workspace, where a call may have written one');
  }
  const kubeconfig = path.join(home, '.kube', 'config');
  if (!inWorkspace(kubeconfig)) return undefined;
  const text = changed ? undefined : fileText(kubeconfig, MAX_KUBECONFIG_BYTES);
  if (text === null || (text !== undefined && !KUBECONFIG_RUNS.test(text))) return undefined;
  return reason(
    codeWord(name),
    ' reads ',
    codeWord(shown(kubeconfig)),
    ', a kubeconfig in the workspace, where a call may have written it, whose credential plugin (exec, auth-provider) is a command it runs',
  );
}

/** GnuPG's programs, each of which reads its config in `~/.gnupg` and may start the agent, which reads its own. */
const GNUPG_PROGRAMS = new Set(['gpg', 'gpg2', 'gpgsm', 'gpgtar', 'gpg-agent', 'gpg-connect-agent', 'gpgconf', 'gpg-card', 'dirmngr', 'dirmngr-client', 'scdaemon', 'keyboxd', 'gpg-wks-client']);

/**
 * The settings of GnuPG's config files that name a program it runs or a library it loads: gpg's photo viewer and
 * `exec-path`, the agent, dirmngr and keyboxd that gpg and gpgsm start, gpgsm's protect tool, the agent's pinentry and
 * card daemons, dirmngr's LDAP wrapper, scdaemon's PC/SC and CT-API drivers. A line's keyword counts when it is one
 * of these whole: the command line takes a start of a name (`--dirmngr-prog`), a config file does not (GnuPG's
 * argparse compares the keyword whole there, and warns of one it does not know and goes on). Each file is also read
 * under a version's name, the first there of `gpg.conf-2.4.7`, `gpg.conf-2.4`, `gpg.conf-2` and `gpg.conf`: every
 * `<file>-…` counts.
 */
const GNUPG_CODE_SETTINGS = new Map<string, readonly string[]>([
  ['gpg.conf', ['photo-viewer', 'exec-path', 'agent-program', 'dirmngr-program', 'keyboxd-program', 'load-extension']],
  ['gpgsm.conf', ['agent-program', 'dirmngr-program', 'keyboxd-program', 'protect-tool-program']],
  ['common.conf', ['agent-program', 'dirmngr-program', 'keyboxd-program']],
  ['gpg-agent.conf', ['pinentry-program', 'scdaemon-program', 'tpm2daemon-program']],
  ['dirmngr.conf', ['ldap-wrapper-program', 'http-wrapper-program']],
  ['scdaemon.conf', ['pcsc-driver', 'ctapi-driver']],
]);
const MAX_GNUPG_CONFIG_BYTES = 64 * 1024;
/** At most this many versioned config files (`gpg.conf-2.4` …) are read in `~/.gnupg`; past it, the folder counts. */
const MAX_GNUPG_VERSIONED_FILES = 16;

/**
 * Why a GnuPG program may run a program or load a library that a config file in `~/.gnupg` names, when that folder
 * lies in the workspace, where a call may have written one; undefined otherwise. Settings that run nothing (a
 * keyserver, a default key) leave the call as its rules say.
 */
function gnupgConfigMayRun({ home, inWorkspace, changed, shown }: ConfigLook, name: string): Reason | undefined {
  const folder = path.join(home, '.gnupg');
  if (!inWorkspace(folder)) return undefined;
  const why = (file: string) => reason(codeWord(name), ' reads ', codeWord(shown(file)), ', in the workspace, where a call may have written it, which may name a program it or the agent it starts runs');
  if (changed) return why(folder);
  const names = entryNames(folder);
  // Past MAX_CACHE_ENTRIES, or a folder that cannot be read: a versioned file may be among what was not seen.
  if (names === undefined) return why(folder);
  const versioned = names.filter((entry) => [...GNUPG_CODE_SETTINGS.keys()].some((file) => entry.startsWith(`${file}-`)));
  // A person has a few; more are not read one by one (each up to 64 KiB), they count.
  if (versioned.length > MAX_GNUPG_VERSIONED_FILES) return why(folder);
  for (const [file, settings] of GNUPG_CODE_SETTINGS) {
    for (const name of [file, ...versioned.filter((entry) => entry.startsWith(`${file}-`))]) {
      const text = fileText(path.join(folder, name), MAX_GNUPG_CONFIG_BYTES);
      if (text === null) continue;
      if (text === undefined) return why(path.join(folder, name));
      for (const line of text.split('\n')) {
        // A keyword ends at a NUL as well: GnuPG compares the one it collects as a C string.
        const keyword = /^\s*(?:--)?([^\s#=\0]+)/.exec(line)?.[1]?.toLowerCase();
        if (keyword !== undefined && settings.includes(keyword)) return why(path.join(folder, name));
      }
    }
  }
  return undefined;
}

/** Nix's programs (`nix`, `nix-build`, `nix-shell` …) and those that run them: each reads the person's nix.conf. */
function isNixProgram(name: string): boolean {
  return name === 'nix' || name.startsWith('nix-') || name === 'home-manager' || name === 'nixos-rebuild';
}

/**
 * nix.conf settings that run nothing and fetch nothing from elsewhere: a person's usual ones. Any other (a plugin
 * library every nix program loads, unsafe evaluation, build hooks, substituters and their keys, a flake registry, a
 * nix path, the build sandbox off, an include) may make a nix call run or build what the call that wrote it chose.
 */
const NIX_HARMLESS_SETTINGS: ReadonlySet<string> = new Set([
  'experimental-features', 'extra-experimental-features', 'max-jobs', 'cores', 'keep-outputs', 'keep-derivations',
  'keep-going', 'keep-failed', 'warn-dirty', 'show-trace', 'log-lines', 'connect-timeout', 'stalled-download-timeout',
  'auto-optimise-store', 'eval-cache', 'http-connections', 'download-attempts', 'fallback', 'min-free', 'max-free',
  'max-silent-time', 'timeout', 'tarball-ttl', 'narinfo-cache-negative-ttl', 'narinfo-cache-positive-ttl',
  'print-missing', 'use-xdg-base-directories',
]);
const MAX_NIX_CONF_BYTES = 64 * 1024;

/**
 * Why a nix program may run or build what a call chose through the person's nix files in a workspace that holds the
 * home folder: a nix.conf setting other than NIX_HARMLESS_SETTINGS (or one that cannot be read whole), the flake
 * registry (`registry.json` maps `nixpkgs` to any flake), nixpkgs' config and overlays (which replace any package),
 * `~/.nix-defexpr` (where `<nixpkgs>` is looked for) and `~/.nix-channels`: any of them there counts.
 */
function nixHomeMayRun({ home, name, inWorkspace, changed, shown }: ConfigLook): Reason | undefined {
  const why = (file: string, what: string) => reason(codeWord(name), ' reads ', codeWord(shown(file)), `, in the workspace, where a call may have written it, ${what}`);
  const config = path.join(home, '.config', 'nix');
  if (inWorkspace(config) && changed) return why(config, 'whose settings, registry or packages may name what it runs');
  const conf = path.join(config, 'nix.conf');
  const text = inWorkspace(conf) ? fileText(conf, MAX_NIX_CONF_BYTES) : null;
  if (text === undefined || (text !== null && nixConfRuns(text))) return why(conf, 'whose settings may name a program or a library it runs, or where it fetches what it runs');
  for (const [file, what] of [
    [path.join(config, 'registry.json'), 'which may map a flake name to any flake'],
    [path.join(home, '.config', 'nixpkgs'), 'whose config and overlays may replace any package'],
    [path.join(home, '.nix-defexpr'), 'where it looks for the packages of <nixpkgs>'],
    [path.join(home, '.nix-channels'), 'which names where its channels come from'],
  ] as const) {
    if (inWorkspace(file) && (changed || isThere(file))) return why(file, what);
  }
  return undefined;
}

/** Whether a nix.conf holds a setting not in NIX_HARMLESS_SETTINGS, or an include. */
function nixConfRuns(text: string): boolean {
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') continue;
    const key = /^([^\s=]+)\s*=/.exec(line)?.[1];
    if (key === undefined || !NIX_HARMLESS_SETTINGS.has(key)) return true;
  }
  return false;
}

/**
 * nmap takes each of its files from `~/.nmap` before its own (its NSE scripts, `nse_main.lua`, `nselib`, the data of
 * `-sV`), the home its user's passwd entry names rather than `HOME`: any entry there counts.
 */
function nmapFolderMayRun({ home, inWorkspace, changed, shown }: ConfigLook): Reason | undefined {
  for (const folder of homesOf(home).map((at) => path.join(at, '.nmap'))) {
    if (inWorkspace(folder) && (changed || holdsEntry(folder, () => true))) {
      return reason(codeWord('nmap'), ' takes scripts and data from ', codeWord(shown(folder)), ' before its own, a folder in the workspace, where a call may have put one');
    }
  }
  return undefined;
}

/** `HOME` and the home folder the passwd entry names, which ssh and nmap read in its place (curl and wget after it). */
function homesOf(home: string): string[] {
  let passwdHome: string | undefined;
  try {
    passwdHome = userInfo().homedir;
  } catch {
    passwdHome = undefined;
  }
  return [...new Set([home, ...(passwdHome === undefined ? [] : [passwdHome])])];
}

/** A config file a program reads from the home folder, and what in it makes the program run or send what a call chose. */
interface HomeConfig {
  /** The files, relative to the home folder. */
  files: readonly string[];
  /** The setting that runs a program or sends a file (null: none), or any: every setting counts. */
  runs: ((text: string) => string | null) | 'any';
  /** What the setting does, for the reason. */
  what: string;
}

/**
 * The programs that run OpenSSH's ssh, which reads `~/.ssh/config` from the passwd entry's home folder: scp, sftp,
 * rsync, sshfs and ssh-copy-id to reach a host, autossh and mosh to start one.
 */
const SSH_CONFIG_READERS: ReadonlySet<string> = new Set(['ssh', 'scp', 'sftp', 'rsync', 'sshfs', 'ssh-copy-id', 'autossh', 'mosh']);
/**
 * git's commands that may talk to a remote, through ssh for an ssh URL (`git@host:x`): Git LFS's (`git lfs locks`
 * too), a subtree's, `request-pull`'s `ls-remote`, `maintenance`'s prefetch, `git svn` over `svn+ssh`.
 */
const GIT_REMOTE_COMMANDS: ReadonlySet<string> = new Set([
  'fetch', 'pull', 'push', 'ls-remote', 'clone', 'remote', 'submodule', 'archive', 'fetch-pack', 'send-pack', 'lfs',
  'subtree', 'request-pull', 'maintenance', 'svn', 'annex',
]);
/**
 * git's commands that read no object, so never fetch one a partial clone lacks: any other may (`git show HEAD:f`,
 * `git diff`, `git log -p`, `git blame`, `git checkout`; `git status` once a tree is missing), from its promisor
 * remote, through ssh for an ssh URL, and a call may have made the repository one (`remote.origin.promisor`).
 */
const GIT_LOCAL_COMMANDS: ReadonlySet<string> = new Set(['version', 'help', 'config', 'init', 'var', 'check-ignore', 'ls-files']);

/** Whether a git call may run ssh: a command that talks to a remote in any word, or one that reads objects. */
function gitMayRunSsh(command: SimpleCommand): boolean {
  const words = command.words.map((word) => (word.kind === 'literal' ? word.value : undefined));
  if (words.some((word) => word !== undefined && GIT_REMOTE_COMMANDS.has(word))) return true;
  const at = gitGlobalOptions(words).command;
  if (at >= words.length) return false;
  const subcommand = words[at];
  return subcommand === undefined || !GIT_LOCAL_COMMANDS.has(subcommand);
}
/**
 * ssh_config keywords that run a command line here or load a library (`ProxyCommand`, `LocalCommand`,
 * `KnownHostsCommand`, `PKCS11Provider`, `SecurityKeyProvider`), or read another file that may (`Include`); and a
 * `Match` with an `exec` criterion, whose command runs as the file is read, for any host.
 */
const SSH_CONFIG_CODE: ReadonlySet<string> = new Set(['proxycommand', 'localcommand', 'permitlocalcommand', 'knownhostscommand', 'pkcs11provider', 'securitykeyprovider', 'include']);
/**
 * wgetrc settings, by their name as wget reads it (any case, `-` and `_` dropped: `USE-ASK_PASS`): `use_askpass`
 * names a program wget runs for each URL, `post_file` and `body_file` a file it sends.
 */
const WGETRC_CODE: ReadonlySet<string> = new Set(['useaskpass', 'postfile', 'bodyfile']);
const MAX_HOME_CONFIG_BYTES = 64 * 1024;

const SSH_CONFIG: HomeConfig = {
  files: [path.join('.ssh', 'config')],
  runs: (text) => {
    for (const raw of text.split('\n')) {
      // Quotes and escapes dropped, which only ever makes a keyword count that ssh would not take.
      const line = raw.replace(/["'\\]/g, '').trim();
      const [, keyword = '', rest = ''] = /^([^\s=#]+)\s*=?\s*(.*)$/s.exec(line) ?? [];
      const key = keyword.toLowerCase();
      if (SSH_CONFIG_CODE.has(key) || (key === 'match' && /exec/i.test(rest))) return keyword;
    }
    return null;
  },
  what: 'a command it runs or a library it loads here',
};
const WGETRC: HomeConfig = {
  files: ['.wgetrc'],
  runs: (text) => {
    for (const line of text.split('\n')) {
      const name = /^\s*([A-Za-z0-9_-]+)\s*=/.exec(line)?.[1];
      if (name !== undefined && WGETRC_CODE.has(name.replace(/[-_]/g, '').toLowerCase())) return name;
    }
    return null;
  },
  what: 'a program it runs or a file it sends',
};
// wget2 reads its settings as wget does (`use-askpass`, `post-file`), and `config` names more files to read.
const WGET2RC: HomeConfig = {
  files: ['.wget2rc', path.join('.config', 'wget', 'wget2rc')],
  runs: (text) => {
    for (const line of text.split('\n')) {
      const name = /^\s*([A-Za-z0-9_-]+)\s*=/.exec(line)?.[1];
      const bare = name?.replace(/[-_]/g, '').toLowerCase();
      if (name !== undefined && bare !== undefined && (WGETRC_CODE.has(bare) || bare === 'config')) return name;
    }
    return null;
  },
  what: 'a program it runs or a file it sends',
};
/**
 * pip.conf settings that run nothing, fetch from nowhere else and write nowhere a call chose: how much is printed and
 * how patiently pip waits. Any other may (`python` runs that program in pip's place, pip 22.3 and later, `pip list`
 * too; `index-url`, `find-links`, `trusted-host` and `proxy` change where packages come from; `log`, `target`, `src`
 * write where they say), as the same options given on the command line do (match-command.ts's PIP_OPTIONS).
 */
const PIP_HARMLESS_SETTINGS: ReadonlySet<string> = new Set([
  'timeout', 'default-timeout', 'retries', 'disable-pip-version-check', 'no-input', 'quiet', 'verbose', 'no-color',
  'progress-bar', 'require-virtualenv', 'require-venv', 'format', 'root-user-action', 'no-python-version-warning',
]);
const PIP_CONF: HomeConfig = {
  files: [path.join('.config', 'pip', 'pip.conf'), path.join('.pip', 'pip.conf')],
  runs: (text) => {
    for (const line of text.split('\n')) {
      // A section or a comment. An indented line is read as a key too: configparser takes one as such after a
      // section's name, and one that goes on a value counts at worst.
      if (/^\s*(?:$|[[#;])/.test(line)) continue;
      const key = /^([^=:]*)/.exec(line)?.[1]?.trim() ?? '';
      if (!PIP_HARMLESS_SETTINGS.has(key.toLowerCase().replace(/^-+/, '').replace(/_/g, '-'))) return key;
    }
    return null;
  },
  what: 'a program it runs in its own place, where it fetches packages from or where it writes',
};
// Every option of curl's command line may stand in its config: more URLs, a file to upload or send, where to write.
const CURLRC: HomeConfig = { files: ['.curlrc', path.join('.config', 'curlrc')], runs: 'any', what: 'more hosts, files to send or where to write' };

/**
 * git's commands that may sign or verify through gpg, by their words or as the config says (`commit.gpgSign`,
 * `log.showSignature`, `merge.verifySignatures`, `push.gpgSign`, `tag.gpgSign`).
 */
const GIT_GPG_COMMANDS: ReadonlySet<string> = new Set([
  'commit', 'tag', 'merge', 'pull', 'rebase', 'cherry-pick', 'revert', 'am', 'push', 'log', 'show', 'whatchanged',
  'verify-commit', 'verify-tag', 'for-each-ref', 'branch', 'stash',
]);

/**
 * Whether a git call may run gpg: a word naming one of GIT_GPG_COMMANDS, asking for a signature (`-S`, `--gpg-sign`,
 * `--show-signature`, `--signed`) or printing one (`%G?`, `%(signature)`), or one the shell computes.
 */
function gitMayRunGpg(command: SimpleCommand): boolean {
  return command.words.slice(1).some((word) => word.kind !== 'literal' || GIT_GPG_COMMANDS.has(word.value) || /^-S|^--(?:gpg-sign|show-signature|signed|verify-signatures)|%G|%\(signature/.test(word.value));
}

/** Whether a Python call runs pip as a module (`python3 -m pip list`, `-mpip`), or may (a word the shell computes). */
function runsPipModule(command: SimpleCommand): boolean {
  return command.words.some((word, index) => {
    if (word.kind !== 'literal') return true;
    const next = command.words[index + 1];
    return word.value === '-mpip' || (word.value === '-m' && (next?.kind !== 'literal' || next.value === 'pip'));
  });
}

/** The config file a call of `name` reads from the home folder that may change what it runs or sends, if any. */
function homeConfigReader(name: string, command: SimpleCommand): HomeConfig | undefined {
  if (SSH_CONFIG_READERS.has(name)) return SSH_CONFIG;
  if (name === 'git' && gitMayRunSsh(command)) return SSH_CONFIG;
  if (name === 'wget') return WGETRC;
  if (name === 'wget2') return WGET2RC;
  if (/^pip[0-9.]*$/.test(name) || (/^python[0-9.]*$/.test(name) && runsPipModule(command))) return PIP_CONF;
  if (name === 'curl') return CURLRC;
  return undefined;
}

/**
 * Why a call may run or send what a config file it reads from the home folder names (`~/.ssh/config`'s
 * `ProxyCommand`, `~/.wgetrc`'s `use_askpass`, any `~/.curlrc`), when that file lies in the workspace, where a call
 * may have written it; undefined otherwise.
 */
function homeConfigMayRun({ name, command, home, inWorkspace, changed, shown }: ConfigLook): Reason | undefined {
  const config = homeConfigReader(name, command);
  if (config === undefined) return undefined;
  for (const file of homesOf(home).flatMap((at) => config.files.map((relative) => path.join(at, relative)))) {
    if (!inWorkspace(file)) continue;
    const text = changed ? undefined : fileText(file, MAX_HOME_CONFIG_BYTES);
    if (text === null) continue;
    const setting = text === undefined ? '' : config.runs === 'any' ? (/^\s*[^\s#]/m.test(text) ? '' : null) : config.runs(text);
    if (setting === null) continue;
    return reason(
      codeWord(name),
      ' reads ',
      codeWord(shown(file)),
      ', in the workspace, where a call may have written it',
      ...(setting === '' ? [', which may name ', config.what] : [', which sets ', codeWord(setting), ', ', config.what]),
    );
  }
  return undefined;
}

interface ProjectConfigLook {
  /** The program's name as the call gives it. */
  name: string;
  /** The folders whose config files it reads. */
  folders: readonly string[];
  /** The files it reads in each, and what in one runs code. */
  configs: readonly ProjectConfig[];
  /** Whether a file lies in the workspace, by its text or where its links lead. */
  inWorkspace: (file: string) => boolean;
  /** A command before it on the line may have changed the file system: a file in the workspace may hold anything. */
  changed: boolean;
  /** How a file is named to the person. */
  shown: (file: string) => string;
}

/**
 * Why Yarn, pnpm or nx may run code a config file of the workspace is or names (`yarnPath`, `plugins`, a pnpmfile,
 * nx.json's `plugins`): each is read from the folder the program runs in and every folder above it, and a call may
 * have written one.
 */
function projectConfigMayRun(look: ProjectConfigLook): Reason | undefined {
  for (const folder of look.folders) {
    for (const { file, runs, folder: isFolder } of look.configs) {
      const config = path.join(folder, file);
      if (!look.inWorkspace(config)) continue;
      if (isFolder === true) {
        if (!look.changed && !holdsEntry(config, () => true)) continue;
        return reason(codeWord(look.name), ' loads the plugins of ', codeWord(look.shown(config)), ' at every command, a folder in the workspace, where a call may have put one');
      }
      const text = look.changed ? undefined : fileText(config, MAX_PROJECT_CONFIG_BYTES);
      if (text === null) continue;
      if (runs === undefined) {
        return reason(codeWord(look.name), ' loads ', codeWord(look.shown(config)), ' at every command, a file in the workspace, where a call may have written it');
      }
      const key = text === undefined ? '' : runningKey(runs, text);
      if (key === null) continue;
      return reason(
        codeWord(look.name),
        ' reads ',
        codeWord(look.shown(config)),
        ', in the workspace, where a call may have written it',
        ...(key === '' ? [', which may name code it runs'] : [', which sets ', codeWord(key), ', code it runs at every command']),
      );
    }
  }
  return undefined;
}

/** The key of `text` that `runs` finds running code ('' when it names none: a backslash, a flow mapping), or null. */
function runningKey(runs: RegExp | ((text: string) => string | null), text: string): string | null {
  if (typeof runs === 'function') return runs(text);
  const match = runs.exec(text);
  return match === null ? null : (match.slice(1).find((group) => group !== undefined) ?? '');
}

/** The folders from each of `starts`, as named and where its links lead, up to `/`. */
function upward(starts: readonly string[]): string[] {
  const folders = new Set<string>();
  for (const start of starts.flatMap((folder) => [folder, leadsTo(folder)])) {
    let at = start;
    for (let steps = 0; steps < MAX_LEAD_STEPS && !folders.has(at); steps += 1) {
      folders.add(at);
      const up = path.dirname(at);
      if (up === at) break;
      at = up;
    }
  }
  return [...folders];
}

/**
 * The values of a folder option anywhere in the words (`--cwd dir`, `--cwd=dir`), a short one's attached too (`-dsub`,
 * which composer and Poetry read as `sub`, `-d=sub` as `=sub`, taken as `sub` as well): null when the shell computes
 * one.
 */
/**
 * The folders `option` is given in a command's words: the next word, or attached (`-dsub`, `--dir=sub`). `argparse`:
 * read as Python's argparse reads it (Poetry), also by any start of a long option's name (`--dir sub`, `--proj=x`)
 * and as the last of a group of short flags (`-nC sub`, `-vCsub`). Null when a value is one the shell computes.
 */
function givenFolders(command: SimpleCommand, option: string, argparse = false): string[] | null {
  const words = command.words.slice(1);
  const folders: string[] = [];
  const short = !option.startsWith('--');
  for (const [index, word] of words.entries()) {
    if (word.kind !== 'literal') continue;
    const value = word.value;
    const next = () => {
      const following = words[index + 1];
      if (following?.kind !== 'literal') return false;
      folders.push(following.value);
      return true;
    };
    if (value === option) {
      if (!next()) return null;
    } else if (!argparse && value.startsWith(short ? option : `${option}=`)) {
      const attached = value.slice(option.length);
      folders.push(...(short ? [attached] : []), ...(attached.startsWith('=') ? [attached.slice(1)] : []));
    } else if (argparse && !short && value.startsWith('--') && value.length > 2) {
      const [name = '', attached] = value.split(/=(.*)/s);
      if (!option.startsWith(name)) continue;
      if (attached !== undefined) folders.push(attached);
      else if (!next()) return null;
    } else if (argparse && short && /^-[^-]/.test(value) && value.includes(option.slice(1))) {
      // A group of flags ends at the first letter taking a value: what follows it, or the next word, is its value.
      const attached = value.slice(value.indexOf(option.slice(1)) + 1);
      if (attached !== '') folders.push(attached, ...(attached.startsWith('=') ? [attached.slice(1)] : []));
      else if (!next()) return null;
    }
  }
  return folders;
}

/**
 * pnpm's names for its folder to run in, as a word's name without its dashes: `dir`, `prefix` (an older name) and a
 * start of it, which pnpm 10's parser (nopt) takes when no other option starts so, and `config.dir`, `config.prefix`
 * (`--config.dir=sub`). `d` and `di` are not among them: nopt reads them as its one-letter options `-d` and `-i`.
 */
const PNPM_FOLDER_NAME = /^(?:dir|pre(?:f(?:ix?)?)?|config\.(?:dir|prefix))$/;

/**
 * The folders pnpm is given to run in, as pnpm 10's parser (nopt) or pnpm 12's reads the words: a PNPM_FOLDER_NAME or
 * `C` after any number of dashes (nopt strips them: `-dir sub`, `--C sub`), or a group of one-letter options ending
 * in `C` (`-rC sub`, `--rC sub`), each with its value after `=` or in the next word; and after one dash what follows
 * a group's first `C` (`-Csub`, `-rCsub`, `-rC=sub`), which pnpm 12 takes for its value. Null when a value is one
 * the shell computes.
 */
function pnpmFolders(command: SimpleCommand): string[] | null {
  const words = command.words.slice(1);
  const folders: string[] = [];
  for (const [index, word] of words.entries()) {
    if (word.kind !== 'literal') continue;
    const option = /^-+([^=]*)(?:=(.*))?$/s.exec(word.value);
    if (option === null) continue;
    const [, name = '', assigned] = option;
    const attached = /^-[A-BD-Za-z?]*C(.+)$/s.exec(word.value)?.[1];
    if (attached !== undefined) {
      folders.push(attached.startsWith('=') ? attached.slice(1) : attached);
    } else if (PNPM_FOLDER_NAME.test(name) || /^[A-Za-z?]*C$/.test(name)) {
      if (assigned !== undefined) folders.push(assigned);
      else {
        const following = words[index + 1];
        if (following?.kind !== 'literal') return null;
        folders.push(following.value);
      }
    }
  }
  return folders;
}

function goEnvMayRun({ home, inWorkspace, changed, shown }: ConfigLook): Reason | undefined {
  // os.UserConfigDir: a call's go has no XDG_CONFIG_HOME or GOENV (buildChildEnv).
  const envFile = path.join(home, '.config', 'go', 'env');
  const envInWorkspace = inWorkspace(envFile);
  const text = envInWorkspace && changed ? undefined : fileText(envFile, MAX_GO_ENV_BYTES);
  const settings = text === undefined || text === null ? new Map<string, string>() : goEnvSettings(text);
  if (envInWorkspace && text !== null) {
    const key = text === undefined ? undefined : [...settings].find(([name, value]) => value !== '' && !GO_ENV_HARMLESS.has(name))?.[0];
    if (text === undefined || key !== undefined) {
      return reason(
        codeWord('go'),
        ' reads ',
        codeWord(shown(envFile)),
        ', a go env file in the workspace, where a call may have written it',
        ...(key === undefined ? [', which may set what go runs'] : [', which sets ', codeWord(key), ', which may make go run a program']),
      );
    }
  }
  // GOMODCACHE, else the first GOPATH folder's pkg/mod, GOPATH being ~/go by default.
  const gopath = (settings.get('GOPATH') ?? '').split(path.delimiter)[0] || path.join(home, 'go');
  const cache = path.resolve(home, settings.get('GOMODCACHE') || path.join(gopath, 'pkg', 'mod'));
  const toolchains = path.join(cache, 'golang.org');
  if (!inWorkspace(toolchains) || !(changed || holdsToolchain(toolchains))) return undefined;
  return reason(
    codeWord('go'),
    ' runs the toolchain a go.mod or go.work names from its module cache (',
    codeWord(shown(path.join(toolchains, 'toolchain@…'))),
    '), which lies in the workspace, where a call may have written it',
  );
}

/** A go env file's settings as go reads them: `KEY=VALUE` lines, `#` comments, a value in double quotes unquoted. */
function goEnvSettings(text: string): Map<string, string> {
  const settings = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const equals = line.indexOf('=');
    if (line === '' || line.startsWith('#') || equals === -1) continue;
    const value = line.slice(equals + 1).trim();
    settings.set(line.slice(0, equals).trim(), /^".*"$/.test(value) ? value.slice(1, -1) : value);
  }
  return settings;
}

/** Whether the module cache's `golang.org` folder holds a toolchain (`toolchain@v0.0.1-go1.22.0.linux-amd64`), or may. */
function holdsToolchain(folder: string): boolean {
  return holdsEntry(folder, (name) => name.startsWith('toolchain@'));
}

/** The names in `folder`: none when it is not there; undefined past `MAX_CACHE_ENTRIES`, or when it cannot be read. */
function entryNames(folder: string): string[] | undefined {
  let dir;
  try {
    dir = opendirSync(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? [] : undefined;
  }
  try {
    const names: string[] = [];
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      if (names.push(entry.name) > MAX_CACHE_ENTRIES) return undefined;
    }
    return names;
  } catch {
    return undefined;
  } finally {
    dir.closeSync();
  }
}

/** Whether `folder` holds an entry whose name is `wanted`, or may (past `MAX_CACHE_ENTRIES`, or not read); not when not there. */
function holdsEntry(folder: string, wanted: (name: string) => boolean): boolean {
  const names = entryNames(folder);
  return names === undefined || names.some(wanted);
}

/** Whether anything is at `file`, where its links lead (a link left dangling is not; one that cannot be told is). */
function isThere(file: string): boolean {
  return isThereAt(leadsTo(file));
}

function isThereAt(real: string): boolean {
  try {
    lstatSync(real);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

/**
 * A config file's text, where its links lead: `null` when it is not there, undefined when it is but cannot be read
 * whole (not a regular file, past `maxBytes`), which counts as naming a program.
 */
function fileText(file: string, maxBytes: number): string | null | undefined {
  const real = leadsTo(file);
  // Not there: null; there but not readable as a small regular file: undefined, from the read.
  if (!isThereAt(real)) return null;
  return readSmallFile(real, maxBytes)?.toString('utf8');
}

/**
 * Where the kernel leads `file`: its real path when it is there; when not, the real path of the nearest folder on the
 * way that is, with the rest, a link left dangling followed to where it points (a call may make what it names).
 */
function leadsTo(file: string): string {
  const rest: string[] = [];
  let at = path.resolve(file);
  for (let steps = 0; steps < MAX_LEAD_STEPS; steps += 1) {
    try {
      return path.join(realpathSync(at), ...rest);
    } catch {
      // not there, or a link on the way leads nowhere yet
    }
    let target: string | undefined;
    try {
      target = readlinkSync(at);
    } catch {
      target = undefined;
    }
    if (target !== undefined) {
      at = [target.startsWith('/') ? target : `${path.dirname(at)}/${target}`, ...rest.splice(0)].join('/');
      continue;
    }
    const up = path.dirname(at);
    if (up === at) break;
    rest.unshift(path.basename(at));
    at = up;
  }
  return path.join(at, ...rest);
}

/**
 * The key of a `composer.json` that makes composer run code at every command, `composer show` too: a
 * `pre-command-run` script, or `allow-plugins` letting any plugin run (each is loaded from `vendor/`, where a call may
 * have put one); '' when it cannot be read as JSON, which counts too; null when neither.
 */
function composerJsonRuns(text: string): string | null {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return '';
  }
  if (!isRecord(manifest)) return '';
  if (isRecord(manifest.scripts) && Object.hasOwn(manifest.scripts, 'pre-command-run')) return 'pre-command-run';
  const allowed = isRecord(manifest.config) && Object.hasOwn(manifest.config, 'allow-plugins') ? manifest.config['allow-plugins'] : false;
  return allowed === false || (isRecord(allowed) && Object.values(allowed).every((value) => value === false)) ? null : 'allow-plugins';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
