import type { ChatModel, ChatRequest, ModelPart } from '../chat-model';
import { ScriptError } from '../errors';

/** One model turn: fixed parts, or a function that streams them (to wait, fail or inspect the request). */
export type ScriptStep = readonly ModelPart[] | ((request: ChatRequest, signal: AbortSignal) => AsyncIterable<ModelPart>);

/**
 * A deterministic model for tests: each call to `stream` plays the next step.
 * A call with no step left fails the run; `assertConsumed` fails the test when steps are left over.
 */
export class ScriptedModel implements ChatModel {
  readonly name = 'scripted';
  /** Every request the loop made, in order. */
  readonly requests: ChatRequest[] = [];
  private readonly steps: ScriptStep[];

  constructor(steps: readonly ScriptStep[]) {
    this.steps = [...steps];
  }

  get remaining(): number {
    return this.steps.length;
  }

  async *stream(request: ChatRequest, signal: AbortSignal): AsyncGenerator<ModelPart, void, undefined> {
    this.requests.push(structuredClone({ messages: [...request.messages], tools: [...request.tools] }));
    const step = this.steps.shift();
    if (step === undefined) {
      throw new ScriptError(`ScriptedModel: unexpected call #${this.requests.length}; the script has no step left`);
    }
    if (typeof step === 'function') {
      yield* step(request, signal);
      return;
    }
    yield* step;
  }

  assertConsumed(): void {
    if (this.steps.length > 0) {
      throw new ScriptError(`ScriptedModel: ${this.steps.length} scripted step(s) were never used`);
    }
  }
}

/** A turn that answers in text. */
export function textStep(text: string): ModelPart[] {
  return [
    { type: 'text-delta', text },
    { type: 'finish', reason: 'stop' },
  ];
}

/** A turn that makes native tool calls. */
export function toolCallStep(...calls: { name: string; arguments: Record<string, unknown> | string; id?: string }[]): ModelPart[] {
  return [
    ...calls.map((call, index): ModelPart => ({ type: 'tool-call', id: call.id ?? `call_${index}`, name: call.name, arguments: call.arguments })),
    { type: 'finish', reason: 'tool-calls' },
  ];
}

/** A turn that streams until the signal aborts, like a model that is still writing when the person presses Stop. */
export function hangingStep(prefix = ''): ScriptStep {
  return async function* (_request, signal) {
    if (prefix !== '') yield { type: 'text-delta', text: prefix };
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
  };
}
