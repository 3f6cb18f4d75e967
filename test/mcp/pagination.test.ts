import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSkills, syntheticSkill } from '../../bench/seed.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';

const SEEDED = 3_000;
const START = 7_300_000;

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function text(result: CallToolResult): string {
  return result.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

describe('MCP over a large registry', () => {
  let ctx: TestApp;
  let client: Client;
  const seeded = Array.from({ length: SEEDED }, (_, i) => syntheticSkill(START + i).name);
  const withFile = uniqueName('mcp-paths');

  beforeAll(async () => {
    ctx = await createTestApp();
    await seedSkills(ctx.database, { count: SEEDED, start: START, batch: 1_000, bodyBytes: 300 });
    const res = await publish(
      ctx.app,
      files({
        'SKILL.md': skillMd({ name: withFile, description: 'Paths test.' }),
        'references/guide.md': '# Guide\n',
      }),
    );
    expect(res.statusCode, res.body).toBe(201);
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as AddressInfo;
    client = new Client({ name: 'skill-registry-tests', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await ctx?.close();
  });

  it('list_skills pages through every skill with nextCursor', async () => {
    const listed: string[] = [];
    let cursor: string | undefined;
    let calls = 0;
    do {
      const result = await call(client, 'list_skills', cursor ? { cursor } : {});
      expect(result.isError, text(result)).toBeFalsy();
      const page = result.structuredContent as {
        skills: { name: string }[];
        truncated: boolean;
        nextCursor?: string;
      };
      listed.push(...page.skills.map((skill) => skill.name));
      expect(page.truncated).toBe(page.nextCursor !== undefined);
      if (page.nextCursor) expect(text(result)).toContain(page.nextCursor);
      cursor = page.nextCursor;
      calls += 1;
    } while (cursor !== undefined && calls < 20);
    expect(cursor).toBeUndefined();
    expect(calls).toBeGreaterThan(1);
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toHaveLength(SEEDED + 1);
    expect(new Set(listed)).toEqual(new Set([...seeded, withFile]));
  });

  it('a cursor the registry did not issue is a tool error naming the fix', async () => {
    const result = await call(client, 'list_skills', { cursor: 'not-a-cursor' });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/nextCursor/);
  });

  it('resources/list pages through every skill with MCP cursors', async () => {
    const uris: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listResources(cursor ? { cursor } : {});
      uris.push(...page.resources.map((resource) => resource.uri));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined && pages < 20);
    expect(cursor).toBeUndefined();
    expect(pages).toBeGreaterThan(1);
    expect(uris).toHaveLength(SEEDED + 1);
    expect(new Set(uris)).toEqual(new Set([...seeded, withFile].map((name) => `skill://${name}/SKILL.md`)));
    await expect(client.listResources({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: -32602 });
  });

  it('read_skill_file refuses paths that leave the bundle, as REST does', async () => {
    for (const path of ['../SKILL.md', 'references/../../etc/passwd', '/etc/passwd', 'a\u0000b']) {
      const result = await call(client, 'read_skill_file', { name: withFile, path });
      expect(result.isError, path).toBe(true);
      const rest = await ctx.app.inject(`/skills/${withFile}/files/${encodeURIComponent(path)}`);
      expect(rest.statusCode, path).toBe(400);
      expect(text(result)).toBe(rest.json().detail);
    }
    const ok = await call(client, 'read_skill_file', { name: withFile, path: './references/guide.md' });
    expect(ok.isError).toBeFalsy();
    expect(text(ok)).toBe('# Guide\n');
  });
});
