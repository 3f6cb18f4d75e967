/**
 * GET /prompt and GET /tools over a catalogue of a few hundred skills (bulk-loaded as bench/seed.ts
 * does): no cap on the selection, every skill either included or counted in omittedCount (omitted[]
 * names at most 100, most loaded first), budgets exact; without budget= the default budget applies.
 * The cost at 10,000 and 100,000 skills is measured by bench/prompt-scale.ts.
 */
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSkills, syntheticSkill } from '../../bench/seed.js';
import { DEFAULT_PROMPT_BUDGET } from '../../src/config.js';
import { countTokens } from '../../src/render/token-count.js';
import { MAX_ENUM_NAMES, SKILL_NAME_SEARCH_DESCRIPTION } from '../../src/render/tool-definitions.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';
import { type PromptJson, promptJsonOf } from '../helpers/prompt.js';

const SEEDED = 300;
let ctx: TestApp;
const seededNames = Array.from({ length: SEEDED }, (_, i) => syntheticSkill(i).name);
const hidden = uniqueName('scale-hidden');
const marker = uniqueName('scale-marker');
let everyone: string[] = [];

/** The names the omitted line spells out and how many more it counts. */
function omittedLine(line: string): { named: string[]; more: number } {
  const unnamed = /^(\d+) more skills? (?:is|are) available/.exec(line);
  if (unnamed) return { named: [], more: Number(unnamed[1]) };
  const match = /\(load them by name\): (.*)\.$/.exec(line);
  expect(match, line).not.toBeNull();
  return { named: match![1]!.split(', '), more: 0 };
}

function promptJson(query: string): Promise<PromptJson> {
  return promptJsonOf(ctx.app, query);
}

beforeAll(async () => {
  ctx = await createTestApp();
  await seedSkills(ctx.database, { count: SEEDED, batch: 100, bodyBytes: 600 });
  // Publishes through the service, so this process hears of the new revision.
  for (const [name, extra] of [
    [hidden, 'disable-model-invocation: true'],
    [marker, undefined],
  ] as const) {
    const res = await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name, description: `Scale test ${name}.`, extra }) }),
    );
    expect(res.statusCode, res.body).toBe(201);
  }
  everyone = [...seededNames, marker].sort();
});
afterAll(async () => ctx?.close());

