import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skills as skillsTable } from '../../src/db/schema.js';
import { SEARCH_SKILLS_DESCRIPTION } from '../../src/render/tool-definitions.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, putView, type TestApp } from '../helpers/context.js';

function baseUrl(ctx: TestApp): string {
  const address = ctx.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${address.port}`;
}

async function connect(ctx: TestApp, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'skill-registry-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl(ctx)), {
    requestInit: { headers },
  });
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function texts(result: CallToolResult): string[] {
  return result.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
}

async function expectPublished(res: { statusCode: number; body: string }) {
  expect(res.statusCode, res.body).toBeLessThan(300);
}

// A PNG signature and a few binary bytes, and arbitrary bytes with NULs: neither is UTF-8 text.
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from([0, 0, 0, 13, 0xff, 0xfe]),
]);
const BLOB = Buffer.concat([Buffer.from([0, 0xff, 0x80, 0]), randomBytes(64)]);

describe('MCP over Streamable HTTP', () => {
  let ctx: TestApp;
  let client: Client;
  const word = `zebrafinch${Date.now().toString(36)}`;
  const name = uniqueName('mcp-pdf');
  const hidden = uniqueName('mcp-hidden');
  const modelOnly = uniqueName('mcp-model-only');
  const bodyV1 = `# PDF v1\n\nUse ${word} carefully (one).\n`;
  const bodyV2 = `# PDF v2\n\nUse ${word} carefully (two). See references/guide.md.\n`;
  const guide = '# Guide\n\nStep 1: read the form.\n';
  const notes = 'Nested notes: ünïcödé ✓\n';
  const skillMdV2 = skillMd({ name, description: `Fill PDF forms with ${word}.`, body: bodyV2 });

  beforeAll(async () => {
    ctx = await createTestApp();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    await expectPublished(
      await publish(
        ctx.app,
        files({ 'SKILL.md': skillMd({ name, description: `Fill PDF forms with ${word}.`, body: bodyV1 }) }),
        {
          query: 'version=1.0.0',
        },
      ),
    );
    await expectPublished(
      await publish(
        ctx.app,
        files({
          'SKILL.md': skillMdV2,
          'references/guide.md': guide,
          'references/deep/notes.md': notes,
          'scripts/fill.py': 'print("fill")\n',
          'assets/logo.png': PNG,
          'assets/data.bin': BLOB,
        }),
        { query: 'version=2.0.0' },
      ),
    );
    await expectPublished(
      await ctx.app.inject({
        method: 'PUT',
        url: `/skills/${name}/tags/stable`,
        headers: adminAuth,
        payload: { version: '1.0.0' },
      }),
    );
    await expectPublished(
      await publish(
        ctx.app,
        files({
          'SKILL.md': skillMd({
            name: hidden,
            description: `Deploys to production, ${word}.`,
            extra: 'disable-model-invocation: true',
            body: 'Only when a person asks.\n',
          }),
        }),
      ),
    );
    await expectPublished(
      await publish(
        ctx.app,
        files({
          'SKILL.md': skillMd({
            name: modelOnly,
            description: `Background knowledge, ${word}.`,
            extra: 'user-invocable: false',
          }),
        }),
      ),
    );
    client = await connect(ctx);
  });

  afterAll(async () => {
    await client?.close();
    await ctx?.close();
  });

  it('initializes and names the server, its capabilities and instructions', () => {
    expect(client.getServerVersion()?.name).toBe('skill-registry');
    const capabilities = client.getServerCapabilities();
    expect(capabilities?.tools).toBeDefined();
    expect(capabilities?.resources).toBeDefined();
    expect(client.getInstructions()).toContain('load_skill');
  });

  it('lists four tools with input schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'list_skills',
      'load_skill',
      'read_skill_file',
      'search_skills',
    ]);
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description?.length).toBeGreaterThan(40);
    }
    expect(byName.load_skill!.inputSchema.required).toEqual(['name']);
    expect(Object.keys(byName.load_skill!.inputSchema.properties ?? {}).sort()).toEqual(['name', 'version']);
    expect(byName.read_skill_file!.inputSchema.required?.sort()).toEqual(['name', 'path']);
    expect(Object.keys(byName.list_skills!.inputSchema.properties ?? {}).sort()).toEqual([
      'cursor',
      'q',
      'tag',
    ]);
    expect(byName.list_skills!.outputSchema).toBeDefined();

    // search_skills teaches what GET /tools does, and names are taken from it by load_skill.
    const search = byName.search_skills!;
    expect(search.description).toBe(SEARCH_SKILLS_DESCRIPTION);
    expect(search.inputSchema.required).toEqual(['query']);
    expect(Object.keys(search.inputSchema.properties ?? {}).sort()).toEqual(['limit', 'query']);
    expect(search.inputSchema.properties?.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 50 });
    expect(Object.keys(search.outputSchema?.properties ?? {})).toEqual(['results']);
    expect(search.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    const loadName = byName.load_skill!.inputSchema.properties?.name as { description?: string };
    expect(loadName.description).toMatch(/list_skills or search_skills/);
    expect(byName.load_skill!.description).toMatch(/search_skills/);
    expect(client.getInstructions()).toContain('search_skills');
  });

  it('search_skills returns ranked results with why, and load_skill loads a returned name', async () => {
    const result = await call(client, 'search_skills', { query: `fill a pdf form with ${word}` });
    expect(result.isError).toBeFalsy();
    const { results } = result.structuredContent as {
      results: { name: string; description: string; version: string; why: string; score: number }[];
    };
    // Model-disabled skills are never offered; the best match is first.
    expect(results.map((entry) => entry.name)).toEqual([name, modelOnly]);
    expect(results[0]).toMatchObject({ name, version: '2.0.0', description: `Fill PDF forms with ${word}.` });
    expect(results[0]!.why).toMatch(/description: .*pdf/);
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
    const [text] = texts(result);
    expect(text).toMatch(/^2 skills, best match first\. Call load_skill/);
    expect(text).toContain(`- ${name}: Fill PDF forms with ${word}. (why: ${results[0]!.why})`);
    expect(text).toContain(`- ${modelOnly}: Background knowledge, ${word}.`);
    expect(text).not.toContain(hidden);

    const limited = await call(client, 'search_skills', { query: word, limit: 1 });
    expect((limited.structuredContent as { results: unknown[] }).results).toHaveLength(1);

    // A skill of this test's own, so the load it counts is no other test's business.
    const own = uniqueName('mcp-searched');
    const ownWord = `${word}invoice`;
    await expectPublished(
      await publish(
        ctx.app,
        files({
          'SKILL.md': skillMd({
            name: own,
            description: `Turns ${ownWord} scans into spreadsheets.`,
            body: 'Read the scan.\n',
          }),
        }),
      ),
    );
    const found = await call(client, 'search_skills', { query: `convert my ${ownWord} scans` });
    const [top] = (found.structuredContent as { results: { name: string }[] }).results;
    expect(top!.name).toBe(own);
    const loaded = await call(client, 'load_skill', { name: top!.name });
    expect(loaded.isError).toBeFalsy();
    expect(texts(loaded)).toEqual([expect.stringContaining(`Skill: ${own}`), 'Read the scan.\n']);

    const none = await call(client, 'search_skills', { query: 'qqqqzzzzxxxxvvvv' });
    expect(none.isError).toBeFalsy();
    expect((none.structuredContent as { results: unknown[] }).results).toEqual([]);
    expect(texts(none)[0]).toMatch(/^No skill matches/);
  });

  it("search_skills answers an empty or overlong query with the service's explanation as a tool error", async () => {
    const empty = await call(client, 'search_skills', { query: '   ' });
    expect(empty.isError).toBe(true);
    expect(texts(empty)[0]).toContain('the search query is empty');
    const long = await call(client, 'search_skills', { query: 'word '.repeat(1000) });
    expect(long.isError).toBe(true);
    expect(texts(long)[0]).toMatch(/at most 4000 are searched/);
    const badLimit = await call(client, 'search_skills', { query: word, limit: 500 });
    expect(badLimit.isError).toBe(true);
  });

  it('list_skills returns the catalogue as text and structured content, without model-disabled skills', async () => {
    const result = await call(client, 'list_skills', {});
    expect(result.isError).toBeFalsy();
    const listed = (
      result.structuredContent as { skills: { name: string; version: string; description: string }[] }
    ).skills;
    expect(listed).toContainEqual({ name, version: '2.0.0', description: `Fill PDF forms with ${word}.` });
    expect(listed.map((skill) => skill.name)).toContain(modelOnly);
    expect(listed.map((skill) => skill.name)).not.toContain(hidden);
    expect(texts(result)[0]).toContain(`${name} (2.0.0): Fill PDF forms`);
    expect(texts(result)[0]).not.toContain(hidden);

    const searched = await call(client, 'list_skills', { q: word });
    const names = (searched.structuredContent as { skills: { name: string }[] }).skills.map(
      (skill) => skill.name,
    );
    expect(names.sort()).toEqual([name, modelOnly].sort());

    const stable = await call(client, 'list_skills', { tag: 'stable' });
    expect((stable.structuredContent as { skills: unknown[] }).skills).toEqual([
      { name, version: '1.0.0', description: `Fill PDF forms with ${word}.` },
    ]);

    const none = await call(client, 'list_skills', { q: 'qqqqqqqqqqqqqqqqqqqq' });
    expect(none.isError).toBeFalsy();
    expect((none.structuredContent as { skills: unknown[] }).skills).toEqual([]);
    expect(texts(none)[0]).toMatch(/No skills match/);
  });

  it('load_skill returns the body of latest with a header naming version and bundled files, and records the load', async () => {
    const [before] = await ctx.database.db
      .select({ loadCount: skillsTable.loadCount })
      .from(skillsTable)
      .where(eq(skillsTable.name, name));
    const result = await call(client, 'load_skill', { name });
    expect(result.isError).toBeFalsy();
    const [header, body] = texts(result);
    expect(body).toBe(bodyV2);
    expect(header).toContain(name);
    expect(header).toContain('2.0.0');
    for (const path of [
      'references/guide.md',
      'references/deep/notes.md',
      'scripts/fill.py',
      'assets/logo.png',
    ]) {
      expect(header).toContain(path);
    }
    expect(header).toContain('read_skill_file');
    expect(header).not.toContain('- SKILL.md');

    await ctx.app.registry.repositories.loads.flush();
    const [after] = await ctx.database.db
      .select({ loadCount: skillsTable.loadCount })
      .from(skillsTable)
      .where(eq(skillsTable.name, name));
    expect(after!.loadCount).toBe(before!.loadCount + 1);
  });

  it('load_skill selects an exact version or a dist-tag', async () => {
    const exact = await call(client, 'load_skill', { name, version: '1.0.0' });
    expect(texts(exact)[1]).toBe(bodyV1);
    expect(texts(exact)[0]).toContain('1.0.0');
    expect(texts(await call(client, 'load_skill', { name, version: 'v2.0.0' }))[1]).toBe(bodyV2);
    expect(texts(await call(client, 'load_skill', { name, version: 'stable' }))[1]).toBe(bodyV1);
    expect(texts(await call(client, 'load_skill', { name, version: 'latest' }))[1]).toBe(bodyV2);
  });

  it('load_skill loads a model-disabled skill by its exact name', async () => {
    const result = await call(client, 'load_skill', { name: hidden });
    expect(result.isError).toBeFalsy();
    expect(texts(result)[1]).toBe('Only when a person asks.\n');
  });

  it('read_skill_file returns text as text, images as images and other binaries as base64 resources', async () => {
    const text = await call(client, 'read_skill_file', { name, path: 'references/guide.md' });
    expect(text.isError).toBeFalsy();
    expect(text.content).toEqual([{ type: 'text', text: guide }]);
    expect(texts(await call(client, 'read_skill_file', { name, path: 'references/deep/notes.md' }))).toEqual([
      notes,
    ]);
    expect(texts(await call(client, 'read_skill_file', { name, path: './scripts/fill.py' }))).toEqual([
      'print("fill")\n',
    ]);

    const image = await call(client, 'read_skill_file', { name, path: 'assets/logo.png' });
    expect(image.content).toHaveLength(1);
    const [imageBlock] = image.content;
    expect(imageBlock).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(Buffer.from((imageBlock as { data: string }).data, 'base64').equals(PNG)).toBe(true);

    const binary = await call(client, 'read_skill_file', { name, path: 'assets/data.bin' });
    const embedded = binary.content.find((block) => block.type === 'resource');
    expect(embedded).toBeDefined();
    const resource = (embedded as { resource: { uri: string; mimeType: string; blob: string } }).resource;
    expect(resource.uri).toBe(`skill://${name}/assets/data.bin`);
    expect(resource.mimeType).toBe('application/octet-stream');
    expect(Buffer.from(resource.blob, 'base64').equals(BLOB)).toBe(true);

    const old = await call(client, 'read_skill_file', { name, path: 'SKILL.md', version: '1.0.0' });
    expect(texts(old)[0]).toContain(bodyV1);
  });

  it('unknown skills, versions and files are tool errors with the registry detail', async () => {
    const typo = await call(client, 'load_skill', { name: name.slice(0, -1) });
    expect(typo.isError).toBe(true);
    expect(texts(typo)[0]).toContain(`no skill named '${name.slice(0, -1)}'`);
    expect(texts(typo)[0]).toContain(name);

    const version = await call(client, 'load_skill', { name, version: '9.9.9' });
    expect(version.isError).toBe(true);
    expect(texts(version)[0]).toContain('available versions: 2.0.0, 1.0.0');

    const tag = await call(client, 'load_skill', { name, version: 'beta' });
    expect(tag.isError).toBe(true);
    expect(texts(tag)[0]).toContain("no dist-tag 'beta'");

    const file = await call(client, 'read_skill_file', { name, path: 'references/missing.md' });
    expect(file.isError).toBe(true);
    expect(texts(file)[0]).toContain("no file 'references/missing.md'");
    expect(texts(file)[0]).toContain('references/guide.md');

    const fileOfUnknown = await call(client, 'read_skill_file', { name: 'zzzzzzzzzzqqqq', path: 'a.md' });
    expect(fileOfUnknown.isError).toBe(true);

    const invalid = await call(client, 'load_skill', {});
    expect(invalid.isError).toBe(true);
  });

  it('lists SKILL.md resources and the resource templates', async () => {
    const { resources } = await client.listResources();
    const mine = resources.find((resource) => resource.uri === `skill://${name}/SKILL.md`);
    expect(mine).toMatchObject({
      name,
      mimeType: 'text/markdown',
      description: `Fill PDF forms with ${word}.`,
    });
    const uris = resources.map((resource) => resource.uri);
    expect(uris).toContain(`skill://${hidden}/SKILL.md`);
    expect(uris).not.toContain(`skill://${modelOnly}/SKILL.md`);

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual([
      'skill://{name}/SKILL.md',
      'skill://{name}/{+path}',
    ]);
  });

  it('reads SKILL.md, nested and binary files as resources', async () => {
    const skill = await client.readResource({ uri: `skill://${name}/SKILL.md` });
    expect(skill.contents).toEqual([
      { uri: `skill://${name}/SKILL.md`, mimeType: 'text/markdown', text: skillMdV2 },
    ]);

    const nested = await client.readResource({ uri: `skill://${name}/references/deep/notes.md` });
    expect(nested.contents).toEqual([
      { uri: `skill://${name}/references/deep/notes.md`, mimeType: 'text/markdown', text: notes },
    ]);

    const binary = await client.readResource({ uri: `skill://${name}/assets/data.bin` });
    const [content] = binary.contents as { blob: string; mimeType: string }[];
    expect(content!.mimeType).toBe('application/octet-stream');
    expect(Buffer.from(content!.blob, 'base64').equals(BLOB)).toBe(true);
  });

  it('unknown resources are MCP errors with the registry detail', async () => {
    await expect(client.readResource({ uri: `skill://${name.slice(0, -1)}/SKILL.md` })).rejects.toMatchObject(
      {
        code: -32602,
        message: expect.stringContaining(name),
      },
    );
    await expect(client.readResource({ uri: `skill://${name}/nope/missing.txt` })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('references/guide.md'),
    });
    await expect(client.readResource({ uri: 'https://example.com/x' })).rejects.toMatchObject({
      code: -32602,
    });
  });

  it('reflects a publish, a tag move and a yank on the very next call', async () => {
    const fresh = uniqueName('mcp-fresh');
    const listedNames = async () =>
      (
        (await call(client, 'list_skills', {})).structuredContent as {
          skills: { name: string; version: string }[];
        }
      ).skills;
    expect((await listedNames()).map((skill) => skill.name)).not.toContain(fresh);
    await expectPublished(
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name: fresh, description: 'Fresh.' }) })),
    );
    expect((await listedNames()).map((skill) => skill.name)).toContain(fresh);
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toContain(
      `skill://${fresh}/SKILL.md`,
    );

    const bodyV3 = 'Version three.\n';
    await expectPublished(
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Three.', body: bodyV3 }) }), {
        query: 'version=3.0.0',
      }),
    );
    expect(texts(await call(client, 'load_skill', { name }))[1]).toBe(bodyV3);
    expect((await listedNames()).find((skill) => skill.name === name)?.version).toBe('3.0.0');

    await expectPublished(
      await ctx.app.inject({
        method: 'PUT',
        url: `/skills/${name}/tags/stable`,
        headers: adminAuth,
        payload: { version: '2.0.0' },
      }),
    );
    expect(texts(await call(client, 'load_skill', { name, version: 'stable' }))[1]).toBe(bodyV2);

    await expectPublished(
      await ctx.app.inject({ method: 'DELETE', url: `/skills/${name}/versions/3.0.0`, headers: adminAuth }),
    );
    expect(texts(await call(client, 'load_skill', { name }))[1]).toBe(bodyV2);
    expect((await listedNames()).find((skill) => skill.name === name)?.version).toBe('2.0.0');
    const skillResource = await client.readResource({ uri: `skill://${name}/SKILL.md` });
    expect((skillResource.contents[0] as { text: string }).text).toBe(skillMdV2);
    // A yanked version stays readable by exact version, and says so.
    const yanked = await call(client, 'load_skill', { name, version: '3.0.0' });
    expect(texts(yanked)[1]).toBe(bodyV3);
    expect(texts(yanked)[0]).toContain('yanked');
  });

  it('answers protocol errors with JSON-RPC errors, never 500', async () => {
    const url = `${baseUrl(ctx)}/mcp`;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

    const badJson = await fetch(url, { method: 'POST', headers, body: '{"jsonrpc": "2.0", ' });
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });

    const empty = await fetch(url, { method: 'POST', headers, body: '' });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });

    const notRpc = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ hello: 'world' }) });
    expect(notRpc.status).toBe(400);
    expect((await notRpc.json()).error.code).toBeLessThan(-32000);

    const wrongType = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(wrongType.status).toBe(415);
    expect(await wrongType.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });

    const notAcceptable = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/html' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(notAcceptable.status).toBe(406);
    expect((await notAcceptable.json()).error).toBeDefined();

    const tooLarge = await fetch(url, { method: 'POST', headers, body: `"${'x'.repeat(5 * 1024 * 1024)}"` });
    expect(tooLarge.status).toBe(413);
    expect((await tooLarge.json()).jsonrpc).toBe('2.0');

    const unknownMethod = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'no/such/method' }),
    });
    expect(unknownMethod.status).toBe(200);
    expect(await unknownMethod.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });

    const direct = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'mcp-protocol-version': '2025-06-18', 'x-request-id': 'mcp-trace-1' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'load_skill', arguments: { name } },
      }),
    });
    expect(direct.status).toBe(200);
    expect(direct.headers.get('content-type')).toMatch(/^application\/json/);
    expect(direct.headers.get('x-request-id')).toBe('mcp-trace-1');
    expect((await direct.json()).result.content[1].text).toBe(bodyV2);

    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it('documents /mcp in the OpenAPI document', async () => {
    const doc = (await ctx.app.inject('/openapi.json')).json() as {
      paths: Record<string, Record<string, { operationId?: string; summary?: string }>>;
    };
    expect(doc.paths['/mcp']?.post?.operationId).toBe('mcp');
    expect(doc.paths['/mcp']?.post?.summary).toBeTruthy();
  });
});

