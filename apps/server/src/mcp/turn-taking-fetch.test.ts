import { describe, expect, test } from 'vitest';
import { MAX_STREAM_BYTES_PER_TURN, turnTakingFetch } from './turn-taking-fetch';

/** A response whose whole body is buffered before it is read: `chunks` chunks of 64 KiB of short events. */
function buffered(contentType: string, chunks: number): Response {
  const chunk = new TextEncoder().encode('data: x\n\n'.repeat(7282));
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let n = 0; n < chunks; n++) controller.enqueue(chunk);
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': contentType } });
}

/** Reads the body in promise callbacks only, as the SDK does; says how much was read when other work first ran. */
async function readAll(response: Response): Promise<{ total: number; beforeOtherWork: number | undefined }> {
  let total = 0;
  let beforeOtherWork: number | undefined;
  setImmediate(() => (beforeOtherWork = total));
  const reader = response.body!.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { total, beforeOtherWork };
    total += value.length;
  }
}

describe('turnTakingFetch', () => {
  // Found from outside: 16 MB of short events on a server's own stream held Airlock's thread for 3.5 s.
  test('hands an event stream on a bounded piece at a time, other work running between, every byte kept', async () => {
    const fetch = turnTakingFetch(() => Promise.resolve(buffered('text/event-stream; charset=utf-8', 32)));
    const { total, beforeOtherWork } = await readAll(await fetch('http://127.0.0.1/mcp'));
    expect(total).toBe(32 * 7282 * 9);
    expect(beforeOtherWork).toBeLessThanOrEqual(MAX_STREAM_BYTES_PER_TURN);
  });

  test('leaves any other body as it is', async () => {
    const response = buffered('application/json', 2);
    const fetch = turnTakingFetch(() => Promise.resolve(response));
    await expect(fetch('http://127.0.0.1/mcp')).resolves.toBe(response);
  });
});
