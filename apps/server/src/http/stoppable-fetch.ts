import { untilAborted } from '../until-aborted';

/**
 * `send`, stopped by its request's `signal` until the last byte of the answer, whatever the garbage collector does.
 *
 * undici's fetch (and Node's own, an older undici) follows a request's signal through a WeakRef to an object nothing
 * else holds: after a collection, an abort can reach nothing. A request waiting for its headers, or a body that
 * stalls, then never ends: a start-up held for good by a model server's `/models`, an idle limit that never fired, a
 * Stop that did not stop a fetch. Here the signal is listened to directly: an abort rejects the wait for the answer
 * with the signal's reason, as fetch would, and errors the body being read, cancelling the one underneath, which
 * closes its connection. The signal still goes to `send`, so where undici does follow it the request ends there too.
 */
export function stoppableFetch<Input>(send: (input: Input, init?: RequestInit) => Promise<Response>): (input: Input, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const signal = init?.signal ?? undefined;
    if (signal === undefined) return await send(input, init);
    signal.throwIfAborted();
    const answer = send(input, init);
    const response = await untilAborted(answer, signal).catch((error: unknown) => {
      // An answer that comes after the abort is not read: cancelling its body closes its connection.
      if (signal.aborted) void answer.then((late) => late.body?.cancel(signal.reason), () => undefined).catch(() => undefined);
      throw error;
    });
    if (response.body === null) return response;
    return new Response(stoppableBody(response.body, signal), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** `body` read through, failing with the signal's reason at its abort (and `body` cancelled then), read or not. */
function stoppableBody(body: ReadableStream<Uint8Array>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let onAbort: (() => void) | undefined;
  const stopListening = () => {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    onAbort = undefined;
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        onAbort = () => {
          stopListening();
          controller.error(signal.reason);
          reader.cancel(signal.reason).catch(() => undefined);
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      },
      async pull(controller) {
        let read: Awaited<ReturnType<typeof reader.read>>;
        try {
          read = await reader.read();
        } catch (error) {
          stopListening();
          throw error;
        }
        // Aborted while the read was under way: the stream has failed already.
        if (signal.aborted) return;
        if (read.done) {
          stopListening();
          controller.close();
        } else {
          controller.enqueue(read.value);
        }
      },
      async cancel(reason) {
        stopListening();
        await reader.cancel(reason);
      },
    },
    // Read no further ahead than the reader asks: the body's own flow control stays as it was.
    { highWaterMark: 0 },
  );
}
