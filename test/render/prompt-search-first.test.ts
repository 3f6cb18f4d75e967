/**
 * GET /prompt search-first: a budget that cannot hold every skill keeps the most loaded and sends the
 * model to search_skills for the rest; mode=search asks for that always.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/render/token-count.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';
import { availableSkills, namesLine, type PromptJson, promptJsonOf } from '../helpers/prompt.js';

let ctx: TestApp;

async function publishSkill(name: string, description: string) {
  const res = await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description }) }));
  expect([200, 201], res.body).toContain(res.statusCode);
}

function promptJson(query: string): Promise<PromptJson> {
  return promptJsonOf(ctx.app, query);
}

beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => ctx?.close());

describe('GET /prompt search-first', () => {
  // Load counts and recency disagree: `hot` was loaded most but longest ago, `warm` once and last.
  const hot = uniqueName('sf-hot');
  const warm = uniqueName('sf-warm');
  const cold = uniqueName('sf-cold');
  const selection = `name=${hot}&name=${warm}&name=${cold}`;
  const SEARCH_INSTRUCTION = 'search_skills {"query": "<the task in a few words>"}';

  beforeAll(async () => {
    for (const name of [hot, warm, cold]) {
      await publishSkill(
        name,
        `Search-first test skill ${name}: ${'does one task and a little more. '.repeat(20)}`,
      );
    }
    for (const [name, times] of [
      [hot, 3],
      [warm, 1],
    ] as const) {
      for (let i = 0; i < times; i++) {
        expect((await ctx.app.inject(`/skills/${name}/content`)).statusCode).toBe(200);
      }
      // Flushed one after the other, so `warm` is the more recently loaded.
      await ctx.app.registry.repositories.loads.flush();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });

  it('leaves the fragment as it is when the budget holds every skill', async () => {
    const full = await promptJson(selection);
    expect(full.searchFirst).toBe(false);
    const fits = await promptJson(`${selection}&budget=${full.tokens}`);
    expect(fits.prompt).toBe(full.prompt);
    expect(fits.searchFirst).toBe(false);
    expect(fits.prompt).not.toContain('search_skills');
    const explicit = await promptJson(`${selection}&budget=${full.tokens}&mode=list`);
    expect(explicit).toEqual(fits);
  });

  it('switches to search-first when the budget does not hold every skill, keeping the most loaded', async () => {
    const budget =
      (await promptJson(`name=${hot}&mode=search`)).tokens + countTokens(namesLine([cold, warm].sort()));
    const body = await promptJson(`${selection}&budget=${budget}`);
    expect(body.tokens).toBeLessThanOrEqual(budget);
    expect(countTokens(body.prompt)).toBe(body.tokens);
    expect(body.searchFirst).toBe(true);
    expect(body.included.map((skill) => skill.name)).toEqual([hot]);
    // Dropped fewest loads first: `cold` (none), then `warm` (one, however recent); named the other
    // way round, most loaded first.
    expect(body.omitted).toEqual([
      { name: warm, reason: 'budget' },
      { name: cold, reason: 'budget' },
    ]);
    expect(body.omittedCount).toBe(2);
    const instructions = body.prompt.slice(0, body.prompt.indexOf('<available_skills>'));
    expect(instructions).toContain(SEARCH_INSTRUCTION);
    expect(instructions).toMatch(
      /may be incomplete: when no skill listed here matches the task, first call the search_skills tool/,
    );
    expect(instructions).toMatch(/search_skills.*then call load_skill with the name of the result/);
    expect(body.prompt).toContain(namesLine([cold, warm].sort()));

    // One more entry's worth: the two most loaded.
    const roomier =
      (await promptJson(`name=${hot}&name=${warm}&mode=search`)).tokens + countTokens(namesLine([cold]));
    const two = await promptJson(`${selection}&budget=${roomier}`);
    expect(two.included.map((skill) => skill.name).sort()).toEqual([hot, warm].sort());
    expect(two.omitted).toEqual([{ name: cold, reason: 'budget' }]);
  });

  it('counts the omitted skills when their names do not fit, still pointing to search_skills', async () => {
    const instructions = (await promptJson(`name=${hot}&mode=search`)).tokens;
    for (let budget = instructions; budget < instructions + 400; budget += 3) {
      const res = await ctx.app.inject(`/prompt?format=json&${selection}&budget=${budget}`);
      if (res.statusCode !== 200) continue;
      const body = res.json() as PromptJson;
      expect(body.tokens).toBeLessThanOrEqual(budget);
      if (body.prompt.includes('load them by name')) continue;
      expect(body.included.map((skill) => skill.name)).toEqual([hot]);
      expect(body.prompt).toMatch(
        /\n2 more skills are available but not described here: find them with search_skills\.\n$/,
      );
      expect(body.omitted.map((skill) => skill.name)).toEqual([warm, cold]);
      return;
    }
    throw new Error('no budget counted the omitted skills');
  });

  it('is search-first with mode=search even when everything fits, with or without a budget', async () => {
    const listed = await promptJson(selection);
    const searched = await promptJson(`${selection}&mode=search`);
    expect(searched.searchFirst).toBe(true);
    expect(searched.included).toEqual(listed.included);
    expect(searched.omitted).toEqual([]);
    expect(searched.prompt).toContain(SEARCH_INSTRUCTION);
    expect(searched.tokens).toBe(countTokens(searched.prompt));
    expect(availableSkills(searched.prompt)).toEqual(availableSkills(listed.prompt));
    // No omitted line when nothing is omitted.
    expect(searched.prompt).not.toContain('not described here');
    const budgeted = await promptJson(`${selection}&mode=search&budget=${searched.tokens}`);
    expect(budgeted.prompt).toBe(searched.prompt);
    expect(budgeted.searchFirst).toBe(true);
    // An empty selection still tells the model to search.
    const none = await promptJson('q=xyzzy-plugh-qwrtz&mode=search');
    expect(none.included).toEqual([]);
    expect(none.prompt).toContain(SEARCH_INSTRUCTION);
  });

  it('reads naturally in the xml and the markdown layout', async () => {
    const xml = await ctx.app.inject(`/prompt?${selection}&mode=search`);
    expect(xml.statusCode).toBe(200);
    expect(Number(xml.headers['x-prompt-tokens'])).toBe(countTokens(xml.body));
    expect(xml.body.indexOf(SEARCH_INSTRUCTION)).toBeGreaterThan(0);
    expect(xml.body.indexOf(SEARCH_INSTRUCTION)).toBeLessThan(xml.body.indexOf('<available_skills>'));
    expect(xml.body).toContain("fetch the skill's <location> URL instead");
    expect(availableSkills(xml.body).map((skill) => skill.name)).toEqual([hot, warm, cold].sort());

    const markdown = await ctx.app.inject(`/prompt?format=markdown&${selection}&mode=search`);
    expect(markdown.statusCode).toBe(200);
    expect(markdown.headers['content-type']).toMatch(/^text\/markdown/);
    expect(Number(markdown.headers['x-prompt-tokens'])).toBe(countTokens(markdown.body));
    expect(markdown.body.startsWith('## Available skills\n\n')).toBe(true);
    expect(markdown.body).toContain(SEARCH_INSTRUCTION);
    expect(markdown.body).toContain("fetch the skill's location URL instead");
    expect(markdown.body).not.toContain('<location>');
    expect(markdown.body.indexOf(SEARCH_INSTRUCTION)).toBeLessThan(markdown.body.indexOf('- **'));
    expect(markdown.body.split('\n').filter((line) => line.startsWith('- **'))).toHaveLength(3);

    // Budgeted: both end with the line about the skills left out.
    for (const format of ['xml', 'markdown']) {
      const one = await ctx.app.inject(`/prompt?format=${format}&name=${hot}&mode=search`);
      const budget = Number(one.headers['x-prompt-tokens']) + countTokens(namesLine([cold, warm].sort())) + 5;
      const res = await ctx.app.inject(`/prompt?format=${format}&${selection}&budget=${budget}`);
      expect(res.statusCode, format).toBe(200);
      expect(countTokens(res.body), format).toBeLessThanOrEqual(budget);
      expect(res.body, format).toContain(SEARCH_INSTRUCTION);
      expect(res.body, format).toMatch(/not described here[^\n]*\n$/);
    }
    // Markdown with every skill left out says so without claiming none exist.
    const nothing = await ctx.app.inject('/prompt?format=markdown&q=xyzzy-plugh-qwrtz&mode=search');
    expect(nothing.body).toContain('(no skills are listed here)');
    const instructions = Number(nothing.headers['x-prompt-tokens']);
    const empty = await ctx.app.inject(`/prompt?format=markdown&${selection}&budget=${instructions + 25}`);
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.body).toContain(SEARCH_INSTRUCTION);
    expect(empty.body).toContain(
      '(no skills are listed here)\n\n3 more skills are available but not described here: find them with search_skills.\n',
    );
    expect(empty.body).not.toContain('(no skills are available)');
  });

  it('gives mode=list and mode=search different ETags, each answering 304 to its own', async () => {
    const budgets = ['', `&budget=${(await promptJson(selection)).tokens}`];
    for (const budget of budgets) {
      const list = await ctx.app.inject(`/prompt?${selection}${budget}`);
      const search = await ctx.app.inject(`/prompt?${selection}${budget}&mode=search`);
      expect(list.headers.etag).toBeDefined();
      expect(search.headers.etag).not.toBe(list.headers.etag);
      const cross = await ctx.app.inject({
        url: `/prompt?${selection}${budget}&mode=search`,
        headers: { 'if-none-match': String(list.headers.etag) },
      });
      expect(cross.statusCode).toBe(200);
      expect(cross.body).toContain('search_skills');
      const own = await ctx.app.inject({
        url: `/prompt?${selection}${budget}&mode=search`,
        headers: { 'if-none-match': String(search.headers.etag) },
      });
      expect(own.statusCode).toBe(304);
      const explicitList = await ctx.app.inject(`/prompt?${selection}${budget}&mode=list`);
      expect(explicitList.headers.etag).toBe(list.headers.etag);
    }
  });

  it('refuses an unknown mode', async () => {
    const res = await ctx.app.inject('/prompt?mode=everything');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
