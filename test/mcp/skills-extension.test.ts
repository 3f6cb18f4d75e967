import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, putView, type TestApp } from '../helpers/context.js';
import { listening } from '../helpers/http.js';

const EXTENSION = 'io.modelcontextprotocol/skills';

const resourceSchema = z.object({ uri: z.string(), digest: z.string(), size: z.number() });
const skillSchema = z.object({
  uri: z.string(),
  frontmatter: z.record(z.string(), z.unknown()),
  resources: z.union([z.array(resourceSchema), z.literal('dynamic')]),
});
const listSchema = z
  .object({
    skills: z.array(skillSchema),
    nextCursor: z.string().optional(),
    resultType: z.literal('complete'),
  })
  .loose();
const getSchema = z.object({ skill: skillSchema, resultType: z.literal('complete') }).loose();

type Skill = z.infer<typeof skillSchema>;

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

describe('the MCP skills extension (SEP-2640)', () => {
  let ctx: TestApp;
  let url: string;
  beforeAll(async () => {
    ctx = await createTestApp();
    url = await listening(ctx.app);
  });
  afterAll(async () => ctx?.close());

  async function connect(path = '/mcp'): Promise<Client> {
    const client = new Client({ name: 'skills-extension-tests', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(path, url)));
    return client;
  }

  async function listAll(client: Client): Promise<{ skills: Skill[]; pages: number }> {
    const skills: Skill[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.request(
        { method: 'skills/list', params: cursor ? { cursor } : {} },
        listSchema,
      );
      skills.push(...page.skills);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor && pages < 100);
    return { skills, pages };
  }

  /** The bytes resources/read returns for a URI, as a host verifies them. */
  async function read(client: Client, uri: string): Promise<Buffer> {
    const result = await client.readResource({ uri });
    const [content] = result.contents;
    if (content && 'text' in content) return Buffer.from(content.text as string, 'utf8');
    return Buffer.from((content as { blob: string }).blob, 'base64');
  }

  it('declares the extension and the resources capability', async () => {
    const client = await connect();
    const capabilities = client.getServerCapabilities() as {
      extensions?: Record<string, unknown>;
      resources?: unknown;
    };
    expect(capabilities.extensions?.[EXTENSION]).toEqual({});
    expect(capabilities.resources).toBeDefined();
    await client.close();
  });

  it('lists every skill in pages with complete manifests whose digests and sizes are of the bytes resources/read returns', async () => {
    const names = Array.from({ length: 60 }, () => uniqueName('ext'));
    for (const name of names) {
      const res = await publish(
        ctx.app,
        files({
          'SKILL.md': skillMd({
            name,
            description: `Extension test ${name}.`,
            body: '# Use\n\nSee references/a.md.\n',
          }),
          'references/a.md': `# A for ${name}\n`,
          'assets/logo.png': Buffer.concat([
            Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
            Buffer.from(name),
          ]),
        }),
      );
      expect(res.statusCode, res.body).toBe(201);
    }
    const client = await connect();
    const { skills, pages } = await listAll(client);
    expect(pages).toBeGreaterThan(1);
    const listed = new Map(skills.map((skill) => [skill.frontmatter.name as string, skill]));
    for (const name of names) expect(listed.has(name), name).toBe(true);
    const one = listed.get(names[7]!)!;
    expect(one.uri).toBe(`skill://${names[7]}/SKILL.md`);
    expect(one.frontmatter).toEqual({ name: names[7], description: `Extension test ${names[7]}.` });
    const manifest = one.resources as z.infer<typeof resourceSchema>[];
    expect(manifest.map((entry) => entry.uri).sort()).toEqual(
      [
        `skill://${names[7]}/SKILL.md`,
        `skill://${names[7]}/assets/logo.png`,
        `skill://${names[7]}/references/a.md`,
      ].sort(),
    );
    for (const entry of manifest) {
      const bytes = await read(client, entry.uri);
      expect(sha256(bytes), entry.uri).toBe(entry.digest);
      expect(bytes.length, entry.uri).toBe(entry.size);
    }
    // skills/get answers the same entry, echoing the URI.
    const got = await client.request({ method: 'skills/get', params: { uri: one.uri } }, getSchema);
    expect(got.skill).toEqual(one);
    await client.close();
  });

  it('serves a skill published without frontmatter with completed frontmatter, digests of what is served, the stored version unchanged', async () => {
    const name = uniqueName('bare');
    const stored = '# Bare skill\n\nFormats tables in Markdown reports neatly.\n';
    const res = await publish(ctx.app, files({ 'SKILL.md': stored }), { query: `name=${name}` });
    expect(res.statusCode, res.body).toBe(201);
    const detail = (await ctx.app.inject({ url: `/skills/${name}` })).json();
    const client = await connect();
    const got = await client.request(
      { method: 'skills/get', params: { uri: `skill://${name}/SKILL.md` } },
      getSchema,
    );
    expect(got.skill.frontmatter).toEqual({ name, description: detail.description });
    const served = await read(client, got.skill.uri);
    const text = served.toString('utf8');
    expect(text.startsWith('---\n')).toBe(true);
    expect(text.endsWith(stored)).toBe(true);
    const front = parse(text.slice(4, text.indexOf('\n---\n', 4)));
    expect(front).toEqual(got.skill.frontmatter);
    const entry = (got.skill.resources as z.infer<typeof resourceSchema>[]).find(
      (r) => r.uri === got.skill.uri,
    )!;
    expect(entry.digest).toBe(sha256(served));
    // The registry's own faces keep the bytes as published.
    expect((await ctx.app.inject({ url: `/skills/${name}/files/SKILL.md` })).body).toBe(stored);
    expect(detail.files.find((file: { path: string }) => file.path === 'SKILL.md').digest).toBe(
      sha256(Buffer.from(stored)),
    );
    await client.close();
  });

  it('lists skills with disable-model-invocation, its frontmatter verbatim', async () => {
    const name = uniqueName('manual');
    const res = await publish(
      ctx.app,
      files({
        'SKILL.md': `---\nname: ${name}\ndescription: Run by hand only.\ndisable-model-invocation: true\nmetadata:\n  owner: ops\n---\n# Manual\n`,
      }),
    );
    expect(res.statusCode, res.body).toBe(201);
    const client = await connect();
    const got = await client.request(
      { method: 'skills/get', params: { uri: `skill://${name}/SKILL.md` } },
      getSchema,
    );
    expect(got.skill.frontmatter).toEqual({
      name,
      description: 'Run by hand only.',
      'disable-model-invocation': true,
      metadata: { owner: 'ops' },
    });
    const { skills } = await listAll(client);
    expect(skills.some((skill) => skill.uri === `skill://${name}/SKILL.md`)).toBe(true);
    await client.close();
  });

  it('answers -32602 for a URI that is no served skill, and for an unknown file', async () => {
    const client = await connect();
    for (const uri of [
      'skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md',
      'https://example.com/x',
      'skill://a/b/README.md',
    ]) {
      const error = await client
        .request({ method: 'skills/get', params: { uri } }, getSchema)
        .catch((e: unknown) => e);
      expect(error, uri).toBeInstanceOf(McpError);
      expect((error as McpError).code, uri).toBe(-32602);
    }
    const missing = await client
      .readResource({ uri: 'skill://no-such-skill-here/SKILL.md' })
      .catch((e: unknown) => e);
    expect((missing as McpError).code).toBe(-32602);
    await client.close();
  });

  it('leaves a skill over 512 files out of skills/list and refuses it in skills/get', async () => {
    const name = uniqueName('huge');
    const entries: Record<string, string> = {
      'SKILL.md': skillMd({ name, description: 'Many files.', body: '# Many\n' }),
    };
    for (let i = 0; i < 520; i++) entries[`references/f${i}.md`] = `file ${i}\n`;
    const res = await publish(ctx.app, files(entries));
    expect(res.statusCode, res.body).toBe(201);
    const client = await connect();
    const { skills } = await listAll(client);
    expect(skills.some((skill) => skill.uri === `skill://${name}/SKILL.md`)).toBe(false);
    const error = await client
      .request({ method: 'skills/get', params: { uri: `skill://${name}/SKILL.md` } }, getSchema)
      .catch((e: unknown) => e);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toContain('512');
    await client.close();
  });

  it('is declared on namespace and view endpoints too, each listing its own resolution', async () => {
    const namespace = uniqueName('team');
    const name = uniqueName('scoped');
    const res = await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Scoped.' }) }), {
      query: `namespace=${namespace}`,
    });
    expect(res.statusCode, res.body).toBe(201);
    const view = uniqueName('fleet');
    const put = await putView(ctx.app, view, ['default', namespace]);
    expect(put.statusCode, put.body).toBeLessThan(300);
    for (const path of [`/namespaces/${namespace}/mcp`, `/views/${view}/mcp`]) {
      const client = await connect(path);
      const got = await client.request(
        { method: 'skills/get', params: { uri: `skill://${name}/SKILL.md` } },
        getSchema,
      );
      expect(got.skill.frontmatter.name, path).toBe(name);
      await client.close();
    }
    const root = await connect();
    const error = await root
      .request({ method: 'skills/get', params: { uri: `skill://${name}/SKILL.md` } }, getSchema)
      .catch((e: unknown) => e);
    expect((error as McpError).code).toBe(-32602);
    await root.close();
  });
});
