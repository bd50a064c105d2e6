import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { evaluateRules, type RuleContext } from './evaluate-rules';
import { prefix, terminal } from './rule-fixtures';

describe('a rule for a cargo listing subcommand while the workspace names a toolchain or a compiler of its own', () => {
  let workspace = '';
  let context: RuleContext;
  beforeEach(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'airlock-rust-files-'));
    mkdirSync(path.join(workspace, 'crate', 'src'), { recursive: true });
    context = { sessionId: 'chat-1', workspace };
  });
  afterEach(() => rmSync(workspace, { recursive: true, force: true }));

  const rules = [prefix('cargo tree'), prefix('cargo metadata'), prefix('cargo fmt'), prefix('rustup show'), prefix('cd')];
  const decided = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it('with none of those files, the rules cover the calls', async () => {
    writeFileSync(path.join(workspace, 'rust-toolchain.toml'), '[toolchain]\nchannel = "stable"\n');
    for (const command of ['cargo tree', 'cargo metadata --format-version 1', 'cargo fmt --check', 'rustup show', 'cd crate && cargo tree']) {
      expect(await decided(command), command).toBe('allow');
    }
  });

  it('a rust-toolchain.toml naming a toolchain by its path: rustup runs that folder’s cargo', async () => {
    // The probe's file: `cargo tree` ran tc/bin/cargo under "commands starting with `cargo tree`".
    writeFileSync(path.join(workspace, 'rust-toolchain.toml'), `[toolchain]\npath = "${workspace}/tc"\n`);
    for (const command of ['cargo tree', 'cargo metadata --format-version 1', 'cargo fmt --check', 'rustup show', 'cd crate && cargo tree']) {
      expect(await decided(command), command).toBe('ask');
    }
  });

  it('a rust-toolchain.toml naming its path as rustup reads TOML: in an inline table, by a dotted key, by an escaped key; or one it cannot read', async () => {
    const commands = ['cargo tree', 'rustup show', 'cd crate && cargo tree'];
    for (const text of [
      `toolchain = { path = "${workspace}/tc" }\n`,
      `toolchain.path = "${workspace}/tc"\n`,
      `[toolchain]\n"p\\u0061th" = "${workspace}/tc"\n`,
      `["toolchain"]\n'path' = "${workspace}/tc"\n`,
      '[toolchain\npath = "/tc"\n',
    ]) {
      writeFileSync(path.join(workspace, 'rust-toolchain.toml'), text);
      for (const command of commands) expect(await decided(command), `${text}: ${command}`).toBe('ask');
    }
    // The old plain file read as TOML, with a path in escapes and an integer past 2^53 (Rust's toml reads it).
    rmSync(path.join(workspace, 'rust-toolchain.toml'));
    writeFileSync(path.join(workspace, 'rust-toolchain'), '[toolchain]\npath = "\\u002Ftmp\\u002Ftc"\nx = 9007199254740993\n');
    for (const command of commands) expect(await decided(command), command).toBe('ask');
    writeFileSync(path.join(workspace, 'rust-toolchain'), '[toolchain]\npath = "\\u002Ftmp\\u002Ftc"\nx = [1, \n');
    for (const command of commands) expect(await decided(command), command).toBe('ask');
    writeFileSync(path.join(workspace, 'rust-toolchain'), 'nightly-2024-01-01\n');
    for (const command of commands) expect(await decided(command), command).toBe('allow');
    rmSync(path.join(workspace, 'rust-toolchain'));
    // A path only mentioned names nothing.
    writeFileSync(path.join(workspace, 'rust-toolchain.toml'), '[toolchain]\nchannel = "stable" # not path = "/tc"\ncomponents = ["path"]\n');
    for (const command of commands) expect(await decided(command), command).toBe('allow');
  });

  it('the old plain rust-toolchain with a path, and a .cargo/config.toml or .cargo/config, in the folder or one above', async () => {
    writeFileSync(path.join(workspace, 'crate', 'rust-toolchain'), `${workspace}/tc\n`);
    expect(await decided('cd crate && cargo tree')).toBe('ask');
    expect(await decided('cargo tree')).toBe('allow');
    rmSync(path.join(workspace, 'crate', 'rust-toolchain'));
    mkdirSync(path.join(workspace, '.cargo'));
    writeFileSync(path.join(workspace, '.cargo', 'config.toml'), '[build]\nrustc = "./evil-rustc"\n');
    expect(await decided('cargo tree')).toBe('ask');
    expect(await decided('cd crate && cargo metadata --format-version 1')).toBe('ask');
    rmSync(path.join(workspace, '.cargo', 'config.toml'));
    writeFileSync(path.join(workspace, '.cargo', 'config'), '[build]\nrustc-wrapper = "./evil"\n');
    expect(await decided('cargo tree')).toBe('ask');
  });

  // Read on the server's thread: a FIFO no one writes held the open, and every client with it (found in review; an
  // allowed `tar -x` can put one in the workspace), and a large file was read whole.
  it('a toolchain file that is a FIFO, or a file of a gibibyte: asked about, the server not held, the file not read whole', async () => {
    execFileSync('mkfifo', [path.join(workspace, 'rust-toolchain.toml')]);
    expect(await decided('cargo tree')).toBe('ask');
    rmSync(path.join(workspace, 'rust-toolchain.toml'));
    writeFileSync(path.join(workspace, 'crate', 'rust-toolchain.toml'), '');
    truncateSync(path.join(workspace, 'crate', 'rust-toolchain.toml'), 1024 ** 3);
    expect(await decided('cd crate && cargo tree')).toBe('ask');
    expect(await decided('cargo tree')).toBe('allow');
  });
});
