import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';
import { expectProblem } from '../helpers/problem.js';

let ctx: TestApp;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

interface Operation {
  summary?: string;
  tags?: string[];
  operationId?: string;
  responses?: Record<string, unknown>;
}

describe('errors are RFC 9457 problems', () => {
  it('an unknown route answers 404 problem+json naming the route', async () => {
    const res = await ctx.app.inject('/no/such/route?x=1');
    const problem = expectProblem(res, 404);
    expect(problem.detail).toContain('/no/such/route');
    expect(problem.detail).not.toContain('x=1');
  });

  it('an unknown skill answers 404 with the closest names as suggestions', async () => {
    const name = `pdf-tools-${uniqueName('s')}`;
    expect(
      (await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'PDF tools.' }) })))
        .statusCode,
    ).toBe(201);
    const typo = name.slice(0, -1);
    for (const url of [`/skills/${typo}`, `/skills/${typo}/content`, `/skills/${typo}/versions`]) {
      const problem = expectProblem(await ctx.app.inject(url), 404);
      expect(problem.suggestions, url).toContain(name);
      expect(problem.detail).toContain(typo);
    }
    const nothingClose = expectProblem(await ctx.app.inject('/skills/zzzzzzzzzzqqqqqqqq'), 404);
    expect(nothingClose.suggestions).toEqual([]);
    expect(nothingClose.detail).toContain('GET /skills');
  });

  it('an unknown version or file of a known skill answers 404 naming what exists', async () => {
    const name = uniqueName('known');
    await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name, description: 'Known.' }), 'references/a.md': '# A\n' }),
    );
    const version = expectProblem(await ctx.app.inject(`/skills/${name}?version=9.9.9`), 404);
    expect(version.availableVersions).toEqual(['1.0.0']);
    const tag = expectProblem(await ctx.app.inject(`/skills/${name}/content?tag=nope`), 404);
    expect(tag.availableTags).toEqual(['latest']);
    const file = expectProblem(await ctx.app.inject(`/skills/${name}/files/references/b.md`), 404);
    expect(file.detail).toContain('references/a.md');
  });

  it('query validation errors answer 400 with errors[]', async () => {
    const problem = expectProblem(await ctx.app.inject('/skills?limit=abc'), 400);
    expect(problem.errors).toEqual([expect.objectContaining({ path: expect.stringContaining('limit') })]);
    expectProblem(await ctx.app.inject('/skills?limit=0'), 400);
    expectProblem(await ctx.app.inject('/skills?limit=501'), 400);
    expectProblem(await ctx.app.inject('/skills?cursor=garbage'), 400);
  });

  it('every kind of client error is a complete problem document', async () => {
    const name = uniqueName('errs');
    await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Errors.' }) }));
    const cases: [number, () => Promise<LightMyRequestResponse>][] = [
      [400, () => ctx.app.inject(`/skills/${name}?version=1.0.0&tag=latest`)],
      [
        400,
        () =>
          ctx.app.inject({
            method: 'PUT',
            url: `/skills/${name}/tags/stable`,
            headers: { ...adminAuth, 'content-type': 'application/json' },
            payload: '{"version":',
          }),
      ],
      [
        400,
        () =>
          ctx.app.inject({
            method: 'PUT',
            url: `/skills/${name}/tags/stable`,
            headers: adminAuth,
            payload: {},
          }),
      ],
      [
        400,
        () =>
          ctx.app.inject({
            method: 'PUT',
            url: `/skills/${name}/tags/1.2.3`,
            headers: adminAuth,
            payload: { version: '1.0.0' },
          }),
      ],
      [400, () => publish(ctx.app, files({ 'SKILL.md': 'x' }), { query: 'tag=Not%20A%20Tag' })],
      [
        400,
        () =>
          ctx.app.inject({
            method: 'POST',
            url: '/skills',
            headers: { ...adminAuth, 'content-type': 'application/gzip' },
            payload: Buffer.from('not gzip at all'),
          }),
      ],
      [401, () => ctx.app.inject({ method: 'DELETE', url: `/skills/${name}/versions/1.0.0` })],
      [
        404,
        () => ctx.app.inject({ method: 'DELETE', url: `/skills/${name}/versions/7.7.7`, headers: adminAuth }),
      ],
      [
        409,
        () =>
          publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description: 'Changed.' }) }), {
            query: 'version=1.0.0',
          }),
      ],
      [
        415,
        () =>
          ctx.app.inject({
            method: 'POST',
            url: '/skills',
            headers: { ...adminAuth, 'content-type': 'image/png' },
            payload: Buffer.from([1, 2, 3]),
          }),
      ],
      [422, () => publish(ctx.app, files({ 'SKILL.md': skillMd({ name: 'Bad--Name', description: 'x' }) }))],
      [422, () => publish(ctx.app, files({ 'README.md': '# no skill here\n' }))],
    ];
    for (const [status, request] of cases) {
      const res = await request();
      const problem = expectProblem(res, status);
      expect(problem.instance ?? '/').toMatch(/^\//);
      if (status === 422)
        expect(problem.errors).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ path: expect.any(String), detail: expect.any(String) }),
          ]),
        );
    }
  });

  it('a problem carries the request id header', async () => {
    const res = await ctx.app.inject({
      url: '/skills/nope-nope',
      headers: { 'x-request-id': 'trace-404-abc' },
    });
    expectProblem(res, 404);
    expect(res.headers['x-request-id']).toBe('trace-404-abc');
    const refused = await ctx.app.inject({
      method: 'POST',
      url: '/skills',
      headers: { 'x-request-id': 'trace-401-abc', 'content-type': 'text/markdown' },
      payload: '# x',
    });
    expectProblem(refused, 401);
    expect(refused.headers['x-request-id']).toBe('trace-401-abc');
  });
});

