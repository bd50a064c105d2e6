import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempFolder } from '../tools/test-support';
import { evaluateRules } from './evaluate-rules';
import { projectMayRunInstead } from './project-programs';
import { readsCommandsFromInput } from './reads-commands-from-input';
import { context, prefix, rule, terminal, WORKSPACE } from './rule-fixtures';

const literal = (value: string) => ({ kind: 'literal' as const, value });
const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
});

// A folder of the workspace whose name starts with `..` (`..x`, `...`) is inside it, as any other.
describe('a workspace folder named ..x is inside the workspace for the rules', () => {
  it('under a command deny rule, a program of the workspace under ..x is not plain, as one under x', async () => {
    const noDelete = prefix('rm -rf', { effect: 'deny' });
    for (const program of [`${WORKSPACE}/x/evil.sh`, `${WORKSPACE}/..x/evil.sh`, `${WORKSPACE}/.../evil.sh`]) {
      const decision = await evaluateRules(terminal(program), [noDelete], context);
      expect('because' in decision ? decision.because.id : decision.decision, program).toBe(noDelete.id);
    }
  });

  it('a program of the workspace under ..x reads the commands a pipe feeds it, and no rule for its words covers them', async () => {
    const program = `${WORKSPACE}/..x/manage.py`;
    expect(readsCommandsFromInput({ words: [literal(program), literal('shell')], inputPiped: true }, WORKSPACE)).toBe(true);
    const exact = rule({ match: { kind: 'command-prefix', tokens: [program, 'shell'], exact: true } });
    expect(await evaluateRules(terminal(`${program} shell`), [exact], context)).toMatchObject({ decision: 'allow' });
    expect(await evaluateRules(terminal(`echo 'import os' | ${program} shell`), [exact], context)).toMatchObject({ decision: 'ask' });
  });

  it('a program in a folder named ..bin of the workspace on the PATH is the project’s, not the machine’s', async () => {
    await using workspace = await tempFolder();
    const bin = path.join(workspace.path, '..bin');
    await mkdir(bin);
    await writeFile(path.join(bin, 'project-only-tool'), '#!/bin/sh\n');
    await chmod(path.join(bin, 'project-only-tool'), 0o755);
    process.env.PATH = `${bin}:${savedPath ?? ''}`;
    expect(projectMayRunInstead('npm', 'project-only-tool', { workspace: workspace.path })).toBe(false);
    expect(projectMayRunInstead('npm', 'project-only-tool', { workspace: path.join(workspace.path, 'other') })).toBe(true);
  });
});