describe('GET /prompt over a few hundred skills', () => {
  it('lists every invocable skill with budget=0', async () => {
    const full = await promptJson('budget=0');
    expect(full.included.map((skill) => skill.name)).toEqual(everyone);
    expect(full.omitted).toEqual([{ name: hidden, reason: 'model-invocation-disabled' }]);
    expect(full.omittedCount).toBe(1);
    expect(full.tokens).toBe(countTokens(full.prompt));
    expect(full.tokens).toBeGreaterThan(DEFAULT_PROMPT_BUDGET);
    expect(full.searchFirst).toBe(false);
    expect(full.prompt).not.toContain('search_skills');
  });

  it('applies the default budget without budget=, and to mode=search alike', async () => {
    const full = await promptJson('budget=0');
    for (const query of ['', 'mode=search']) {
      const body = await promptJson(query);
      const explicit = await promptJson(`${query}&budget=${DEFAULT_PROMPT_BUDGET}`);
      expect(body.tokens, query).toBeLessThanOrEqual(DEFAULT_PROMPT_BUDGET);
      expect(body.tokens, query).toBe(countTokens(body.prompt));
      expect(body.searchFirst, query).toBe(true);
      expect(body.included.length, query).toBeGreaterThan(0);
      expect(body.included.length + body.omittedCount - 1, query).toBe(everyone.length);
      expect(body.omitted, query).toHaveLength(100);
      expect(body, query).toEqual(explicit);
    }
    // The answer's size does not follow the catalogue: under a tenth of the unlimited one here.
    const res = await ctx.app.inject('/prompt?format=json');
    expect(res.rawPayload.byteLength).toBeLessThan(
      (await ctx.app.inject('/prompt?format=json&budget=0')).rawPayload.byteLength / 5,
    );
    expect(full.included).toHaveLength(everyone.length);
  });

  it('includes, names or counts every skill under any budget, dropping the longest never-loaded first', async () => {
    const full = await promptJson('budget=0');
    const entryTokens = new Map(full.included.map((skill) => [skill.name, skill.tokens.entry]));
    // Nothing has been loaded: the drop order is the longest entry first, then by name.
    const order = [...everyone].sort((a, b) => {
      const diff = entryTokens.get(b)! - entryTokens.get(a)!;
      return diff !== 0 ? diff : a < b ? -1 : 1;
    });
    // The search-first instructions alone (a budget that drops skills is search-first).
    const minimum = (await promptJson('q=xyzzy-plugh-qwrtz&mode=search')).tokens;
    for (const budget of [
      full.tokens - 1,
      Math.round(full.tokens / 2),
      Math.round(full.tokens / 10),
      minimum + 400,
      minimum + 60,
    ]) {
      const label = `budget=${budget}`;
      const body = await promptJson(`budget=${budget}`);
      expect(body.tokens, label).toBe(countTokens(body.prompt));
      expect(body.tokens, label).toBeLessThanOrEqual(budget);
      // omittedCount counts every skill left out; omitted names at most 100 of them, the budget's
      // most loaded first (the reverse of the drop order), then the one disabling model invocation.
      const droppedCount = body.omittedCount - 1;
      expect(droppedCount, label).toBeGreaterThan(0);
      const dropped = order.slice(0, droppedCount);
      const named = body.omitted.filter((skill) => skill.reason === 'budget').map((skill) => skill.name);
      expect(named, label).toEqual([...dropped].reverse().slice(0, 100));
      expect(body.omitted.length, label).toBe(Math.min(100, body.omittedCount));
      expect(
        body.omitted.filter((skill) => skill.reason !== 'budget'),
        label,
      ).toEqual(droppedCount < 100 ? [{ name: hidden, reason: 'model-invocation-disabled' }] : []);
      const included = body.included.map((skill) => skill.name);
      expect([...included, ...dropped].sort(), label).toEqual(everyone);
      for (const name of included) expect(body.prompt, label).toContain(`<name>${name}</name>`);
      // Search-first, and the fragment names the dropped skills or, when the names do not fit, counts them.
      expect(body.searchFirst, label).toBe(true);
      expect(body.prompt, label).toContain('search_skills {"query"');
      const line = body.prompt.split('\n').find((text) => text.includes('not described here'));
      expect(line, label).toBeDefined();
      const { named: inLine, more } = omittedLine(line!);
      // In catalogue order, as the entries are listed.
      const droppedSet = new Set(dropped);
      if (inLine.length > 0) expect(inLine, label).toEqual(everyone.filter((name) => droppedSet.has(name)));
      expect(inLine.length + more, label).toBe(dropped.length);
      expect(body.prompt, label).not.toContain(hidden);

      for (const format of ['xml', 'markdown']) {
        const res = await ctx.app.inject(`/prompt?format=${format}&budget=${budget}`);
        expect(res.statusCode, `${format} ${label}`).toBe(200);
        expect(Number(res.headers['x-prompt-tokens']), `${format} ${label}`).toBe(countTokens(res.body));
        expect(countTokens(res.body), `${format} ${label}`).toBeLessThanOrEqual(budget);
      }
    }
  });

  it('keeps the loaded skills longest', async () => {
    const loaded = [seededNames[7]!, seededNames[150]!, marker];
    for (const name of loaded) expect((await ctx.app.inject(`/skills/${name}/content`)).statusCode).toBe(200);
    await ctx.app.registry.repositories.loads.flush();
    const full = await promptJson('budget=0');
    const keep = full.included.filter((skill) => loaded.includes(skill.name));
    const budget =
      (await promptJson(`name=${loaded.join(',')}`)).tokens +
      // Room for the omitted line naming everyone else.
      everyone.length * 8;
    const body = await promptJson(`budget=${budget}`);
    expect(body.tokens).toBeLessThanOrEqual(budget);
    expect(keep.map((skill) => skill.name).sort()).toEqual([...loaded].sort());
    expect(body.omittedCount - 1).toBeGreaterThan(everyone.length / 2);
    expect(body.included.map((skill) => skill.name)).toEqual(expect.arrayContaining(loaded));
    expect(body.omitted.map((skill) => skill.name)).not.toEqual(expect.arrayContaining([loaded[0]]));
  });
});

