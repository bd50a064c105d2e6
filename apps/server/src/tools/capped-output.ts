/**
 * Collects a stream of bytes keeping only its head and its tail, so a command that prints
 * gigabytes costs a bounded amount of memory and the model still sees how it started and ended.
 */
export class CappedOutput {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #totalBytes = 0;

  constructor(maxBytes: number) {
    this.#headLimit = Math.ceil(maxBytes / 2);
    this.#tailLimit = Math.max(0, maxBytes - this.#headLimit);
  }

  get totalBytes(): number {
    return this.#totalBytes;
  }

  push(chunk: Buffer): void {
    this.#totalBytes += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#headLimit) {
      const taken = rest.subarray(0, this.#headLimit - this.#headBytes);
      this.#head.push(taken);
      this.#headBytes += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0 || this.#tailLimit === 0) return;
    this.#tail.push(rest);
    this.#tailBytes += rest.length;
    // Drop whole chunks that the tail no longer needs; the last partial one is cut in text().
    while (this.#tail.length > 1 && this.#tailBytes - (this.#tail[0]?.length ?? 0) >= this.#tailLimit) {
      this.#tailBytes -= this.#tail.shift()?.length ?? 0;
    }
  }

  /** The kept text and how many bytes were left out between head and tail. */
  result(): { text: string; omittedBytes: number } {
    const head = withoutPartialEnd(Buffer.concat(this.#head));
    const tailAll = Buffer.concat(this.#tail);
    const tail = withoutPartialStart(tailAll.subarray(Math.max(0, tailAll.length - this.#tailLimit)));
    const omittedBytes = this.#totalBytes - head.length - tail.length;
    if (omittedBytes === 0) return { text: head.toString('utf8') + tail.toString('utf8'), omittedBytes };
    return { text: `${head.toString('utf8')}\n[… ${omittedBytes} bytes omitted …]\n${tail.toString('utf8')}`, omittedBytes };
  }
}

const isContinuationByte = (byte: number) => (byte & 0b1100_0000) === 0b1000_0000;

/** Cuts a UTF-8 sequence left incomplete at the end, so the head does not end in a replacement character. */
function withoutPartialEnd(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(4, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back] ?? 0;
    if (isContinuationByte(byte)) continue;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}

/** Skips continuation bytes of a character whose start was dropped. */
function withoutPartialStart(bytes: Buffer): Buffer {
  let start = 0;
  while (start < Math.min(3, bytes.length) && isContinuationByte(bytes[start] ?? 0)) start += 1;
  return bytes.subarray(start);
}