describe('MCP with SKILLREG_READ_AUTH=true', () => {
  let ctx: TestApp;
  const name = uniqueName('mcp-private');

  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    await expectPublished(
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Private.' }) })),
    );
  });
  afterAll(async () => ctx?.close());

  it('refuses a client without a token with 401', async () => {
    const res = await fetch(`${baseUrl(ctx)}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    await expect(connect(ctx)).rejects.toThrow(/401|Unauthorized/i);
  });

  it('serves a client with a read token', async () => {
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/tokens',
      headers: adminAuth,
      payload: { name: 'mcp-reader', scopes: ['read'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { secret } = created.json() as { secret: string };
    const reader = await connect(ctx, { authorization: `Bearer ${secret}` });
    try {
      const listed = await call(reader, 'list_skills', {});
      expect(
        (listed.structuredContent as { skills: { name: string }[] }).skills.map((skill) => skill.name),
      ).toContain(name);
      expect(texts(await call(reader, 'load_skill', { name }))[1]).toContain('Do the thing carefully');
    } finally {
      await reader.close();
    }
  });
});

describe('MCP initialize advertises only what a stateless endpoint delivers', () => {
  let ctx: TestApp;
  const namespace = uniqueName('caps-team');
  const view = uniqueName('caps-view');

  beforeAll(async () => {
    ctx = await createTestApp();
    const name = uniqueName('caps');
    await expectPublished(
      await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Capabilities.' }) }), {
        query: `namespace=${namespace}`,
      }),
    );
    await expectPublished(await putView(ctx.app, view, ['default', namespace]));
  });
  afterAll(async () => ctx?.close());

  // Built per request and answered as JSON: no stream is left open to carry list_changed or
  // resources/updated notifications, so neither `listChanged` nor `subscribe` may be promised.
  it.each(['/mcp', `/namespaces/{namespace}/mcp`, `/views/{view}/mcp`])(
    'declares exactly tools, resources, completions and the skills extension at %s',
    async (template) => {
      const url = template.replace('{namespace}', namespace).replace('{view}', view);
      const res = await ctx.app.inject({
        method: 'POST',
        url,
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        payload: {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 'x', version: '1' },
          },
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().result.capabilities).toEqual({
        tools: {},
        resources: {},
        completions: {},
        extensions: { 'io.modelcontextprotocol/skills': {} },
      });
    },
  );
});
