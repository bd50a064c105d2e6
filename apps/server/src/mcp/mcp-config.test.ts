import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadMcpConfig, McpConfigError, parseMcpConfig } from './mcp-config';

function problem(json: unknown): { field: string; server: string | undefined; message: string } {
  try {
    parseMcpConfig(typeof json === 'string' ? json : JSON.stringify(json), 'mcp.json');
  } catch (error) {
    if (!(error instanceof McpConfigError)) throw error;
    expect(error.source).toBe('mcp.json');
    return { field: error.field, server: error.server, message: error.message };
  }
  throw new Error('expected the config to be rejected');
}

describe('parseMcpConfig', () => {
  test('parses stdio and http servers in file order, with defaults, leaving out disabled ones', () => {
    const servers = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          files: { command: 'npx', args: ['-y', 'server-filesystem', '/tmp'], env: { LOG_LEVEL: 'debug' }, cwd: '/srv' },
          plain: { command: 'mcp-server' },
          remote: { type: 'streamable-http', url: 'https://mcp.example.test/mcp', headers: { Authorization: 'Bearer abc' } },
          off: { command: 'never-started', disabled: true },
        },
      }),
      'mcp.json',
    );
    expect([...servers]).toStrictEqual([
      ['files', { transport: 'stdio', command: 'npx', args: ['-y', 'server-filesystem', '/tmp'], env: { LOG_LEVEL: 'debug' }, cwd: '/srv' }],
      ['plain', { transport: 'stdio', command: 'mcp-server', args: [], env: {} }],
      ['remote', { transport: 'http', url: 'https://mcp.example.test/mcp', headers: { Authorization: 'Bearer abc' } }],
    ]);
  });

  test('accepts an empty server list', () => {
    expect(parseMcpConfig('{"mcpServers": {}}', 'mcp.json').size).toBe(0);
  });

  test('names the file when the JSON is broken', () => {
    expect(problem('{"mcpServers": ')).toStrictEqual({ field: '', server: undefined, message: expect.stringMatching(/^invalid MCP config mcp\.json: not valid JSON/) });
  });

  test('names the missing top-level field', () => {
    expect(problem({ servers: {} })).toMatchObject({ field: 'mcpServers', server: undefined });
  });

  test('names the server and the field of a wrong value', () => {
    expect(problem({ mcpServers: { files: { command: 'x', args: ['ok', 3] } } })).toStrictEqual({
      field: 'mcpServers.files.args.1',
      server: 'files',
      message: expect.stringMatching(/^invalid MCP config mcp\.json: server "files", field "mcpServers\.files\.args\.1": /),
    });
    expect(problem({ mcpServers: { files: { command: '' } } })).toMatchObject({ field: 'mcpServers.files.command', server: 'files' });
    expect(problem({ mcpServers: { files: { command: 'x', env: { 'BAD NAME': 'v' } } } })).toMatchObject({ field: 'mcpServers.files.env.BAD NAME', server: 'files' });
  });

  test('refuses a "type" the server’s "command" or "url" contradicts, rather than reading the server by the other', () => {
    expect(problem({ mcpServers: { remote: { type: 'stdio', url: 'https://mcp.example.test/mcp' } } })).toStrictEqual({
      field: 'mcpServers.remote.type',
      server: 'remote',
      message: expect.stringContaining('"type" is "stdio", a local server, but the server gives a "url"'),
    });
    expect(problem({ mcpServers: { local: { type: 'streamable-http', command: 'mcp-server' } } })).toMatchObject({
      field: 'mcpServers.local.type',
      message: expect.stringContaining('"type" is "streamable-http", a remote server, but the server gives a "command"'),
    });
    expect(problem({ mcpServers: { off: { type: 'http', command: 'mcp-server', disabled: true } } })).toMatchObject({ field: 'mcpServers.off.type' });
  });

  test('rejects server names outside [A-Za-z0-9_-], too long, or reaching the prototype', () => {
    expect(problem({ mcpServers: { 'my server': { command: 'x' } } })).toMatchObject({ field: 'mcpServers.my server', server: 'my server' });
    expect(problem({ mcpServers: { ['a'.repeat(33)]: { command: 'x' } } })).toMatchObject({ server: 'a'.repeat(33) });
    expect(problem('{"mcpServers": {"__proto__": {"command": "x"}}}')).toMatchObject({ field: 'mcpServers.__proto__', server: '__proto__' });
    expect(problem('{"mcpServers": {"ok": {"command": "x", "env": {"__proto__": "y"}}}}')).toMatchObject({ field: 'mcpServers.ok.env.__proto__', server: 'ok' });
  });

  test('rejects entries that are neither a command nor a URL, or both', () => {
    expect(problem({ mcpServers: { s: 'npx server' } })).toMatchObject({ field: 'mcpServers.s', message: expect.stringContaining('expected an object') });
    expect(problem({ mcpServers: { s: { args: [] } } })).toMatchObject({ field: 'mcpServers.s', message: expect.stringContaining('"command"') });
    expect(problem({ mcpServers: { s: { command: 'x', url: 'https://a.test' } } })).toMatchObject({ message: expect.stringContaining('not both') });
  });

  test('rejects URLs that are not http(s) and the legacy SSE transport', () => {
    expect(problem({ mcpServers: { r: { url: 'ftp://a.test/mcp' } } })).toMatchObject({ field: 'mcpServers.r.url', server: 'r' });
    expect(problem({ mcpServers: { r: { url: 'not a url' } } })).toMatchObject({ field: 'mcpServers.r.url' });
    expect(problem({ mcpServers: { r: { type: 'sse', url: 'https://a.test/sse' } } })).toMatchObject({ field: 'mcpServers.r.type', message: expect.stringContaining('SSE') });
  });

  // Found in review: such a URL was taken, fetch refused it at every connection, and its error, with the URL and the
  // password in it, went to the log and to the status shown in Settings.
  test('refuses a URL holding a user name or password, naming the field and not the URL, and says where credentials go', () => {
    for (const url of ['http://alice:TOPSECRET@127.0.0.1:8080/mcp', 'https://TOPSECRET@mcp.example.test/mcp', 'https://:TOPSECRET@mcp.example.test/']) {
      expect(problem({ mcpServers: { remote: { url, disabled: true } } })).toStrictEqual({
        field: 'mcpServers.remote.url',
        server: 'remote',
        message:
          'invalid MCP config mcp.json: server "remote", field "mcpServers.remote.url": must not hold a user name or password (fetch refuses such a URL): give them in "headers", as an "Authorization" header',
      });
    }
    const servers = parseMcpConfig(JSON.stringify({ mcpServers: { remote: { url: 'https://mcp.example.test/users/@alice:x/mcp' } } }), 'mcp.json');
    expect(servers.get('remote')).toStrictEqual({ transport: 'http', url: 'https://mcp.example.test/users/@alice:x/mcp', headers: {} });
  });

  test('refuses a key given twice anywhere, naming its path, rather than keep the last', () => {
    expect(problem('{"mcpServers": {\n"files": {"command": "x", "disabled": true},\n"files": {"command": "x"}}}')).toStrictEqual({
      field: 'mcpServers.files',
      server: 'files',
      message: 'invalid MCP config mcp.json: server "files", field "mcpServers.files": duplicate key (first on line 2, again on line 3)',
    });
    expect(problem('{"mcpServers": {"s": {"command": "x", "args": ["a"], "args": []}}}')).toMatchObject({ field: 'mcpServers.s.args', server: 's' });
    expect(problem('{"mcpServers": {"s": {"command": "x", "env": {"A": "1", "A": "2"}}}}')).toMatchObject({ field: 'mcpServers.s.env.A', server: 's' });
    expect(problem('{"mcpServers": {}, "mcpServers": {"s": {"command": "x"}}}')).toMatchObject({ field: 'mcpServers', server: undefined });
  });

  test('refuses a key it does not read, naming its path, in a server (disabled or not) and at the top', () => {
    expect(problem({ mcpServers: { s: { command: 'x', evn: { A: '1' } } } })).toStrictEqual({
      field: 'mcpServers.s.evn',
      server: 's',
      message: 'invalid MCP config mcp.json: server "s", field "mcpServers.s.evn": unknown key (see the README for the keys a server takes)',
    });
    expect(problem({ mcpServers: { r: { url: 'https://a.test/mcp', header: {} } } })).toMatchObject({ field: 'mcpServers.r.header', server: 'r' });
    expect(problem({ mcpServers: { s: { command: 'x', disabled: true, autoApprove: ['*'] } } })).toMatchObject({ field: 'mcpServers.s.autoApprove' });
    expect(problem({ mcpServers: {}, extra: 1 })).toMatchObject({ field: 'extra', server: undefined, message: expect.stringContaining('unknown key') });
  });

  test('refuses "disabled" that is not a boolean rather than start the server', () => {
    expect(problem({ mcpServers: { s: { command: 'x', disabled: 'true' } } })).toStrictEqual({
      field: 'mcpServers.s.disabled',
      server: 's',
      message: 'invalid MCP config mcp.json: server "s", field "mcpServers.s.disabled": Invalid input: expected boolean, received string',
    });
    expect([...parseMcpConfig(JSON.stringify({ mcpServers: { s: { command: 'x', disabled: false } } }), 'mcp.json').keys()]).toStrictEqual(['s']);
  });

  test('says where a text that is not JSON goes wrong, without quoting it', () => {
    expect(problem('root:x:0:0:root:/root:/bin/bash\n').message).toBe('invalid MCP config mcp.json: not valid JSON (expected a value at line 1, column 1)');
  });

  test('bounds the number of servers and the size of fields', () => {
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`s${i}`, { command: 'x' }]));
    expect(problem({ mcpServers: many })).toMatchObject({ field: 'mcpServers', message: expect.stringContaining('at most 32 servers') });
    expect(problem({ mcpServers: { s: { command: 'x', args: Array.from({ length: 257 }, () => 'a') } } })).toMatchObject({ field: 'mcpServers.s.args' });
  });
});

describe('loadMcpConfig', () => {
  test('reads a file, and names it when it is missing or broken', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-mcp-config-'));
    try {
      const path = join(dir, 'mcp.json');
      await writeFile(path, JSON.stringify({ mcpServers: { s: { command: 'x' } } }));
      expect([...(await loadMcpConfig(path)).keys()]).toStrictEqual(['s']);

      await writeFile(path, JSON.stringify({ mcpServers: { s: { command: 7 } } }));
      await expect(loadMcpConfig(path)).rejects.toThrow(`invalid MCP config ${path}: server "s", field "mcpServers.s.command"`);

      const missing = join(dir, 'missing.json');
      await expect(loadMcpConfig(missing)).rejects.toThrow(`invalid MCP config ${missing}: the file does not exist`);
      await expect(loadMcpConfig(dir)).rejects.toThrow('not a regular file');

      // Errors name the path given, not where a link leads.
      const target = join(dir, 'target.txt');
      await writeFile(target, 'secret-token-value\n');
      await expect(loadMcpConfig(target, 'mcp-link.json')).rejects.toThrow(
        new McpConfigError('mcp-link.json', '', 'not valid JSON (expected a value at line 1, column 1)'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
