import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('client-quick-start.ts', import.meta.url));

describe('examples/client-quick-start.ts', () => {
  it('is the code the README shows for the client package, word for word (so what the README shows type-checks)', async () => {
    // The file's header, up to its first empty line, says what it is; the rest is the README's block.
    const code = (await readFile(EXAMPLE, 'utf8')).replace(/^(\/\/.*\n)+\n/, '');
    const readme = await readFile(README, 'utf8');
    const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
    expect(blocks.filter((block) => block?.includes('createAirlockClient'))).toStrictEqual([code]);
  });

  // Found by an outside probe: a project with target ES2022 failed tsc on the server's findLast, which the README did not say.
  it('type-checks with the tsconfig.json the README gives a project outside this repository', async () => {
    const readme = await readFile(README, 'utf8');
    const configs = [...readme.matchAll(/^```json\n(\{ "compilerOptions"[\s\S]*?)^```$/gm)].map((match) => match[1]!);
    expect(configs).toHaveLength(1);
    const { options, errors } = ts.convertCompilerOptionsFromJson((JSON.parse(configs[0]!) as { compilerOptions: unknown }).compilerOptions, fileURLToPath(new URL('.', import.meta.url)));
    expect(errors).toStrictEqual([]);
    const program = ts.createProgram([EXAMPLE], options);
    expect(ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))).toStrictEqual([]);
  }, 120_000);
});
