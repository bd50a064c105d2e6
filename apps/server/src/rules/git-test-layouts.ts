import { GIT_PREFIX_SUBCOMMANDS, MemoryStore } from '@airlock/api';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { RuleBook } from './rule-book';
import { recordingTerminal } from './test-chat';

/** A Git directory as git tells one: `HEAD`, `objects`, `refs`. */
export async function gitDirectory(folder: string): Promise<void> {
  await mkdir(path.join(folder, '.git', 'objects'), { recursive: true });
  await mkdir(path.join(folder, '.git', 'refs'), { recursive: true });
  await writeFile(path.join(folder, '.git', 'HEAD'), 'ref: refs/heads/main\n');
}

/**
 * What the rule book decides for each line under the prefix rules "Always allow" proposes for git, and a prefix rule
 * for each of `extra` (`git`, `cd`).
 */
export async function decisions(workspace: string, lines: readonly string[], extra: readonly string[] = []): Promise<Record<string, string>> {
  const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
  for (const tokens of [...[...GIT_PREFIX_SUBCOMMANDS].map((name) => ['git', name]), ...extra.map((line) => line.split(' '))]) {
    await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens, exact: false }, scope: { kind: 'global' }, source: 'user' });
  }
  const found: Record<string, string> = {};
  for (const command of lines) {
    const verdict = await rules.evaluate('s', { id: 'c', name: 'terminal', arguments: { command } }, recordingTerminal([]));
    found[command] = verdict?.effect ?? 'none';
  }
  return found;
}

/** Each line with the same verdict, so that a failure names every line that differs. */
export const all = (lines: readonly string[], verdict: string) => Object.fromEntries(lines.map((line) => [line, verdict]));
