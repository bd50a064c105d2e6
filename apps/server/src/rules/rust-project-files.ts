import { existsSync } from 'node:fs';
import path from 'node:path';
import { commandBaseName } from '@airlock/api';
import { readSmallFile } from '../tools/workspace-git-dir';
import type { LineFacts } from './match-command';
import type { SimpleCommand } from './parse-command-line';
import { tomlSets } from './toml-keys';

/** rustup's proxies and the tools they run: each reads the folder's toolchain file before anything else. */
const RUST_TOOLS = new Set(['cargo', 'rustup', 'rustc', 'rustdoc', 'rustfmt', 'cargo-fmt', 'cargo-clippy', 'clippy-driver', 'rust-analyzer', 'rust-gdb', 'rust-lldb']);
/** Folders looked at, from where the command runs up to the workspace. */
const MAX_DEPTH = 64;
/** A toolchain file larger than this, in bytes, is taken as naming a program. */
const MAX_TOOLCHAIN_FILE = 64 * 1024;

/**
 * Whether a Rust tool's call may run a program the workspace names instead of the one a rule meant: rustup's proxy
 * runs the `cargo` (or `rustc` …) of a toolchain that a `rust-toolchain.toml` or `rust-toolchain` file names by `path`
 * (`[toolchain] path = "/…/tc"` runs `tc/bin/cargo`), and cargo runs the `build.rustc`, `rustc-wrapper`, a
 * runner or an alias a `.cargo/config.toml` or `.cargo/config` names, also for `cargo tree` and `cargo metadata`. True
 * while the folder it runs in, or one above it up to the workspace, holds `.cargo/config` or `.cargo/config.toml`, or
 * a toolchain file with a `path` (or, for the old plain `rust-toolchain`, a `/`); and when where it runs is not known
 * as it will be (a `cd` outside, a command before it that may have changed the file system). False for any other
 * program, and when the facts name no folder. Read synchronously: a few `stat`s and small reads per folder.
 */
export function rustProjectMayNameProgram(command: SimpleCommand, line: LineFacts): boolean {
  const [first] = command.words;
  if (first?.kind !== 'literal' || !RUST_TOOLS.has(commandBaseName(first.value))) return false;
  const folder = line.folder ?? line.workspace;
  const workspace = line.workspace;
  if (folder === undefined || workspace === undefined) return false;
  if (line.leftWorkspace === true || line.fileSystemChanged === true) return true;
  let dir = path.resolve(folder);
  const root = path.resolve(workspace);
  for (let depth = 0; depth < MAX_DEPTH; depth += 1) {
    if (dir !== root && !dir.startsWith(`${root}${path.sep}`)) return false;
    try {
      if (existsSync(path.join(dir, '.cargo', 'config')) || existsSync(path.join(dir, '.cargo', 'config.toml'))) return true;
      if (namesToolchainPath(path.join(dir, 'rust-toolchain.toml'), false) || namesToolchainPath(path.join(dir, 'rust-toolchain'), true)) return true;
    } catch {
      return true;
    }
    if (dir === root) return false;
    dir = path.dirname(dir);
  }
  return true;
}

/** Whether a toolchain file names a toolchain by its folder; a missing file names none. */
function namesToolchainPath(file: string, plain: boolean): boolean {
  if (!existsSync(file)) return false;
  // Not a regular file of at most the limit (a FIFO, which would hold the server's thread; a link; a large file, not
  // read whole), or gone since: taken as naming a program.
  const bytes = readSmallFile(file, MAX_TOOLCHAIN_FILE);
  if (bytes === undefined) return true;
  const text = bytes.toString('utf8');
  const setsPath = tomlSets(text, ['toolchain', 'path']);
  if (setsPath !== undefined) return setsPath;
  // Not TOML to this parser: rustup reads the old plain file of one line as a channel's name, or a folder's path;
  // any other it reads as TOML, which it may take where this parser did not.
  return !plain || text.trim().includes('\n') || text.includes('/');
}
