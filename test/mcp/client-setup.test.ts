import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/context.js';
import { REPO_ROOT } from '../helpers/server-process.js';

/**
 * The README's "Over MCP" client setup: each block is a fixture here, checked for the fields its client
 * documents, and used to connect to a running registry. Sources of each format:
 * - Claude Code: https://code.claude.com/docs/en/mcp (`claude mcp add --transport http <name> <url>
 *   --header "Authorization: Bearer ..."`)
 * - Codex: https://developers.openai.com/codex/mcp and openai/codex's configuration reference (`[mcp_servers.<name>]`,
 *   `url`, `bearer_token_env_var`, `http_headers`, `env_http_headers`)
 * - Cursor: https://cursor.com/docs/mcp (`mcpServers`, `url`, `headers`, `${env:NAME}`)
 * - VS Code: https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (`servers`,
 *   `type: "http"`, `url`, `headers`, `inputs` of type `promptString`, `${input:id}`)
 * - Claude Desktop: https://support.claude.com/en/articles/11503834 (remote servers only as custom
 *   connectors, never from claude_desktop_config.json)
 */

const FIXTURES = path.join(import.meta.dirname, 'client-configs');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8');
const README_URL = 'http://127.0.0.1:3000/mcp';
const TOKEN_VARIABLE = 'SKILLREG_TOKEN';

function overMcpSection(): string {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n### Over MCP\n');
  expect(start, 'README has a "### Over MCP" section').toBeGreaterThan(0);
  const end = readme.indexOf('\n### ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

function codeBlocks(markdown: string): { lang: string; text: string }[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({
    lang: match[1]!,
    text: match[2]!,
  }));
}

/** A command line split as a POSIX shell would split these (double quotes, $VAR from `env`). */
function shellWords(line: string, env: Record<string, string>): string[] {
  const words = line.match(/"[^"]*"|\S+/g) ?? [];
  return words.map((word) =>
    word.replace(/^"|"$/g, '').replace(/\$([A-Z_][A-Z0-9_]*)/g, (_all, name: string) => env[name] ?? ''),
  );
}

/** What a client connects with: the URL and the headers it sends. */
interface Connection {
  url: string;
  headers: Record<string, string>;
}

function claudeCodeConnections(text: string, env: Record<string, string>): Connection[] {
  const commands = text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  return commands.map((line) => {
    const words = shellWords(line, env);
    expect(words.slice(0, 5)).toEqual(['claude', 'mcp', 'add', '--transport', 'http']);
    const [name, url, ...options] = words.slice(5);
    expect(name).toMatch(/^[\w-]+$/);
    const headers: Record<string, string> = {};
    for (let i = 0; i < options.length; i += 2) {
      expect(options[i]).toBe('--header');
      const [key, ...value] = options[i + 1]!.split(':');
      headers[key!.trim()] = value.join(':').trim();
    }
    return { url: url!, headers };
  });
}

/**
 * The Codex block, read line by line (no TOML parser is a dependency): one `[mcp_servers.<name>]`
 * table of string keys, each a key Codex documents for a Streamable HTTP server.
 */
function codexConnection(text: string, env: Record<string, string>): Connection {
  const [header, ...lines] = text.trimEnd().split('\n');
  expect(header).toMatch(/^\[mcp_servers\.[A-Za-z0-9_-]+\]$/);
  const table: Record<string, string> = {};
  for (const line of lines) {
    const match = /^([a-z_]+) = "([^"]*)"$/.exec(line);
    expect(match, line).not.toBeNull();
    table[match![1]!] = match![2]!;
  }
  const documented = ['url', 'bearer_token_env_var', 'http_headers', 'env_http_headers'];
  expect(Object.keys(table).filter((key) => !documented.includes(key))).toEqual([]);
  expect(table.bearer_token_env_var).toBe(TOKEN_VARIABLE);
  return { url: table.url!, headers: { Authorization: `Bearer ${env[table.bearer_token_env_var!]}` } };
}

function cursorConnection(text: string, env: Record<string, string>): Connection {
  const config = JSON.parse(text) as { mcpServers: Record<string, Record<string, unknown>> };
  expect(Object.keys(config)).toEqual(['mcpServers']);
  const [server, ...others] = Object.values(config.mcpServers);
  expect(others).toEqual([]);
  expect(Object.keys(server!).sort()).toEqual(['headers', 'url']);
  const expand = (value: string) =>
    value.replace(/\$\{env:(\w+)\}/g, (_all, name: string) => env[name] ?? '');
  const headers = server!.headers as Record<string, string>;
  expect(headers.Authorization).toBe(`Bearer \${env:${TOKEN_VARIABLE}}`);
  return {
    url: expand(server!.url as string),
    headers: Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, expand(value)])),
  };
}

