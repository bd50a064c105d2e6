import { randomId } from '@airlock/core';
import { createServices, DEFAULT_CAPACITY, startServer, type AirlockConfig, type RunningServer } from '@airlock/server';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '@airlock/server/testing';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const WEB_DIST = fileURLToPath(new URL('../../dist', import.meta.url));

/** Appends one line to ran.log each time it really runs, so a test can count executions. */
export const RECORDING_COMMAND = 'echo hello-airlock | tee -a ran.log';

export interface AirlockUnderTest extends AsyncDisposable {
  server: RunningServer;
  /** The fake OpenAI-compatible model server the real model adapter talks to. */
  model: FakeOpenAIServer;
  /**
   * The start-up address with the token, as the server prints it: the run's own `*.localhost` origin, new after each
   * `restart()` (Node clients reach it through `parseStartupLink`, which maps the name to 127.0.0.1).
   */
  readonly link: string;
  workspace: string;
  /** The server's data folder, with `keepData`. */
  dataDir: string | undefined;
  /** How many times RECORDING_COMMAND ran in the workspace. */
  runCount(): Promise<number>;
  /**
   * Stops the server and starts it again on the same port with the same token (and database, when kept);
   * `whileStopped` runs in between (a test that damages a stored row, which the running server holds locked).
   */
  restart(whileStopped?: () => unknown): Promise<void>;
  close(): Promise<void>;
}

export interface AirlockUnderTestOptions {
  /** Keep chats, waiting calls and the ledger in a database on disk, so they survive `restart()`. Default false. */
  keepData?: boolean;
  /** MCP servers to start, by name: written to an MCP config file the server reads as with `--mcp-config`. Default none. */
  mcpServers?: Record<string, { command: string; args: string[]; env?: Record<string, string> }>;
}

/**
 * The real server with the real services (OpenAI-compatible model adapter, built-in tools in a temporary
 * workspace) serving the built web app, and a fake model server scripted by the test.
 */
export async function startAirlockUnderTest(options: AirlockUnderTestOptions = {}): Promise<AirlockUnderTest> {
  const model = await startFakeOpenAIServer();
  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'airlock-e2e-')));
  const dataDir = options.keepData === true ? await mkdtemp(join(tmpdir(), 'airlock-e2e-data-')) : undefined;
  const mcpDir = options.mcpServers === undefined ? undefined : await mkdtemp(join(tmpdir(), 'airlock-e2e-mcp-'));
  const mcpConfigPath = mcpDir === undefined ? undefined : join(mcpDir, 'mcp.json');
  if (mcpConfigPath !== undefined) await writeFile(mcpConfigPath, JSON.stringify({ mcpServers: options.mcpServers }));
  const config: AirlockConfig = {
    host: '127.0.0.1',
    port: 0,
    allowRemote: false,
    token: randomId('tok', 32),
    tokenGenerated: false,
    workspace,
    modelUrl: model.url,
    model: 'fake-model',
    apiKey: undefined,
    secretFiles: [],
    toolSandbox: 'auto',
    toolNetwork: true,
    mcpConfigPath,
    allowedOrigins: [],
    capacity: { ...DEFAULT_CAPACITY, runsPerMinute: 1000, runBurst: 1000 },
    ...(dataDir === undefined ? {} : { dataDir }),
  };
  const start = async (port: number) => {
    const created = await createServices({ ...config, port }, { log: () => undefined });
    return startServer({ config: { ...config, port }, services: created.services, webRoot: WEB_DIST, log: () => undefined, logIsTerminal: false, dispose: () => created.close() });
  };
  let server = await start(0);
  const close = async () => {
    await server.close();
    await model.close();
    await rm(workspace, { recursive: true, force: true });
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    if (mcpDir !== undefined) await rm(mcpDir, { recursive: true, force: true });
  };
  return {
    get server() {
      return server;
    },
    model,
    get link() {
      return `${server.browserUrl}/#token=${encodeURIComponent(server.token)}`;
    },
    workspace,
    dataDir,
    runCount: async () => {
      const log = await readFile(join(workspace, 'ran.log'), 'utf8').catch(() => '');
      return log.split('\n').filter((line) => line === 'hello-airlock').length;
    },
    restart: async (whileStopped?: () => unknown) => {
      const port = server.port;
      await server.close();
      await whileStopped?.();
      server = await start(port);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
