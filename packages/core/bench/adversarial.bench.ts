// Time to parse hostile model output (JSON repair, text-format tool calls) at 64 KiB, 512 KiB and 2 MiB.
// Run: pnpm --filter @airlock/core bench
// One case or size alone: node --import tsx bench/adversarial.bench.ts [name-substring] [--size=65536] [--runs=1]
import { parseModelJson, repairJson } from '../src/json-repair';
import { TextToolCallExtractor } from '../src/text-tool-calls';

const KiB = 1024;
const SIZES = [64 * KiB, 512 * KiB, 2048 * KiB];

interface Case {
  name: string;
  /** Sizes to build the input at, in place of the common ones. */
  sizes?: number[];
  build(size: number): string;
  run(input: string): unknown;
}

/** Feeds the text to an extractor in deltas of `size` characters, as a model server streams it. */
function extractInDeltas(text: string, size: number): unknown {
  const extractor = new TextToolCallExtractor();
  let visible = 0;
  for (let i = 0; i < text.length; i += size) visible += extractor.push(text.slice(i, i + size)).length;
  return [visible, extractor.finish().calls.length];
}

const fill = (unit: string, size: number) => unit.repeat(Math.max(1, Math.floor(size / unit.length)));

const cases: Case[] = [
  { name: 'as reported: fence, 5,000 spaces, a letter', sizes: [5004], build: (size) => '```' + ' '.repeat(size - 4) + 'x', run: parseModelJson },
  {
    name: 'as reported: 1 MB in an open tool call, 4-character deltas',
    sizes: [1_000_000],
    build: (size) => '<tool_call>{"name": "t", "arguments": {"x": "' + 'a'.repeat(size - 60) + '"}}',
    run: (input) => extractInDeltas(input, 4),
  },
  { name: 'fence, spaces, a letter', build: (size) => '```' + ' '.repeat(size - 4) + 'x', run: parseModelJson },
  { name: 'fence, spaces, fence around an object', build: (size) => '```json' + ' '.repeat(size - 20) + '{"a":1}```', run: parseModelJson },
  {
    name: 'one open tool call, 4-character deltas',
    build: (size) => '<tool_call>{"name": "t", "arguments": {"x": "' + 'a'.repeat(size - 60) + '"}}',
    run: (input) => extractInDeltas(input, 4),
  },
  { name: 'closed tool calls, 4-character deltas', build: (size) => fill('<tool_call>{"name": "t"}</tool_call> ', size), run: (input) => extractInDeltas(input, 4) },
  { name: 'unclosed <tool_call> tags, one delta', build: (size) => fill('<tool_call>', size), run: (input) => extractInDeltas(input, input.length) },
  { name: 'run of "<", 1-character deltas', build: (size) => '<'.repeat(size), run: (input) => extractInDeltas(input, 1) },
  { name: 'tag prefixes "<tool_cal", 4-character deltas', build: (size) => fill('<tool_cal', size), run: (input) => extractInDeltas(input, 4) },
  { name: 'repairJson: unclosed nesting', build: (size) => fill('{"a": [', size), run: repairJson },
  { name: 'repairJson: run of backslashes in a string', build: (size) => "'" + '\\'.repeat(size - 1), run: repairJson },
  { name: 'repairJson: run of quotes', build: (size) => fill('"\'', size), run: repairJson },
  { name: 'repairJson: bare words and spaces', build: (size) => fill('a    ', size), run: repairJson },
  { name: 'repairJson: trailing commas and spaces', build: (size) => '[' + fill('1,    ]', size), run: repairJson },
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
