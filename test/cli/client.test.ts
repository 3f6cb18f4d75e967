import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { writeTarGz, writeZip } from '../../src/bundle/archive-write.js';
import { RegistryError, SkillRegistryClient } from '../../src/client/index.js';
import {
  catalogueItemSchema,
  catalogueResponseSchema,
  contentJsonSchema,
  fileEntrySchema,
  publishResultSchema,
  skillDetailSchema,
  tagMoveResultSchema,
  tokenSummarySchema,
  versionSummarySchema,
  yankResultSchema,
} from '../../src/wire/index.js';
import { files, skillMd, uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/context.js';
import { listening } from '../helpers/http.js';

interface Call {
  method: string;
  path: string;
  status: number;
  ifNoneMatch: string | null;
}

/** A fetch that records every request the client makes, and what came back. */
function recordingFetch(calls: Call[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const response = await fetch(input, init);
    const headers = new Headers(init?.headers);
    calls.push({
      method: (init?.method ?? 'GET').toUpperCase(),
      path: url.pathname,
      status: response.status,
      ifNoneMatch: headers.get('if-none-match'),
    });
    return response;
  };
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>
  >;
}
interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
}

/** `/skills/{name}/files/{path}` as a regular expression; `{path}` spans slashes. */
function templateRegex(template: string): RegExp {
  const pattern = template
    .split(/(\{[^}]+\})/)
    .map((part) =>
      part === '{path}' ? '.+' : part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${pattern}$`);
}

/** The object properties of a schema, looking through anyOf/oneOf alternatives. */
function propertiesOf(schema: Schema | undefined): string[] {
  if (!schema) return [];
  if (schema.properties) return Object.keys(schema.properties).sort();
  for (const alternative of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    const keys = propertiesOf(alternative);
    if (keys.length > 0) return keys;
  }
  return [];
}

/** The keys of a wire object schema, sorted: what the client's type (inferred from it) has. */
function keysOf(schema: z.ZodObject): string[] {
  return Object.keys(schema.shape).sort();
}

/** The documents the client types are inferred from, which the routes must serve as they are. */
const CLIENT_SHAPES = {
  CataloguePage: keysOf(catalogueResponseSchema),
  CatalogueItem: keysOf(catalogueItemSchema),
  SkillDetail: keysOf(skillDetailSchema),
  FileEntry: keysOf(fileEntrySchema),
  VersionSummary: keysOf(versionSummarySchema),
  SkillContentJson: keysOf(contentJsonSchema),
  PublishResult: keysOf(publishResultSchema),
  TokenSummary: keysOf(tokenSummarySchema),
  TagMoveResult: keysOf(tagMoveResultSchema),
  YankResult: keysOf(yankResultSchema),
};

let ctx: TestApp;
let url: string;
let openapi: OpenApiDocument;

beforeAll(async () => {
  ctx = await createTestApp();
  url = await listening(ctx.app);
  openapi = (await (await fetch(`${url}/openapi.json`)).json()) as OpenApiDocument;
});
afterAll(async () => ctx?.close());

function operation(method: string, template: string) {
  const op = openapi.paths[template]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${template} is not in /openapi.json`);
  return op;
}

function responseSchema(method: string, template: string, status: string): Schema | undefined {
  const content = operation(method, template).responses[status]?.content ?? {};
  return Object.values(content)[0]?.schema;
}

async function publishedSkill(client: SkillRegistryClient, name: string, extra: Record<string, string> = {}) {
  const bytes = await writeTarGz(
    files({
      'SKILL.md': skillMd({ name, description: `The ${name} skill.` }),
      'references/guide.md': '# Guide\n',
      'scripts/run.sh': '#!/bin/sh\necho run\n',
      ...extra,
    }),
  );
  return client.publish({ type: 'tar.gz', bytes });
}

