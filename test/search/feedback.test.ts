/**
 * Search feedback: a load that follows a search by the same client teaches the ranking, on this
 * replica at once and on another replica after the counts are written.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { DEFAULT_SCOPE } from '../../src/domain/scope.js';
import { searchDocument } from '../../src/search/document.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp, testConfig } from '../helpers/context.js';
import { listening } from '../helpers/http.js';

describe('learned boosts in the index', () => {
  const index = new SearchIndex();
  index.put(searchDocument({ name: 'crumb-notes', description: 'Keep sourdough notes.', body: '' }));
  index.put(searchDocument({ name: 'oven-timer', description: 'Time a sourdough bake.', body: '' }));

  it('lifts a skill agents loaded after searching the same words, and names the words', () => {
    const learned = new Map([['crust', new Map([['oven-timer', 3]])]]);
    expect(index.search('sourdough crust', { limit: 2 })[0]!.name).toBe('crumb-notes');
    const hits = index.search('sourdough crust', { limit: 2, learned: (term) => learned.get(term) });
    expect(hits[0]!.name).toBe('oven-timer');
    expect(hits[0]!.learned).toEqual(['crust']);
  });

  it('can surface a skill for a word it does not hold', () => {
    const learned = new Map([['crimson', new Map([['oven-timer', 1]])]]);
    expect(index.search('crimson', { limit: 5 })).toEqual([]);
    const hits = index.search('crimson', { limit: 5, learned: (term) => learned.get(term) });
    expect(hits.map((hit) => hit.name)).toEqual(['oven-timer']);
  });
});

describe('search feedback through the registry', () => {
  let ctx: TestApp;
  const first = uniqueName('deploy-notes');
  const second = uniqueName('deploy-runbook');

  const publish = (name: string, description: string) =>
    ctx.app.inject({
      method: 'POST',
      url: '/skills',
      headers: { ...adminAuth, 'content-type': 'text/markdown' },
      payload: `---\nname: ${name}\ndescription: ${description}\n---\nSteps.\n`,
    });

  beforeAll(async () => {
    ctx = await createTestApp();
    // The first matches the words better; agents keep choosing the second.
    expect((await publish(first, 'Deploy checklist notes: deploy checklist for releases.')).statusCode).toBe(
      201,
    );
    expect((await publish(second, 'Release runbook with a deploy checklist.')).statusCode).toBe(201);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  const ranked = async (app = ctx.app) =>
    (await app.registry.search.searchSkills(DEFAULT_SCOPE, { query: 'deploy checklist', limit: 5 })).map(
      (hit) => hit.name,
    );

  it('counts a load only after a search by the same client that listed the skill', async () => {
    expect((await ranked()).slice(0, 2)).toEqual([first, second]);
    const client = '-@127.0.0.1';
    // A load with no search before it teaches nothing.
    expect((await ctx.app.inject(`/skills/${second}/content`)).statusCode).toBe(200);
    expect(ctx.app.registry.search.feedback.loadsAfter('checklist')?.get(second)).toBeUndefined();
    for (let round = 0; round < 4; round++) {
      await ctx.app.registry.search.searchSkills(DEFAULT_SCOPE, {
        query: 'deploy checklist',
        limit: 5,
        client,
      });
      // The body over HTTP from the same address, as an agent's load_skill call would fetch it.
      expect((await ctx.app.inject(`/skills/${second}/content`)).statusCode).toBe(200);
    }
    expect(ctx.app.registry.search.feedback.loadsAfter('checklist')?.get(second)).toBe(4);
    const [top] = await ctx.app.registry.search.searchSkills(DEFAULT_SCOPE, {
      query: 'deploy checklist',
      limit: 5,
    });
    expect(top?.name).toBe(second);
    expect(top?.why).toContain('loaded by agents after searching: deploy, checklist');
  });

  it('learns from MCP too: search_skills then load_skill by the same client', async () => {
    const a = uniqueName('mcp-alpha');
    const b = uniqueName('mcp-beta');
    expect((await publish(a, 'Rotate service credentials: rotate credentials weekly.')).statusCode).toBe(201);
    expect((await publish(b, 'Credentials rotation policy for services.')).statusCode).toBe(201);
    const client = new Client({ name: 'feedback-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', await listening(ctx.app))));
    try {
      const search = async () => {
        const result = await client.callTool({
          name: 'search_skills',
          arguments: { query: 'rotate credentials' },
        });
        return (result.structuredContent as { results: { name: string; why: string }[] }).results;
      };
      expect((await search())[0]!.name).toBe(a);
      for (let round = 0; round < 3; round++) {
        await search();
        const loaded = await client.callTool({ name: 'load_skill', arguments: { name: b } });
        expect(loaded.isError).toBeFalsy();
      }
      const [top] = await search();
      expect(top!.name).toBe(b);
      expect(top!.why).toContain('loaded by agents after searching');
    } finally {
      await client.close();
    }
  });

  it('is read by another replica once written', async () => {
    await ctx.app.registry.search.feedback.sync();
    const replica = await buildApp({ config: testConfig(), database: ctx.database, logger: false });
    try {
      await replica.registry.search.warm();
      expect((await ranked(replica))[0]).toBe(second);
    } finally {
      await replica.close();
    }
  });
});
