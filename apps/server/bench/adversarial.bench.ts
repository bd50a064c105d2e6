// Time to read hostile web pages (htmlToText) and streamed tool-call chunks at 64 KiB, 512 KiB and 2 MiB.
// Run: pnpm --filter @airlock/server bench
// One case or size alone: tsx bench/adversarial.bench.ts [name-substring] [--size=65536] [--runs=1]
import { MAX_TOOL_ARGUMENT_CHARS, OpenAIChunkReader } from '../src/models/openai-chunk-reader';
import { htmlToText } from '../src/tools/html-to-text';

const KiB = 1024;
const SIZES = [64 * KiB, 512 * KiB, 2048 * KiB];

interface Case {
  name: string;
  /** Sizes to build the input at, in place of the common ones. */
  sizes?: number[];
  build(size: number): string;
  run(input: string): unknown;
}

const fill = (unit: string, size: number) => unit.repeat(Math.max(1, Math.floor(size / unit.length)));
const nest = (open: string, close: string, size: number) => {
  const count = Math.max(1, Math.floor(size / (open.length + close.length)));
  return open.repeat(count) + close.repeat(count);
};
const page = (html: string) => htmlToText(html, 'https://example.test/');
const LONG_PAGE_ADDRESS = `https://example.test/${'p'.repeat(8_000)}`;
const distinctLinks = (size: number) => {
  const links: string[] = [];
  for (let length = 0, index = 0; length < size; index++) {
    const link = `<a href="/p${index}">y</a>`;
    links.push(link);
    length += link.length;
  }
  return links.join('').slice(0, size);
};

/** Streams the text as the arguments of one tool call, in pieces of four characters, one chunk each. */
function readArgumentChunks(text: string): unknown {
  const reader = new OpenAIChunkReader();
  for (let i = 0; i < text.length; i += 4) {
    reader.push({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 't', arguments: text.slice(i, i + 4) } }] } }] });
  }
  return reader.finish();
}

const cases: Case[] = [
  { name: 'as reported: 20,000 nested links', sizes: [20_000], build: (count) => '<a>'.repeat(count) + 'x' + '</a>'.repeat(count), run: page },
  { name: 'as reported: 360 KB page, unterminated closing tags', sizes: [360_000], build: (size) => '<script>' + fill('</script ', size - 8), run: page },
  { name: 'html: <script> then "</script " without ">"', build: (size) => '<script>' + fill('</script ', size - 8), run: page },
  { name: 'html: nested links', build: (size) => nest('<a href="https://example.test/a">link ', '</a>', size), run: page },
  { name: 'html: white space in nested links', build: (size) => nest('<a href="/x"> ', '</a>', size), run: page },
  { name: 'html: unclosed tags "<a "', build: (size) => fill('<a ', size), run: page },
  { name: 'html: unclosed quoted attributes', build: (size) => fill('<a x="', size), run: page },
  { name: 'html: run of "<"', build: (size) => '<'.repeat(size), run: page },
  { name: 'html: nested <div>', build: (size) => nest('<div>', '</div>', size), run: page },
  { name: 'html: nested dropped <nav>', build: (size) => nest('<nav>', '</nav>', size), run: page },
  { name: 'html: unclosed <title> tags', build: (size) => fill('<title>', size), run: page },
  { name: 'html: attributes full of "href="', build: (size) => fill(`<a ${' href= '.repeat(4000)}>`, size), run: page },
  { name: 'html: entity-like runs "&#x"', build: (size) => fill('&#x1&amp', size), run: page },
  { name: 'html: <pre> with white space', build: (size) => '<pre>' + fill(' \t\n\r', size - 5), run: page },
  { name: 'as reported: <pre> then " \\n\\t"', build: (size) => '<pre>' + fill(' \n\t', size - 5), run: page },
  { name: 'html: list items', build: (size) => fill('<li>', size), run: page },
  { name: 'html: table cells', build: (size) => fill('<td>x', size), run: page },
  { name: 'html: paragraphs', build: (size) => fill('<p>a', size), run: page },
  { name: 'html: links, each to another address', build: (size) => distinctLinks(size), run: page },
  { name: 'html: links to an 8,000-character page address', build: (size) => fill('<a href="">y</a>', size), run: (html) => htmlToText(html, LONG_PAGE_ADDRESS) },
  { name: 'chunks: tool-call arguments, 4-character pieces', build: (size) => 'a'.repeat(Math.min(size, MAX_TOOL_ARGUMENT_CHARS)), run: readArgumentChunks },
];

const args = process.argv.slice(2);
const filter = args.find((arg) => !arg.startsWith('--'));
const sizeArg = args.find((arg) => arg.startsWith('--size='));
const runs = Number(args.find((arg) => arg.startsWith('--runs='))?.slice('--runs='.length) ?? 3);
const sizes = sizeArg ? [Number(sizeArg.slice('--size='.length))] : SIZES;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

console.log(`node ${process.version}, median of ${runs} run(s)`);
console.log('| input | size | ms |');
console.log('|---|---:|---:|');
for (const c of cases.filter((c) => filter === undefined || c.name.includes(filter))) {
  c.run(c.build(1024));
  for (const size of c.sizes ?? sizes) {
    const input = c.build(size);
    const times: number[] = [];
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now();
      c.run(input);
      times.push(performance.now() - t0);
    }
    console.log(`| ${c.name} | ${input.length.toLocaleString('en')} chars | ${median(times).toFixed(1)} |`);
  }
}