describe('the typed client against the live service', () => {
  it('uses only routes the OpenAPI document declares, and its types match the response schemas', async () => {
    const calls: Call[] = [];
    const client = new SkillRegistryClient({ url, token: ADMIN_TOKEN, fetch: recordingFetch(calls) });
    const name = uniqueName('client');

    const published = await publishedSkill(client, name);
    expect(published).toMatchObject({ name, version: '1.0.0', created: true });
    await client.publish({ type: 'markdown', text: skillMd({ name, description: 'Second.' }) });
    await client.publish({
      type: 'files',
      files: [{ path: 'SKILL.md', bytes: Buffer.from(skillMd({ name, description: 'Third.' })) }],
    });
    const zipped = await client.publish(
      {
        type: 'zip',
        bytes: await writeZip(files({ 'SKILL.md': skillMd({ name, description: 'Fourth.' }) })),
      },
      { version: '2.0.0', tag: 'beta' },
    );
    expect(zipped.version).toBe('2.0.0');

    expect((await client.listSkills({ q: name, limit: 10 })).value.items.map((item) => item.name)).toContain(
      name,
    );
    expect((await client.listAllSkills()).map((item) => item.name)).toContain(name);
    expect(
      (await client.getSkill(name, { version: '1.0.0' })).value.files.map((file) => file.path),
    ).toContain('scripts/run.sh');
    expect((await client.listVersions(name)).value.map((v) => v.version)).toContain('1.0.0');
    expect((await client.getContent(name, { version: '1.0.0' })).value).toContain('Do the thing');
    expect((await client.getContentJson(name, { tag: 'beta' })).value.version).toBe('2.0.0');
    expect(
      Buffer.from((await client.getFile(name, 'references/guide.md', { version: '1.0.0' })).value).toString(),
    ).toBe('# Guide\n');
    expect((await client.getBundle(name, { version: '1.0.0' })).value.byteLength).toBeGreaterThan(0);
    expect(
      (await client.getBundle(name, { version: '1.0.0', format: 'zip' })).value.byteLength,
    ).toBeGreaterThan(0);
    expect(await client.setTag(name, 'stable', '1.0.0')).toMatchObject({
      name,
      tag: 'stable',
      version: '1.0.0',
    });
    expect(await client.yank(name, '1.0.1')).toMatchObject({ name, version: '1.0.1', yanked: true });
    const found = (await client.search(`${name} skill`, { limit: 3 })).value;
    expect(found.results.map((result) => result.name)).toContain(name);
    const view = uniqueName('client-view');
    expect(await client.putView(view, { layers: ['default'], description: 'All' })).toMatchObject({
      created: true,
      view: { name: view, layers: ['default'], description: 'All' },
    });
    expect((await client.putView(view, { layers: ['default'] })).created).toBe(false);
    expect((await client.getView(view)).value).toMatchObject({ name: view, description: null });
    expect((await client.listViews()).value.items.map((item) => item.name)).toContain(view);
    await client.deleteView(view);
    const token = await client.createToken({ name: 'client-test', scopes: ['read'] });
    expect((await client.listTokens()).map((item) => item.id)).toContain(token.id);
    await client.revokeToken(token.id);
    expect((await client.listTokens()).map((item) => item.id)).not.toContain(token.id);

    // /prompt and /tools are being built elsewhere: check them only once the service declares them.
    const optional = ['/prompt', '/tools'].filter((path) => openapi.paths[path]);
    if (openapi.paths['/prompt']) await client.getPrompt({ format: 'markdown' });
    if (openapi.paths['/tools']) await client.getTools({ provider: 'anthropic' });

    const templates = Object.keys(openapi.paths);
    const undeclared: string[] = [];
    const used = new Set<string>();
    for (const call of calls) {
      const template = templates.find(
        (candidate) =>
          templateRegex(candidate).test(call.path) && openapi.paths[candidate]?.[call.method.toLowerCase()],
      );
      if (template) used.add(`${call.method} ${template}`);
      else undeclared.push(`${call.method} ${call.path}`);
      expect(call.status, `${call.method} ${call.path}`).toBeLessThan(400);
    }
    expect(undeclared).toEqual([]);
    expect([...used].sort()).toEqual(
      [
        'POST /skills',
        'GET /skills',
        'GET /skills/{name}',
        'GET /skills/{name}/versions',
        'GET /skills/{name}/content',
        'GET /skills/{name}/files/{path}',
        'GET /skills/{name}/bundle',
        'PUT /skills/{name}/tags/{tag}',
        'DELETE /skills/{name}/versions/{version}',
        'GET /search',
        'GET /views',
        'GET /views/{view}',
        'PUT /views/{view}',
        'DELETE /views/{view}',
        'POST /tokens',
        'GET /tokens',
        'DELETE /tokens/{id}',
        ...optional.map((path) => `GET ${path}`),
      ].sort(),
    );

    // The routes serve exactly the wire documents the client's types are inferred from.
    const catalogue = responseSchema('GET', '/skills', '200');
    expect(propertiesOf(catalogue)).toEqual(CLIENT_SHAPES.CataloguePage);
    expect(propertiesOf(catalogue?.properties?.items?.items)).toEqual(CLIENT_SHAPES.CatalogueItem);
    const detail = responseSchema('GET', '/skills/{name}', '200');
    expect(propertiesOf(detail)).toEqual(CLIENT_SHAPES.SkillDetail);
    expect(propertiesOf(detail?.properties?.files?.items)).toEqual(CLIENT_SHAPES.FileEntry);
    expect(propertiesOf(detail?.properties?.versions?.items)).toEqual(CLIENT_SHAPES.VersionSummary);
    expect(propertiesOf(responseSchema('GET', '/skills/{name}/versions', '200')?.items)).toEqual(
      CLIENT_SHAPES.VersionSummary,
    );
    expect(propertiesOf(responseSchema('GET', '/skills/{name}/content', '200'))).toEqual(
      CLIENT_SHAPES.SkillContentJson,
    );
    expect(propertiesOf(responseSchema('POST', '/skills', '201'))).toEqual(CLIENT_SHAPES.PublishResult);
    expect(propertiesOf(responseSchema('POST', '/skills', '200'))).toEqual(CLIENT_SHAPES.PublishResult);
    expect(propertiesOf(responseSchema('POST', '/tokens', '201'))).toEqual(
      [...CLIENT_SHAPES.TokenSummary, 'secret'].sort(),
    );
    expect(propertiesOf(responseSchema('GET', '/tokens', '200')?.properties?.items?.items)).toEqual(
      CLIENT_SHAPES.TokenSummary,
    );
    expect(propertiesOf(responseSchema('PUT', '/skills/{name}/tags/{tag}', '200'))).toEqual(
      CLIENT_SHAPES.TagMoveResult,
    );
    expect(propertiesOf(responseSchema('DELETE', '/skills/{name}/versions/{version}', '200'))).toEqual(
      CLIENT_SHAPES.YankResult,
    );
  });

  it('answers a repeated read from its cache after a 304, and a publish makes the next read fresh', async () => {
    const calls: Call[] = [];
    const client = new SkillRegistryClient({ url, token: ADMIN_TOKEN, fetch: recordingFetch(calls) });
    const first = await client.listSkills();
    expect(first.fromCache).toBe(false);
    expect(first.etag).toBeTruthy();
    expect(calls.at(-1)).toMatchObject({ method: 'GET', path: '/skills', status: 200, ifNoneMatch: null });

    const second = await client.listSkills();
    expect(calls.at(-1)).toMatchObject({ status: 304, ifNoneMatch: first.etag });
    expect(second.fromCache).toBe(true);
    expect(second.etag).toBe(first.etag);
    expect(second.value).toEqual(first.value);

    const name = uniqueName('cached');
    await publishedSkill(client, name);
    const third = await client.listSkills();
    expect(calls.at(-1)).toMatchObject({ status: 200, ifNoneMatch: first.etag });
    expect(third.fromCache).toBe(false);
    expect(third.etag).not.toBe(first.etag);
    expect(third.value.items.map((item) => item.name)).toContain(name);
    expect((await client.listSkills()).fromCache).toBe(true);

    // Bytes too: a 304 for a bundle still carries the headers of the cached answer (digest, version).
    const bundle = await client.getBundle(name);
    const again = await client.getBundle(name);
    expect(calls.at(-1)).toMatchObject({ status: 304, ifNoneMatch: bundle.etag });
    expect(again.fromCache).toBe(true);
    expect(Buffer.from(again.value).equals(Buffer.from(bundle.value))).toBe(true);
    expect(again.headers.get('x-skill-digest')).toBe(bundle.headers.get('x-skill-digest'));
    expect(again.headers.get('x-skill-version')).toBe('1.0.0');
    const content = await client.getContent(name);
    expect((await client.getContent(name)).value).toBe(content.value);
    expect(calls.at(-1)?.status).toBe(304);
  });

  it('keeps at most cacheSize answers, dropping the least recently used', async () => {
    const calls: Call[] = [];
    const client = new SkillRegistryClient({ url, fetch: recordingFetch(calls), cacheSize: 1 });
    await client.listSkills();
    await client.listSkills({ limit: 1 });
    await client.listSkills();
    expect(calls.map((call) => call.ifNoneMatch === null)).toEqual([true, true, true]);
    const off = new SkillRegistryClient({ url, fetch: recordingFetch(calls), cacheSize: 0 });
    await off.listSkills();
    expect((await off.listSkills()).fromCache).toBe(false);
  });

  it('throws RegistryError carrying the problem document: status, detail and every listed error', async () => {
    const client = new SkillRegistryClient({ url, token: ADMIN_TOKEN });
    const invalid = await client
      .publish({ type: 'markdown', text: skillMd({ name: 'Bad Name', description: 'x'.repeat(1100) }) })
      .catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(RegistryError);
    const problem = (invalid as RegistryError).problem;
    expect((invalid as RegistryError).status).toBe(422);
    expect(problem.status).toBe(422);
    expect(problem.detail).toMatch(/name|description/);
    expect(problem.errors?.map((issue) => issue.path)).toEqual(
      expect.arrayContaining(['SKILL.md#name', expect.stringContaining('description')]),
    );
    expect(problem.errors?.every((issue) => issue.detail.length > 10)).toBe(true);
    expect((invalid as RegistryError).message).toBe(problem.detail);

    const missing = await client.getSkill('no-such-skill-anywhere').catch((error: unknown) => error);
    expect(missing).toMatchObject({ status: 404, problem: { status: 404 } });
    expect((missing as RegistryError).problem.detail).toContain('no-such-skill-anywhere');

    const name = uniqueName('conflict');
    await client.publish(
      { type: 'markdown', text: skillMd({ name, description: 'One.' }) },
      { version: '1.0.0' },
    );
    const conflict = await client
      .publish({ type: 'markdown', text: skillMd({ name, description: 'Two.' }) }, { version: '1.0.0' })
      .catch((error: unknown) => error);
    expect(conflict).toMatchObject({ status: 409 });
    expect((conflict as RegistryError).problem.detail).toContain('already exists');

    const stranger = new SkillRegistryClient({ url, token: 'not-a-real-token-at-all' });
    const unknown = await stranger
      .publish({ type: 'markdown', text: skillMd({ name, description: 'Three.' }) })
      .catch((error: unknown) => error);
    expect(unknown).toMatchObject({ status: 401 });
    expect((unknown as RegistryError).problem.detail).toContain('not known');

    const reader = await client.createToken({ name: 'reader', scopes: ['read'] });
    const readOnly = new SkillRegistryClient({ url, token: reader.secret });
    const forbidden = await readOnly.listTokens().catch((error: unknown) => error);
    expect(forbidden).toMatchObject({ status: 403 });
    expect((forbidden as RegistryError).problem.detail).toContain("scope 'admin'");
  });

  it('reports a registry that cannot be reached as a fetch error, not a RegistryError', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const client = new SkillRegistryClient({ url: `http://127.0.0.1:${port}/` });
    const error = await client.listSkills().catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).not.toBeInstanceOf(RegistryError);
  });
});
