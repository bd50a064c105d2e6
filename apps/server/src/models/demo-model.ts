import { toolResultText, type ChatModel, type ChatRequest, type ModelPart, type ToolMessage, type ToolSpec } from '@airlock/core';
import { parseDemoIntent, type DemoIntent } from './demo-intent';

export const DEMO_MODEL_NAME = 'Demo model (offline)';

/** Lines of a tool result quoted back in the summary. */
const SUMMARY_LINES = 12;
const SUMMARY_LINE_CHARS = 200;

export interface DemoModelOptions {
  /** Pause between streamed text chunks, in ms, so a person can see the text arrive. Default 25; tests use 0. */
  chunkDelayMs?: number;
}

/**
 * An offline, deterministic stand-in for a language model, used when no model server is found.
 * It turns a few plain requests into real tool calls and summarises their results,
 * so a newcomer sees the whole flow: streaming, a call waiting for a decision, the result.
 */
export class DemoModel implements ChatModel {
  readonly name = DEMO_MODEL_NAME;
  private readonly chunkDelayMs: number;

  constructor(options: DemoModelOptions = {}) {
    this.chunkDelayMs = options.chunkDelayMs ?? 25;
  }

  async *stream(request: ChatRequest, signal: AbortSignal): AsyncGenerator<ModelPart, void, undefined> {
    const reply = planReply(request);
    yield { type: 'reasoning-delta', text: reply.reasoning };
    for (const chunk of wordChunks(reply.text)) {
      await pause(this.chunkDelayMs, signal);
      if (signal.aborted) return;
      yield { type: 'text-delta', text: chunk };
    }
    if (reply.call) {
      yield { type: 'tool-call', id: '', name: reply.call.tool, arguments: reply.call.arguments };
      yield { type: 'finish', reason: 'tool-calls' };
    } else {
      yield { type: 'finish', reason: 'stop' };
    }
  }
}

interface Reply {
  reasoning: string;
  text: string;
  call?: { tool: string; arguments: Record<string, string> };
}

function planReply(request: ChatRequest): Reply {
  const results = trailingToolResults(request.messages);
  if (results.length > 0) {
    return {
      reasoning: 'The last message is a tool result, so I will summarise it.',
      text: results.map(summariseResult).join('\n\n'),
    };
  }
  const last = request.messages.at(-1);
  const intent = last?.role === 'user' ? parseDemoIntent(last.content) : undefined;
  if (!intent) {
    return { reasoning: 'This is not one of the requests I know, so I will explain what the demo can do.', text: helpText(request.tools) };
  }
  const spec = request.tools.find((tool) => tool.name === intent.tool);
  if (!spec) {
    return {
      reasoning: `The request matches "${intent.phrase}", which needs the ${intent.tool} tool, but it is not offered.`,
      text:
        `I would call the \`${intent.tool}\` tool for this, but it is not enabled right now. ` +
        'Enable it in the tool list and ask again.',
    };
  }
  return {
    reasoning: `The request matches "${intent.phrase}", so I will call ${intent.tool}.`,
    text: `Calling \`${intent.tool}\` for you.`,
    call: { tool: intent.tool, arguments: argumentsFor(intent, spec) },
  };
}

/** Uses the argument names the offered tool declares where the demo's defaults differ. */
function argumentsFor(intent: DemoIntent, spec: ToolSpec): Record<string, string> {
  const properties = spec.parameters.properties;
  const declares = (key: string) => properties !== null && typeof properties === 'object' && Object.hasOwn(properties, key);
  if (intent.tool === 'write_file' && !declares('content') && declares('text')) {
    const { content, ...rest } = intent.arguments;
    return { ...rest, text: content ?? '' };
  }
  return intent.arguments;
}

function trailingToolResults(messages: ChatRequest['messages']): ToolMessage[] {
  const results: ToolMessage[] = [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== 'tool') break;
    results.unshift(message);
  }
  return results;
}

function summariseResult(result: ToolMessage): string {
  const name = `\`${result.toolName}\``;
  const content = result.content;
  if (content === toolResultText.denied(result.toolName)) {
    return `The call to ${name} was denied, so it did not run. No reason was given. Tell me what you would like instead.`;
  }
  const reason = deniedReason(result.toolName, content);
  if (reason !== undefined) {
    return `The call to ${name} was denied, so it did not run. The reason given: "${reason}". Tell me what you would like instead.`;
  }
  if (content === toolResultText.timedOut(result.toolName)) {
    return `Nobody decided on the call to ${name} before the approval timed out, so it did not run.`;
  }
  if (content === toolResultText.cancelled(result.toolName)) {
    return `The call to ${name} was cancelled before it finished.`;
  }
  if (content.startsWith('Error:')) {
    return `The call to ${name} did not succeed: ${firstLine(content.slice('Error:'.length).trim())}`;
  }
  if (content.trim() === '') return `${name} ran and returned nothing.`;
  const lines = content.replace(/\n+$/, '').split('\n');
  const shown = lines.slice(0, SUMMARY_LINES).map((line) => (line.length > SUMMARY_LINE_CHARS ? `${line.slice(0, SUMMARY_LINE_CHARS)}…` : line));
  const more = lines.length > shown.length ? `\n…and ${lines.length - shown.length} more lines.` : '';
  const count = lines.length === 1 ? '1 line' : `${lines.length} lines`;
  return `${name} returned ${count}:\n${fence(shown.join('\n'))}${more}`;
}

/** The person's words inside a denial result, or undefined when the result is not a denial with a reason. */
function deniedReason(toolName: string, content: string): string | undefined {
  const marker = '\u0000';
  const [before, after] = toolResultText.denied(toolName, marker).split(marker);
  if (before === undefined || after === undefined) return undefined;
  if (!content.startsWith(before) || !content.endsWith(after) || content.length < before.length + after.length) return undefined;
  return content.slice(before.length, content.length - after.length);
}

function helpText(tools: readonly ToolSpec[]): string {
  const enabled = tools.length > 0 ? `Tools enabled now: ${tools.map((tool) => tool.name).join(', ')}.` : 'No tools are enabled now.';
  return [
    'I am the demo model: no language model is connected, so I only understand a few fixed requests. Try one of these:',
    '',
    '- "list the files"',
    '- "read README.md"',
    '- "run `ls -la`"',
    '- "fetch https://example.com"',
    '- "write hello to notes.txt"',
    '',
    `Each becomes a real tool call that waits for your Allow or Deny. ${enabled}`,
    '',
    'To chat with a real model, start llama.cpp, Ollama, LM Studio or vLLM on its default port and restart Airlock, ' +
      'or set AIRLOCK_MODEL_URL to any OpenAI-compatible server (for example http://127.0.0.1:8080/v1) and optionally AIRLOCK_MODEL.',
  ].join('\n');
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > SUMMARY_LINE_CHARS ? `${line.slice(0, SUMMARY_LINE_CHARS)}…` : line;
}

/** A code fence longer than any backtick run inside, so quoted output cannot close it early. */
function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}\n${text}\n${ticks}`;
}

/** Splits text into pieces of a few words, whitespace kept, so joining them gives the text back. */
function wordChunks(text: string, wordsPerChunk = 3): string[] {
  const words = text.match(/\S+\s*/g) ?? [];
  const leading = /^\s*/.exec(text)?.[0] ?? '';
  const chunks: string[] = [];
  for (let index = 0; index < words.length; index += wordsPerChunk) chunks.push(words.slice(index, index + wordsPerChunk).join(''));
  if (leading !== '') chunks.unshift(leading);
  return chunks;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
