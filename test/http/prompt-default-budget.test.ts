import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROMPT_BUDGET, loadConfig } from '../../src/config.js';
import { countTokens } from '../../src/render/token-count.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { appOn, configProblems, createTestApp, putView, type TestApp } from '../helpers/context.js';
import { availableSkills, promptJsonOf } from '../helpers/prompt.js';

// GET /prompt without budget= applies the registry's default budget (SKILLREG_PROMPT_BUDGET, 4,000
// tokens unless configured), on every mount; budget=0 lists everything. The ETag names the budget in
// force, so a registry with another default never answers 304 to the other's ETag.

describe('SKILLREG_PROMPT_BUDGET', () => {
  it('defaults to 4000 tokens; 0 means unlimited; empty means the default', () => {
    expect(DEFAULT_PROMPT_BUDGET).toBe(4000);
    expect(loadConfig({}).promptBudget).toBe(4000);
    expect(loadConfig({ SKILLREG_PROMPT_BUDGET: '' }).promptBudget).toBe(4000);
    expect(loadConfig({ SKILLREG_PROMPT_BUDGET: '0' }).promptBudget).toBe(0);
    expect(loadConfig({ SKILLREG_PROMPT_BUDGET: '12000' }).promptBudget).toBe(12000);
  });

  it('refuses anything but a whole number of tokens >= 0, with the other problems at once', () => {
    for (const bad of ['lots', '-1', '1.5', '4k']) {
      const problems = configProblems({ SKILLREG_PROMPT_BUDGET: bad, PORT: 'nope' });
      expect(problems, bad).toHaveLength(2);
      const problem = problems.find((text) => text.startsWith('SKILLREG_PROMPT_BUDGET='))!;
      expect(problem, bad).toContain(JSON.stringify(bad));
      expect(problem, bad).toMatch(/number of tokens/);
      expect(problem, bad).toContain('0');
    }
  });
});

describe('GET /prompt without budget=', () => {
  const SMALL_DEFAULT = 700;
  let ctx: TestApp;
  let unlimited: FastifyInstance;
  const names = Array.from({ length: 8 }, (_, i) => uniqueName(`default-budget-${i}`));
  const namespace = uniqueName('budget-ns');
  const view = uniqueName('budget-view');

  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_PROMPT_BUDGET: String(SMALL_DEFAULT) });
    const description = `Handles one kind of task in detail. ${'It explains each step. '.repeat(10)}`;
    for (const query of [undefined, `namespace=${namespace}`]) {
      for (const name of names) {
        const res = await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description }) }), { query });
        expect(res.statusCode, res.body).toBe(201);
      }
    }
    const put = await putView(ctx.app, view, ['default', namespace]);
    expect(put.statusCode, put.body).toBe(201);
    // A second replica, started after the writes, of the same registry configured without a default budget.
    unlimited = await appOn(ctx.database, { SKILLREG_PROMPT_BUDGET: '0' });
  });
  afterAll(async () => {
    await unlimited?.close();
    await ctx?.close();
  });

  it('fits the default budget, search-first, on the root, namespace and view mounts', async () => {
    for (const mount of ['', `/namespaces/${namespace}`, `/views/${view}`]) {
      const everything = await promptJsonOf(ctx.app, 'budget=0', mount);
      expect(everything.tokens, mount).toBeGreaterThan(SMALL_DEFAULT);
      expect(everything.searchFirst, mount).toBe(false);

      const body = await promptJsonOf(ctx.app, '', mount);
      expect(body.tokens, mount).toBeLessThanOrEqual(SMALL_DEFAULT);
      expect(body.tokens, mount).toBe(countTokens(body.prompt));
      expect(body.searchFirst, mount).toBe(true);
      expect(body.prompt, mount).toContain('search_skills');
      expect(body.included.length + body.omittedCount, mount).toBe(names.length);
      expect(body.omittedCount, mount).toBeGreaterThan(0);
      // The same as asking for the default budget by number.
      expect(await promptJsonOf(ctx.app, `budget=${SMALL_DEFAULT}`, mount), mount).toEqual(body);

      const xml = await ctx.app.inject(`${mount}/prompt`);
      expect(xml.statusCode, mount).toBe(200);
      expect(Number(xml.headers['x-prompt-tokens']), mount).toBeLessThanOrEqual(SMALL_DEFAULT);
      expect(availableSkills(xml.body).length, mount).toBe(body.included.length);
    }
  });

  it('uses the default budget for mode=search too', async () => {
    const body = await promptJsonOf(ctx.app, 'mode=search');
    expect(body.tokens).toBeLessThanOrEqual(SMALL_DEFAULT);
    expect(body.searchFirst).toBe(true);
    expect(body.omittedCount).toBeGreaterThan(0);
    const all = await promptJsonOf(ctx.app, 'mode=search&budget=0');
    expect(all.included).toHaveLength(names.length);
  });

  it('names the budget in force in the ETag', async () => {
    const budgeted = await ctx.app.inject('/prompt');
    const explicit = await ctx.app.inject(`/prompt?budget=${SMALL_DEFAULT}`);
    const everything = await ctx.app.inject('/prompt?budget=0');
    expect(explicit.headers.etag).toBe(budgeted.headers.etag);
    expect(everything.headers.etag).not.toBe(budgeted.headers.etag);
    const own = await ctx.app.inject({
      url: '/prompt',
      headers: { 'if-none-match': String(budgeted.headers.etag) },
    });
    expect(own.statusCode).toBe(304);

    // The replica without a default lists everything for the same URL, and never 304s the other's ETag.
    const other = await unlimited.inject({
      url: '/prompt',
      headers: { 'if-none-match': String(budgeted.headers.etag) },
    });
    expect(other.statusCode).toBe(200);
    expect(availableSkills(other.body)).toHaveLength(names.length);
    expect(other.headers.etag).toBe(everything.headers.etag);
  });

  it('says which budget is too small when the default cannot hold the instructions', async () => {
    const tiny = await appOn(ctx.database, { SKILLREG_PROMPT_BUDGET: '20' });
    try {
      const res = await tiny.inject('/prompt');
      expect(res.statusCode).toBe(400);
      const problem = res.json();
      expect(problem.detail).toContain('SKILLREG_PROMPT_BUDGET=20');
      expect(problem.detail).toContain(`budget=${problem.minimum}`);
      expect((await tiny.inject('/prompt?budget=0')).statusCode).toBe(200);
      const asked = await tiny.inject('/prompt?budget=20');
      expect(asked.statusCode).toBe(400);
      expect(asked.json().detail).toMatch(/^budget=20 is too small/);
    } finally {
      await tiny.close();
    }
  });
});
