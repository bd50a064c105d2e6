import { ChatService, MemoryStore, type AirlockStore, type AppRouter, type ConnectionLimits } from '@airlock/api';
import { ApprovalRegistry, defineTool, randomId, type AnyTool, type LoopEvent } from '@airlock/core';
import { createTRPCClient, createWSClient, wsLink, type TRPCClient } from '@trpc/client';
import { WebSocket } from 'ws';
import { z } from 'zod';
import { OpenAICompatibleModel } from '../../src/models/openai-compatible-model';
import { RuleBook } from '../../src/rules/rule-book';
import { startServer, type RunningServer } from '../../src/start-server';

export interface TestAirlockOptions {
  /** OpenAI-compatible API root of the model server (the fake one in tests). */
  modelUrl: string;
  tools?: AnyTool[];
  limits?: ConnectionLimits;
  maxConnections?: number;
  /** Folder of the built web app; default the server's own default. */
  webRoot?: string;
  /** A workspace whose lasting rules (`rules`, and its `.airlock/rules.json`) the calls are judged by. Default: no rules. */
  rulesWorkspace?: string;
  /** Origins of proxies in front of it that pass the Host on as sent (admitted in Origin and Host). Default none. */
  allowedOrigins?: string[];
  /** Whether the server takes its log for a terminal (it prints a new start-up link there). Default false: it logs nowhere. */
  logIsTerminal?: boolean;
  /** Where the chat service keeps its data. Default: in memory. */
  store?: AirlockStore;
  /** See `ChatServiceOptions.retryStoreAfterMs`. Default the service's. */
  retryStoreAfterMs?: number;
}

export interface TestAirlock extends AsyncDisposable {
  server: RunningServer;
  chat: ChatService;
  registry: ApprovalRegistry;
  /** The lasting rules, with `rulesWorkspace`. */
  rules: RuleBook | undefined;
  /** Opens a real tRPC WebSocket client with the right token. */
  connect(options?: ConnectOptions): TestClient;
  close(): Promise<void>;
}

/** A real Airlock server on 127.0.0.1 (port 0) with the OpenAI-compatible model adapter and the given tools. */
export async function startTestAirlock(options: TestAirlockOptions): Promise<TestAirlock> {
  const registry = new ApprovalRegistry();
  const model = new OpenAICompatibleModel({ baseURL: options.modelUrl, model: 'fake-model', label: 'fake' });
  const tools = options.tools ?? [];
  const rules = options.rulesWorkspace === undefined ? undefined : await RuleBook.open({ store: new MemoryStore(), workspace: options.rulesWorkspace, log: () => undefined });
  const chat = new ChatService({
    registry,
    model: () => model,
    tools: () => tools,
    ...(rules === undefined ? {} : { rules }),
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.retryStoreAfterMs === undefined ? {} : { retryStoreAfterMs: options.retryStoreAfterMs }),
  });
  const server = await startServer({
    config: {
      host: '127.0.0.1',
      port: 0,
      token: randomId('tok', 32),
      allowedOrigins: options.allowedOrigins ?? [],
      capacity: {
        ...(options.limits?.maxConcurrentRuns === undefined ? {} : { runsPerConnection: options.limits.maxConcurrentRuns }),
        ...(options.limits?.messagesPerMinute === undefined ? {} : { runsPerMinute: options.limits.messagesPerMinute }),
        ...(options.limits?.messageBurst === undefined ? {} : { runBurst: options.limits.messageBurst }),
        ...(options.limits?.maxSubscriptions === undefined ? {} : { subscriptionsPerConnection: options.limits.maxSubscriptions }),
        ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
      },
    },
    services: {
      chat,
      catalog: { tools: () => tools, servers: () => [] },
      modelInfo: () => ({ provider: 'fake', baseURL: options.modelUrl, model: 'fake-model', demo: false }),
      ...(rules === undefined ? {} : { rules }),
    },
    log: () => undefined,
    logIsTerminal: options.logIsTerminal ?? false,
    ...(options.webRoot === undefined ? {} : { webRoot: options.webRoot }),
  });
  const clients: TestClient[] = [];
  const close = async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await server.close();
  };
  return {
    server,
    chat,
    registry,
    rules,
    connect: (connectOptions) => {
      const client = connectClient(server.wsUrl, connectOptions?.token ?? server.token, connectOptions);
      clients.push(client);
      return client;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

export interface ConnectOptions {
  token?: string;
  /** Delay before each reconnect attempt. Default 10 ms. */
  retryDelayMs?: number;
}

export interface TestClient extends AsyncDisposable {
  trpc: TRPCClient<AppRouter>;
  /** The raw sockets this client opened, newest last: terminate one to simulate a dropped network. */
  sockets: WebSocket[];
  close(): Promise<void>;
}

export function connectClient(wsUrl: string, token: string, options: ConnectOptions = {}): TestClient {
  const sockets: WebSocket[] = [];
  class TrackedWebSocket extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      sockets.push(this);
    }
  }
  const wsClient = createWSClient({
    url: wsUrl,
    WebSocket: TrackedWebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: { token },
    retryDelayMs: () => options.retryDelayMs ?? 10,
  });
  const trpc = createTRPCClient<AppRouter>({ links: [wsLink({ client: wsClient })] });
  const close = async () => {
    await wsClient.close();
  };
  return { trpc, sockets, close, [Symbol.asyncDispose]: close };
}

