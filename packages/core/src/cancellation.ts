/** Called when a CancelSignal aborts: a function, or an object with handleEvent (as EventTarget allows). */
export type CancelListener = (() => void) | { handleEvent(): void };

/**
 * What the loop and the registry need of a cancellation signal. An AbortSignal is one; so is a
 * Cancellation, which costs a few dozen bytes where an AbortSignal costs about a kilobyte in Node.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: CancelListener): void;
  removeEventListener(type: 'abort', listener: CancelListener): void;
}

/**
 * A run's cancellation, light enough to hold while thousands of runs wait on decisions.
 *
 * An AbortSignal in Node carries two Maps and a hidden class of its own (about 1 KB with one
 * listener). A run only needs a real one while something that takes an AbortSignal is working,
 * a model turn or a tool call; `linkedController` makes one for that long.
 */
export class Cancellation implements CancelSignal {
  private isAborted = false;
  private abortReason: unknown = undefined;
  /** One listener (the usual case: a run's waiting call or its running work) or several. */
  private listeners: CancelListener | CancelListener[] | undefined = undefined;

  get aborted(): boolean {
    return this.isAborted;
  }

  get reason(): unknown {
    return this.abortReason;
  }

  /**
   * Aborts once: listeners run in the order they were added; later calls do nothing. A listener that
   * throws does not keep the others from running; the first error is thrown once they all have.
   */
  cancel(reason?: unknown): void {
    if (this.isAborted) return;
    this.isAborted = true;
    this.abortReason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.listeners;
    this.listeners = undefined;
    let failure: { error: unknown } | undefined;
    for (const listener of Array.isArray(listeners) ? listeners : listeners ? [listeners] : []) {
      try {
        if (typeof listener === 'function') listener();
        else listener.handleEvent();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  /** Like EventTarget: a listener added twice is called once; none is called after the abort. */
  addEventListener(_type: 'abort', listener: CancelListener): void {
    const listeners = this.listeners;
    if (this.aborted || listeners === listener) return;
    if (!listeners) this.listeners = listener;
    else if (!Array.isArray(listeners)) this.listeners = [listeners, listener];
    else if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: CancelListener): void {
    const listeners = this.listeners;
    if (listeners === listener) this.listeners = undefined;
    else if (Array.isArray(listeners)) {
      const at = listeners.indexOf(listener);
      if (at >= 0) listeners.splice(at, 1);
    }
  }
}

export interface LinkedController {
  /** Aborts with the signal's reason when the signal aborts (at once if it already has). */
  readonly controller: AbortController;
  /** Unlinks the controller from the signal; call when the work it covers is done. */
  release(): void;
}

/** A real AbortController for a piece of work under `signal`, for APIs that take an AbortSignal. */
export function linkedController(signal: CancelSignal): LinkedController {
  const controller = new AbortController();
  if (signal.aborted) {
    controller.abort(signal.reason);
    return { controller, release: () => undefined };
  }
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort);
  return { controller, release: () => signal.removeEventListener('abort', onAbort) };
}
