import { MemoryStore, type RuleDraft } from '@airlock/api';
import type { AnyTool } from '@airlock/core';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { hostileServer } from '../mcp/fixtures/test-servers';
import { McpManager } from '../mcp/mcp-manager';
import { mcpToolName } from '../mcp/mcp-tool';
import { RuleBook } from './rule-book';
import { staleToolNames } from './stale-tool-names';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

/** Three real servers: `a` + `b__c` and `a__b` + `c` would both be `a__b__c`, so both are offered with a hash. */
async function collidingServers() {
  const mcp = new McpManager({
    servers: new Map([
      ['a', hostileServer('named', { TOOL_NAME: 'b__c' })],
      ['a__b', hostileServer('named', { TOOL_NAME: 'c' })],
      ['other', hostileServer('named', { TOOL_NAME: 'c' })],
    ]),
    logger: { info: () => undefined, warn: () => undefined },
  });
  await mcp.start();
  const workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'airlock-stale-names-')));
  const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
  const bySource = new Map(mcp.tools().map((tool) => [tool.source, tool]));
  const tool = (source: string): AnyTool => bySource.get(source)!;
  return {
    rules,
    tools: mcp.tools(),
    ofA: tool('mcp:a'),
    ofAB: tool('mcp:a__b'),
    ofOther: tool('mcp:other'),
    [Symbol.asyncDispose]: async () => {
      await mcp.close();
      await rm(workspace, { recursive: true, force: true });
    },
  };
}

const exact = (effect: 'allow' | 'deny', tool: string, args: Record<string, unknown>): RuleDraft => ({
  effect,
  tool,
  match: { kind: 'exact-arguments', arguments: args },
  scope: { kind: 'global' },
  source: 'user',
});

describe('a rule written for the name two MCP servers\' tools shared, now offered with a hash', () => {
  // `a__b__c` was whichever of the two came first; with both now hashed it named no tool, and a deny rule for it
  // silently stopped denying.
  test('a deny rule still denies each tool the name may mean, and no other', async () => {
    await using servers = await collidingServers();
    const { rules, ofA, ofAB, ofOther } = servers;
    expect([ofA.name, ofAB.name].every((name) => /^a__b__c_[0-9a-f]{8}$/.test(name))).toBe(true);
    const deny = await rules.add(exact('deny', 'a__b__c', { n: 1 }));
    for (const tool of [ofA, ofAB]) {
      await expect(rules.evaluate('s', { id: 'c1', name: tool.name, arguments: { n: 1 } }, tool)).resolves.toMatchObject({ effect: 'deny', ruleId: deny.rule.id });
      // An exact-arguments rule still covers those arguments only.
      await expect(rules.evaluate('s', { id: 'c2', name: tool.name, arguments: { n: 2 } }, tool)).resolves.toBeUndefined();
    }
    await expect(rules.evaluate('s', { id: 'c3', name: ofOther.name, arguments: { n: 1 } }, ofOther)).resolves.toBeUndefined();
  });

  test('an allow rule allows neither, while one written for a hashed name allows that tool', async () => {
    await using servers = await collidingServers();
    const { rules, ofA, ofAB } = servers;
    await rules.add(exact('allow', 'a__b__c', { n: 1 }));
    for (const tool of [ofA, ofAB]) await expect(rules.evaluate('s', { id: 'c1', name: tool.name, arguments: { n: 1 } }, tool)).resolves.toBeUndefined();
    const forA = await rules.add(exact('allow', ofA.name, { n: 1 }));
    await expect(rules.evaluate('s', { id: 'c2', name: ofA.name, arguments: { n: 1 } }, ofA)).resolves.toMatchObject({ effect: 'allow', ruleId: forA.rule.id });
    await expect(rules.evaluate('s', { id: 'c3', name: ofAB.name, arguments: { n: 1 } }, ofAB)).resolves.toBeUndefined();
  });

  test('is named at start-up with what it still covers, as is a rule naming no tool at all', async () => {
    await using servers = await collidingServers();
    const { rules, tools, ofA, ofAB } = servers;
    const deny = await rules.add(exact('deny', 'a__b__c', {}));
    const allow = await rules.add(exact('allow', 'a__b__c', { n: 1 }));
    const gone = await rules.add(exact('allow', 'gone__tool', {}));
    await rules.add(exact('allow', ofA.name, {}));
    await rules.add(exact('deny', 'other__c', {}));
    const offered = `${ofA.name} (MCP server "a", tool "b__c"), ${ofAB.name} (MCP server "a__b", tool "c")`;
    expect(staleToolNames((await rules.list()).map((view) => view.rule), tools)).toStrictEqual([
      `The deny rule ${deny.rule.id} (global) names the tool "a__b__c", offered now as ${offered}, since the name would read as another server's tool: it denies each of them`,
      `The allow rule ${allow.rule.id} (global) names the tool "a__b__c", offered now as ${offered}, since the name would read as another server's tool: it allows none of them, as the name does not say which; write it again for the one meant`,
      `The allow rule ${gone.rule.id} (global) names the tool "gone__tool", which no tool is now: it matches no call until a tool of that name is offered again (an MCP server that is down offers none)`,
    ]);
  });
});

describe('a rule written for the hashed name of an MCP tool, its name plain again since the other server went', () => {
  // `s` + `t__u` was offered as `s__t__u_<hash>` while a server `s__t` was configured beside it.
  async function plainAgain() {
    const mcp = new McpManager({ servers: new Map([['s', hostileServer('named', { TOOL_NAME: 't__u' })]]), logger: { info: () => undefined, warn: () => undefined } });
    await mcp.start();
    const workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'airlock-stale-names-')));
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    return {
      rules,
      tools: mcp.tools(),
      [Symbol.asyncDispose]: async () => {
        await mcp.close();
        await rm(workspace, { recursive: true, force: true });
      },
    };
  }
  const hashed = mcpToolName('s', 't__u', ['s', 's__t']);

  test('a deny rule still denies that tool, an allow rule allows it no more, and start-up says so', async () => {
    await using servers = await plainAgain();
    const { rules, tools } = servers;
    const tool = tools[0]!;
    expect(tools.map(({ name }) => name)).toStrictEqual(['s__t__u']);
    const deny = await rules.add(exact('deny', hashed, { n: 1 }));
    const allow = await rules.add(exact('allow', hashed, { n: 2 }));
    await expect(rules.evaluate('s', { id: 'c1', name: 's__t__u', arguments: { n: 1 } }, tool)).resolves.toMatchObject({ effect: 'deny', ruleId: deny.rule.id });
    await expect(rules.evaluate('s', { id: 'c2', name: 's__t__u', arguments: { n: 2 } }, tool)).resolves.toBeUndefined();
    expect(staleToolNames((await rules.list()).map((view) => view.rule), tools)).toStrictEqual([
      `The deny rule ${deny.rule.id} (global) names the tool ${JSON.stringify(hashed)}, offered now as s__t__u (MCP server "s", tool "t__u"), since the name would no longer read as another server's tool: it denies it`,
      `The allow rule ${allow.rule.id} (global) names the tool ${JSON.stringify(hashed)}, offered now as s__t__u (MCP server "s", tool "t__u"), since the name would no longer read as another server's tool: it allows it no more; write it again for the name it has now`,
    ]);
  });
});