export interface RunWatcher {
  /** Every event received, with its tracked id, in order. */
  readonly received: { id: string; event: LoopEvent }[];
  /** Resolves with the first received event (past or future) that matches. */
  next<T extends LoopEvent['type']>(type: T, where?: (event: Extract<LoopEvent, { type: T }>) => boolean): Promise<Extract<LoopEvent, { type: T }>>;
  /** Resolves when the run ends, with its run-end event. */
  readonly ended: Promise<Extract<LoopEvent, { type: 'run-end' }>>;
  /** Rejects when the subscription fails. */
  readonly failed: Promise<never>;
  unsubscribe(): void;
}

type StreamInput = Parameters<TRPCClient<AppRouter>['chat']['stream']['subscribe']>[0];

/** Subscribes to chat.stream and records what arrives, so a test can wait for the event it needs. */
export function watchRun(client: TestClient, input: StreamInput): RunWatcher {
  const received: { id: string; event: LoopEvent }[] = [];
  const waiters: { match: (event: LoopEvent) => boolean; resolve: (event: LoopEvent) => void }[] = [];
  let fail!: (error: unknown) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => undefined);
  const subscription = client.trpc.chat.stream.subscribe(input, {
    onData: ({ id, data }) => {
      received.push({ id, event: data });
      for (const waiter of [...waiters]) {
        if (waiter.match(data)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(data);
        }
      }
    },
    onError: (error) => fail(error),
  });
  const next = <T extends LoopEvent['type']>(type: T, where?: (event: Extract<LoopEvent, { type: T }>) => boolean) => {
    const match = (event: LoopEvent) => event.type === type && (!where || where(event as Extract<LoopEvent, { type: T }>));
    const seen = received.find((r) => match(r.event));
    if (seen) return Promise.resolve(seen.event as Extract<LoopEvent, { type: T }>);
    const arrived = new Promise<LoopEvent>((resolve) => waiters.push({ match, resolve }));
    return Promise.race([arrived, failed]) as Promise<Extract<LoopEvent, { type: T }>>;
  };
  const ended = next('run-end');
  ended.catch(() => undefined);
  return { received, next, ended, failed, unsubscribe: () => subscription.unsubscribe() };
}

/** A real tool that records each execution, so a test can assert it ran exactly once (or never). */
export function recordingTool(name = 'echo', options: { executesCode?: boolean } = {}) {
  const calls: string[] = [];
  const tool = defineTool({
    name,
    description: `Echoes its text (${name}).`,
    parameters: z.object({ text: z.string() }),
    annotations: { executesCode: options.executesCode ?? false, readOnly: !options.executesCode },
    execute: async ({ text }) => {
      calls.push(text);
      return `${name}: ${text}`;
    },
  });
  return { tool, calls };
}