describe('OpenAPI and docs', () => {
  it('GET /openapi.json is OpenAPI 3.1 and every operation is documented', async () => {
    const res = await ctx.app.inject('/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const doc = res.json() as {
      openapi: string;
      info: { title: string };
      paths: Record<string, Record<string, Operation>>;
    };
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();

    const operationIds: string[] = [];
    const problems: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const where = `${method.toUpperCase()} ${path}`;
        if (!operation.summary) problems.push(`${where}: no summary`);
        if (!operation.tags?.length) problems.push(`${where}: no tags`);
        if (!operation.operationId) problems.push(`${where}: no operationId`);
        else operationIds.push(operation.operationId);
        const codes = Object.keys(operation.responses ?? {});
        if (!codes.some((code) => /^4(\d\d|XX)$/i.test(code))) problems.push(`${where}: no 4xx response`);
        for (const code of codes.filter((code) => /^[45]/.test(code))) {
          const response = operation.responses?.[code] as { content?: Record<string, unknown> } | undefined;
          const content = response?.content ?? {};
          if (!Object.keys(content).every((type) => type === 'application/problem+json')) {
            problems.push(`${where}: ${code} is not documented as application/problem+json`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(operationIds.length).toBeGreaterThan(10);
    expect(new Set(operationIds).size).toBe(operationIds.length);

    // The contract's core routes are all described.
    const paths = Object.keys(doc.paths);
    for (const expected of [
      '/skills',
      '/skills/{name}',
      '/skills/{name}/content',
      '/skills/{name}/bundle',
      '/skills/{name}/versions',
      '/skills/{name}/tags/{tag}',
      '/skills/{name}/versions/{version}',
      '/tokens',
      '/tokens/{id}',
      '/livez',
      '/readyz',
    ]) {
      expect(paths, expected).toContain(expected);
    }
    const fileRead = doc.paths['/skills/{name}/files/{path}']?.get as Operation & {
      parameters: { name: string }[];
    };
    expect(fileRead?.parameters.map((parameter) => parameter.name)).toContain('path');
    expect(doc.paths['/skills']!.post!.operationId).toBe('publishSkill');
  });

  it('/docs serves the Swagger UI', async () => {
    let res = await ctx.app.inject('/docs');
    for (let hops = 0; hops < 3 && res.statusCode >= 300 && res.statusCode < 400; hops += 1) {
      const location = res.headers.location as string;
      res = await ctx.app.inject(new URL(location, 'http://localhost/docs/').pathname);
    }
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toMatch(/swagger-ui/i);
  });
});

describe('x-request-id', () => {
  it('echoes an incoming id', async () => {
    const res = await ctx.app.inject({ url: '/livez', headers: { 'x-request-id': 'my-trace.id:42' } });
    expect(res.headers['x-request-id']).toBe('my-trace.id:42');
  });

  it('generates one when absent or unusable, different per request', async () => {
    const a = await ctx.app.inject('/livez');
    const b = await ctx.app.inject('/livez');
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    const hostile = await ctx.app.inject({ url: '/livez', headers: { 'x-request-id': 'bad id <script>' } });
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
