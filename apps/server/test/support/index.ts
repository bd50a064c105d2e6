export { startFakeOpenAIServer, type FakeOpenAIServer, type FakeOpenAIServerOptions, type FakeToolCall, type FakeTurn } from './fake-openai-server';
export { startTestAirlock, recordingTool, type TestAirlock, type TestAirlockOptions } from './test-airlock';
export { annotatedMcpServerCommand } from './annotated-mcp-server-command';
export { namedMcpServerCommand } from './named-mcp-server-command';
export { startServerProcess, type ServerProcess } from './server-process';
export { startStallingProxy, type StallingProxy } from './stalling-proxy';
export { DISK_FULL, fillingStore, type FillingStore } from './filling-store';
export { writeDatabase } from './write-database';
