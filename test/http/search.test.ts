/**
 * GET /search, the REST face of the search_skills tool: ranked results with why each matched, the
 * same as the search service answers the tool, without skills a model must not invoke.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCOPE } from '../../src/domain/scope.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

interface SearchResult {
  name: string;
  description: string;
  version: string;
  why: string;
  score: number;
}
interface SearchJson {
  query: string;
  results: SearchResult[];
}

let ctx: TestApp;
// A word no other test file's skill uses, so results here are this file's skills only.
const word = `quillwort${Date.now().toString(36)}`;
const best = uniqueName('search-best');
const body = uniqueName('search-body');
const hidden = uniqueName('search-hidden');

async function publishSkill(
  name: string,
  description: string,
  options: { body?: string; extra?: string; query?: string } = {},
) {
  const res = await publish(
    ctx.app,
    files({ 'SKILL.md': skillMd({ name, description, body: options.body, extra: options.extra }) }),
    { query: options.query },
  );
  expect(res.statusCode, res.body).toBeLessThan(300);
}

async function search(query: string): Promise<SearchJson> {
  const res = await ctx.app.inject(`/search?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

beforeAll(async () => {
  ctx = await createTestApp();
  await publishSkill(best, `Turns ${word} spreadsheets into ${word} slide decks.`);
  await publishSkill(body, 'Formats reports.', {
    body: `# Reports\n\nSometimes the input is a ${word} export.\n`,
  });
  await publishSkill(hidden, `Deploys ${word} to production.`, { extra: 'disable-model-invocation: true' });
});
afterAll(async () => ctx?.close());

describe('GET /search', () => {
  it('answers the ranked results search_skills gives, each with why it matched', async () => {
    const res = await ctx.app.inject(
      `/search?q=${encodeURIComponent(`  turn my ${word} sheet into slides `)}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('public, no-cache');
    const answer: SearchJson = res.json();
    expect(answer.query).toBe(`turn my ${word} sheet into slides`);
    expect(answer.results.map((result) => result.name)).toEqual([best, body]);
    const [first, second] = answer.results;
    expect(Object.keys(first!).sort()).toEqual(['description', 'name', 'score', 'version', 'why']);
    expect(first).toMatchObject({
      name: best,
      version: '1.0.0',
      description: `Turns ${word} spreadsheets into ${word} slide decks.`,
    });
    expect(first!.why).toMatch(new RegExp(`description: [^;]*${word}`));
    expect(second!.why).toMatch(new RegExp(`body: [^;]*${word}`));
    expect(second!.why).not.toContain('description:');
    expect(first!.score).toBeGreaterThan(second!.score);
    // Exactly what the service answers the search_skills tool (MCP runs the same call).
    const tool = await ctx.app.registry.search.searchSkills(DEFAULT_SCOPE, {
      query: `turn my ${word} sheet into slides`,
    });
    expect(answer.results).toEqual(tool);
  });

  it('never returns skills that disable model invocation', async () => {
    const answer = await search(`q=${word}+deploy+production&limit=50`);
    expect(answer.results.map((result) => result.name)).not.toContain(hidden);
    expect(answer.results.map((result) => result.name)).toContain(best);
  });

  it('takes limit (default 10, 1 to 50) and tag', async () => {
    expect((await search(`q=${word}&limit=1`)).results.map((result) => result.name)).toEqual([best]);
    for (const limit of ['0', '51', 'ten']) {
      const res = await ctx.app.inject(`/search?q=${word}&limit=${limit}`);
      expect(res.statusCode, limit).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    const staged = uniqueName('search-staged');
    const stageWord = `${word}canary`;
    await publishSkill(staged, `Stages ${stageWord} uploads.`, { query: 'tag=canary' });
    // Only the staged skill has a canary version: the other matches are not searched under that tag.
    const canary = await search(`q=${word}+${stageWord}&tag=canary`);
    expect(canary.results.map((result) => result.name)).toEqual([staged]);
    expect((await search(`q=${word}+${stageWord}`)).results.map((result) => result.name)).toContain(best);
  });

  it('refuses an empty, blank, missing or overlong query with a 400 problem', async () => {
    for (const query of ['q=', 'q=%20%20%20', '']) {
      const res = await ctx.app.inject(`/search?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().detail, query).toContain('the search query is empty');
      expect(res.headers.etag, query).toBeUndefined();
    }
    const tooLong = await ctx.app.inject(`/search?q=${'a'.repeat(4001)}`);
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(tooLong.json().detail).toMatch(/4000/);
    // A validator never turns a refused query into a 304.
    const star = await ctx.app.inject({ url: '/search?q=', headers: { 'if-none-match': '*' } });
    expect(star.statusCode).toBe(400);
  });

  it('answers 304 to its ETag until the catalogue changes', async () => {
    const freshWord = `${word}ledger`;
    const url = `/search?q=${word}+${freshWord}`;
    const first = await ctx.app.inject(url);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^W\/"r\d+-/);
    const again = await ctx.app.inject({ url, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    // Another query or limit is another representation.
    const other = await ctx.app.inject({ url: `${url}&limit=2`, headers: { 'if-none-match': etag } });
    expect(other.statusCode).toBe(200);

    const fresh = uniqueName('search-fresh');
    await publishSkill(fresh, `Balances the ${freshWord}.`);
    const changed = await ctx.app.inject({ url, headers: { 'if-none-match': etag } });
    expect(changed.statusCode).toBe(200);
    expect((first.json() as SearchJson).results.map((result) => result.name)).not.toContain(fresh);
    expect((changed.json() as SearchJson).results.map((result) => result.name)).toContain(fresh);
  });

  it('returns names load_skill loads (GET /skills/{name}/content)', async () => {
    const [first] = (await search(`q=${word}+slides`)).results;
    const content = await ctx.app.inject(`/skills/${first!.name}/content`);
    expect(content.statusCode).toBe(200);
    expect(content.headers['x-skill-version']).toBe(first!.version);
  });

  it('is in the OpenAPI document with its parameters and problem responses', async () => {
    const doc = (await ctx.app.inject('/openapi.json')).json() as {
      paths: Record<
        string,
        Record<
          string,
          {
            operationId: string;
            tags: string[];
            parameters: { name: string }[];
            responses: Record<string, unknown>;
          }
        >
      >;
    };
    const operation = doc.paths['/search']!.get!;
    expect(operation.operationId).toBe('searchSkills');
    expect(operation.tags).toEqual(['agents']);
    expect(operation.parameters.map((parameter) => parameter.name).sort()).toEqual(['limit', 'q', 'tag']);
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '403']);
  });
});

describe('GET /search with SKILLREG_READ_AUTH=true', () => {
  let guarded: TestApp;
  beforeAll(async () => {
    guarded = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
  });
  afterAll(async () => guarded?.close());

  it('needs a read token, as every other read', async () => {
    const anonymous = await guarded.app.inject(`/search?q=${word}`);
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['content-type']).toMatch(/^application\/problem\+json/);
    const authorized = await guarded.app.inject({ url: `/search?q=${word}`, headers: adminAuth });
    expect(authorized.statusCode).toBe(200);
    expect(authorized.headers['cache-control']).toBe('private, no-cache');
  });
});
