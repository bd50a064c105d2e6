import { turnedOffTools } from '@airlock/api';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { namedMcpServerCommand } from './support/named-mcp-server-command';
import { startServerProcess, type ServerProcess } from './support/server-process';
import { connectClient, watchRun } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const withHash = (server: string, tool: string, name: string) => `${name}_${createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8)}`;

function offeredTools(request: Record<string, unknown> | undefined): string[] {
  return ((request?.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);
}

describe('a tool turned off, its MCP servers then configured otherwise', { timeout: 180_000 }, () => {
  it('stays off under the name it has now, hashed or plain again: for the model, through the settings and tool list, and said at start-up', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'airlock-renamed-data-'));
    const workspace = await mkdtemp(join(tmpdir(), 'airlock-renamed-ws-'));
    const mcpDir = await mkdtemp(join(tmpdir(), 'airlock-renamed-mcp-'));
    cleanups.push(() => Promise.all([dataDir, workspace, mcpDir].map((dir) => rm(dir, { recursive: true, force: true }))).then(() => undefined));
    const model = await startFakeOpenAIServer();
    cleanups.push(() => model.close());
    const token = randomBytes(24).toString('hex');
    const mcpConfig = join(mcpDir, 'mcp.json');
    const start = async (servers: Record<string, string>): Promise<ServerProcess> => {
      await writeFile(mcpConfig, JSON.stringify({ mcpServers: Object.fromEntries(Object.entries(servers).map(([name, tool]) => [name, namedMcpServerCommand(tool)])) }));
      return startServerProcess(['--data-dir', dataDir, '--workspace', workspace, '--mcp-config', mcpConfig, '--model-url', model.url], { AIRLOCK_TOKEN: token }, cleanups);
    };
    const connect = (server: ServerProcess) => {
      const client = connectClient(server.wsUrl, token);
      cleanups.push(() => client.close());
      return client;
    };

    // `a` alone offers `a__b__c`; `s` and `s__t` would both offer `s__t__u`, so each has a hash.
    const first = await start({ a: 'b__c', s: 't__u', s__t: 'u' });
    const before = connect(first);
    const ofS = withHash('s', 't__u', 's__t__u');
    expect((await before.trpc.tools.list.query()).tools.map((tool) => tool.name)).toStrictEqual(expect.arrayContaining(['a__b__c', ofS, withHash('s__t', 'u', 's__t__u')]));
    await before.trpc.settings.update.mutate({ disabledTools: ['a__b__c', ofS] });
    await before.close();
    await first.stop('SIGTERM');

    // Now `a__b` offers `c`: a's tool and its are hashed. `s__t` is gone: s's tool is plain again.
    const second = await start({ a: 'b__c', a__b: 'c', s: 't__u' });
    const ofA = withHash('a', 'b__c', 'a__b__c');
    const ofAB = withHash('a__b', 'c', 'a__b__c');
    expect(second.output()).toContain(
      `Note: The tool settings turn off "a__b__c", which no tool is named now; offered now as ${ofA} (MCP server "a", tool "b__c"), ${ofAB} (MCP server "a__b", tool "c"): each of them stays off`,
    );
    expect(second.output()).toContain(`Note: The tool settings turn off "${ofS}", which no tool is named now; offered now as s__t__u (MCP server "s", tool "t__u"): it stays off`);

    const after = connect(second);
    // The settings keep the names the person turned off; the tool list says which tools each may mean now.
    expect((await after.trpc.settings.get.query()).settings.disabledTools).toStrictEqual(['a__b__c', ofS]);
    const { tools } = await after.trpc.tools.list.query();
    const mcpTools = tools.filter((tool) => tool.source.startsWith('mcp:')).map(({ name, otherNames }) => ({ name, otherNames }));
    expect(mcpTools).toStrictEqual(
      expect.arrayContaining([
        { name: ofA, otherNames: ['a__b__c'] },
        { name: ofAB, otherNames: ['a__b__c'] },
        { name: 's__t__u', otherNames: [ofS] },
      ]),
    );
    expect(mcpTools).toHaveLength(3);

    // The tools a run may use, as the web app gives them from these two answers.
    const off = turnedOffTools((await after.trpc.settings.get.query()).settings.disabledTools, tools);
    model.enqueue({ text: 'None of those.' });
    const asked = model.requests.length;
    const run = watchRun(after, { sessionId: 's1', runId: 'run-1', message: 'What can you use?', options: { enabledTools: tools.map((tool) => tool.name).filter((name) => !off.has(name)) } });
    await run.next('run-end');
    const offered = offeredTools(model.requests[asked]);
    expect(offered).toContain('python');
    expect(offered.filter((name) => name.startsWith('a__b__c') || name.startsWith('s__t__u'))).toStrictEqual([]);
  });
});