function vsCodeConnection(text: string, answers: Record<string, string>): Connection {
  const config = JSON.parse(text) as {
    inputs: { type: string; id: string; description: string; password?: boolean }[];
    servers: Record<string, { type: string; url: string; headers: Record<string, string> }>;
  };
  expect(Object.keys(config).sort()).toEqual(['inputs', 'servers']);
  const [server, ...others] = Object.values(config.servers);
  expect(others).toEqual([]);
  expect(server!.type).toBe('http');
  for (const input of config.inputs) {
    expect(input).toMatchObject({ type: 'promptString', password: true, description: expect.any(String) });
  }
  const ids = new Set(config.inputs.map((input) => input.id));
  const expand = (value: string) =>
    value.replace(/\$\{input:([\w-]+)\}/g, (_all, id: string) => {
      expect(ids.has(id), `input ${id} is declared`).toBe(true);
      return answers[id] ?? '';
    });
  expect(server!.headers.Authorization).toMatch(/^Bearer \$\{input:[\w-]+\}$/);
  return {
    url: server!.url,
    headers: Object.fromEntries(Object.entries(server!.headers).map(([key, value]) => [key, expand(value)])),
  };
}

describe('README MCP client setup', () => {
  const section = overMcpSection();
  const blocks = codeBlocks(section);

  it.each([
    ['claude-code.sh', 'sh'],
    ['codex.toml', 'toml'],
    ['cursor.json', 'json'],
    ['vscode.json', 'json'],
  ])('shows %s verbatim as a %s block', (name, lang) => {
    expect(blocks.filter((block) => block.lang === lang).map((block) => block.text)).toContain(fixture(name));
  });

  it('names each file where its client reads it', () => {
    for (const place of [
      '~/.codex/config.toml',
      '~/.cursor/mcp.json',
      '.cursor/mcp.json',
      '.vscode/mcp.json',
    ]) {
      expect(section).toContain(`\`${place}\``);
    }
  });

  it('sends Claude Desktop to its connectors, with no claude_desktop_config.json block that it would ignore', () => {
    expect(section).toMatch(/Claude Desktop[\s\S]*Connectors[\s\S]*claude_desktop_config\.json/);
    expect(blocks.filter((block) => /claude_desktop_config|"command"/.test(block.text))).toEqual([]);
  });
});

describe('each documented client configuration connects', () => {
  let ctx: TestApp;
  let base: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    ctx = await createTestApp();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    const reader = await ctx.app.registry.repositories.tokens.create({
      name: 'mcp-client-setup',
      scopes: ['read'],
      actor: 'test',
    });
    env = { [TOKEN_VARIABLE]: reader.secret };
  });
  afterAll(async () => ctx?.close());

  async function expectConnects({ url, headers }: Connection) {
    expect(url).toBe(README_URL);
    const client = new Client({ name: 'client-setup-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url.replace('http://127.0.0.1:3000', base)), {
      requestInit: { headers },
    });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('load_skill');
    } finally {
      await client.close();
    }
  }

  it('Claude Code, with and without a header', async () => {
    const connections = claudeCodeConnections(fixture('claude-code.sh'), env);
    expect(connections.map((connection) => Object.keys(connection.headers))).toEqual([[], ['Authorization']]);
    expect(connections[1]!.headers.Authorization).toBe(`Bearer ${env[TOKEN_VARIABLE]}`);
    for (const connection of connections) await expectConnects(connection);
  });

  it('Codex', async () => {
    expect(fixture('codex.toml')).toBe(
      '[mcp_servers.skills]\nurl = "http://127.0.0.1:3000/mcp"\nbearer_token_env_var = "SKILLREG_TOKEN"\n',
    );
    await expectConnects(codexConnection(fixture('codex.toml'), env));
  });

  it('Cursor', async () => {
    await expectConnects(cursorConnection(fixture('cursor.json'), env));
  });

  it('VS Code', async () => {
    await expectConnects(
      vsCodeConnection(fixture('vscode.json'), { 'skillreg-token': env[TOKEN_VARIABLE]! }),
    );
  });

  it('a wrong token in any of them is refused, so the header is really what is sent', async () => {
    const refused = cursorConnection(fixture('cursor.json'), { [TOKEN_VARIABLE]: 'skr_not-a-token' });
    await expect(expectConnects(refused)).rejects.toThrow(/401|Unauthorized/i);
  });
});
