import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { BUILD_OPTIONS } from '../build-options';

/** Packages a start with the shipped settings uses none of (no database, no MCP server, the demo model, no web_fetch). */
const LOADED_WHEN_USED = ['pg', 'openai', 'undici', '@modelcontextprotocol/sdk'];

/** The packages dist/main.js loads before it runs: its static imports and those of the chunks it imports, in turn. */
function loadedAtStart(metafile: Metafile): string[] {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const pending = ['dist/main.js'];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const output = metafile.outputs[file];
    if (output === undefined) throw new Error(`no ${file} in the build`);
    for (const { path, kind, external } of output.imports) {
      if (kind !== 'import-statement') continue;
      if (external !== true) pending.push(path);
      else if (!path.startsWith('node:')) packages.add(path);
    }
  }
  return [...packages].sort();
}

describe('the server build', () => {
  it('loads the PostgreSQL, MCP, model server and fetch clients only once they are used', async () => {
    const { metafile } = await build({ ...BUILD_OPTIONS, write: false, metafile: true, logLevel: 'silent' });
    const packages = loadedAtStart(metafile);
    expect(packages).toContain('better-sqlite3');
    expect(packages.filter((name) => LOADED_WHEN_USED.some((lazy) => name === lazy || name.startsWith(`${lazy}/`)))).toStrictEqual([]);
  });
});
