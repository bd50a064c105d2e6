// The measuring instrument for a server process the bench did not build itself: Node's inspector, opened on
// demand with SIGUSR1 (the process runs with NODE_OPTIONS=--inspect-port=0, so it listens on a free port and
// only once asked). Through it the bench collects garbage, reads process.memoryUsage(), takes heap snapshots
// and CPU profiles, without any code of its own in the server.
import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { WebSocket } from 'ws';

export interface MemoryUsage {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Resident bytes of the C allocator's main arena (the `[heap]` mapping); NaN where /proc is not there. */
  mallocArena: number;
}

/** Evaluated in the server: process.memoryUsage() and the resident size of its [heap] mapping. */
const MEMORY_USAGE = `(() => {
  const usage = process.memoryUsage();
  let mallocArena = NaN;
  try {
    const smaps = process.getBuiltinModule('node:fs').readFileSync('/proc/self/smaps', 'utf8');
    const at = smaps.search(/ \\[heap\\]\\n/);
    if (at >= 0) mallocArena = Number(/\\nRss:\\s+(\\d+) kB/.exec(smaps.slice(at))[1]) * 1024;
  } catch {}
  return JSON.stringify({ ...usage, mallocArena });
})()`;

export class Inspector {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly listeners = new Map<string, (params: unknown) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (raw: Buffer) => {
      const message = JSON.parse(raw.toString()) as { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: unknown };
      if (message.id !== undefined) {
        const waiter = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        if (message.error) waiter?.reject(new Error(message.error.message));
        else waiter?.resolve(message.result);
      } else if (message.method !== undefined) {
        this.listeners.get(message.method)?.(message.params);
      }
    });
  }

  /** Opens the inspector of process `pid` (whose stderr is `stderr`) and connects to it. */
  static async open(pid: number, stderr: Readable): Promise<Inspector> {
    const url = new Promise<string>((resolve) => {
      const onData = (data: Buffer) => {
        const found = /Debugger listening on (ws:\/\/\S+)/.exec(data.toString());
        if (!found) return;
        stderr.off('data', onData);
        resolve(found[1]!);
      };
      stderr.on('data', onData);
    });
    process.kill(pid, 'SIGUSR1');
    const socket = new WebSocket(await url, { perMessageDeflate: false, maxPayload: 2 ** 30 });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new Inspector(socket);
  }

  send<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Two full collections, as `global.gc(); global.gc()` would. */
  async collectGarbage(): Promise<void> {
    await this.send('HeapProfiler.collectGarbage');
    await this.send('HeapProfiler.collectGarbage');
  }

  async memoryUsage(): Promise<MemoryUsage> {
    const answer = await this.send<{ result: { value: string } }>('Runtime.evaluate', { expression: MEMORY_USAGE, returnByValue: true });
    const usage = JSON.parse(answer.result.value) as Omit<MemoryUsage, 'mallocArena'> & { mallocArena: number | null };
    return { ...usage, mallocArena: usage.mallocArena ?? NaN };
  }

  /**
   * The memory after two full collections, read once the RSS holds still (within 256 KiB over 200 ms): V8 hands freed
   * pages back to the system from its own threads within seconds of a collection, so a burst's freed pages are not counted.
   */
  async settledMemoryUsage(): Promise<MemoryUsage> {
    await this.collectGarbage();
    let last = await this.memoryUsage();
    for (let polls = 0; polls < 100; polls++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const now = await this.memoryUsage();
      if (Math.abs(now.rss - last.rss) < 256 * 1024) return now;
      last = now;
    }
    return last;
  }

  /** Writes a heap snapshot (after a collection) to `file`, readable by Chrome's DevTools. */
  async heapSnapshot(file: string): Promise<void> {
    const out = createWriteStream(file);
    this.listeners.set('HeapProfiler.addHeapSnapshotChunk', (params) => out.write((params as { chunk: string }).chunk));
    await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    this.listeners.delete('HeapProfiler.addHeapSnapshotChunk');
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  }

  /** Starts sampling the CPU every `intervalUs` microseconds. */
  async startProfile(intervalUs = 100): Promise<void> {
    await this.send('Profiler.enable');
    await this.send('Profiler.setSamplingInterval', { interval: intervalUs });
    await this.send('Profiler.start');
  }

  /** Stops sampling; answers the profile as a `.cpuprofile` object. */
  async stopProfile(): Promise<unknown> {
    const { profile } = await this.send<{ profile: unknown }>('Profiler.stop');
    await this.send('Profiler.disable');
    return profile;
  }

  close(): void {
    this.socket.close();
  }
}