describe('GET /tools over a few hundred skills', () => {
  it('leaves the enum out above 250 names and keeps it for a narrow selection', async () => {
    const all = await ctx.app.inject('/tools');
    expect(all.statusCode).toBe(200);
    const [load] = all.json() as { input_schema: { properties: { name: { enum?: string[] } } } }[];
    expect(load!.input_schema.properties.name.enum).toBeUndefined();

    const some = await ctx.app.inject(`/tools?name=${seededNames[3]},${hidden},${marker}`);
    const [narrow] = some.json() as { input_schema: { properties: { name: { enum?: string[] } } } }[];
    expect(narrow!.input_schema.properties.name.enum).toEqual([seededNames[3], marker].sort());
  });

  it('says where names come from when the enum is left out, and offers search_skills', async () => {
    type Tool = {
      name: string;
      input_schema: { properties: { name: { enum?: string[]; description: string } } };
    };
    for (const url of ['/tools', '/tools?mode=search']) {
      const tools = (await ctx.app.inject(url)).json() as Tool[];
      expect(
        tools.map((tool) => tool.name),
        url,
      ).toEqual(['load_skill', 'read_skill_file', 'search_skills']);
      expect(tools[0]!.input_schema.properties.name.description, url).toBe(SKILL_NAME_SEARCH_DESCRIPTION);
    }
    // mode=search stays as small as for an empty catalogue: no name of the catalogue in it.
    const searchFirst = await ctx.app.inject('/tools?mode=search');
    for (const name of seededNames.slice(0, 20)) expect(searchFirst.body).not.toContain(name);
    const openai = (await ctx.app.inject('/tools?provider=openai&mode=search')).json() as {
      function: { parameters: { properties: { name: { enum?: string[] } } } };
    }[];
    expect(openai[0]!.function.parameters.properties.name.enum).toBeUndefined();
  });

  it('loads a name search_skills returned that no enum could list, over HTTP and MCP', async () => {
    // A skill past the first MAX_ENUM_NAMES in catalogue order: beyond what an enum would hold.
    const target = everyone[MAX_ENUM_NAMES + 20]!;
    const found = await ctx.app.inject(`/search?q=${encodeURIComponent(target.replaceAll('-', ' '))}`);
    expect(found.statusCode, found.body).toBe(200);
    const [first] = (found.json() as { results: { name: string; version: string }[] }).results;
    expect(first!.name).toBe(target);

    const content = await ctx.app.inject(`/skills/${target}/content`);
    expect(content.statusCode).toBe(200);
    expect(content.headers['x-skill-version']).toBe(first!.version);

    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as AddressInfo;
    const client = new Client({ name: 'prompt-scale-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    try {
      const searched = (await client.callTool({
        name: 'search_skills',
        arguments: { query: target.replaceAll('-', ' '), limit: 3 },
      })) as CallToolResult;
      const results = (searched.structuredContent as { results: { name: string }[] }).results;
      expect(results[0]!.name).toBe(target);
      const loaded = (await client.callTool({
        name: 'load_skill',
        arguments: { name: results[0]!.name },
      })) as CallToolResult;
      expect(loaded.isError).toBeFalsy();
      const [header, body] = loaded.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
      expect(header).toContain(`Skill: ${target}`);
      expect(body).toBe(content.body);
    } finally {
      await client.close();
    }
  });
});
