export { startFakeOpenAIServer, type FakeOpenAIServer, type FakeOpenAIServerOptions, type FakeToolCall, type FakeTurn } from './fake-openai-server';
