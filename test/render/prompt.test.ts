import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleFile } from '../../src/bundle/types.js';
import { buildPrompt, type PromptSkill } from '../../src/render/prompt.js';
import { countTokens } from '../../src/render/token-count.js';
import { readSkillFolder } from '../../src/services/skill-folder.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';
import { availableSkills, namesLine, type PromptJson } from '../helpers/prompt.js';

const CORPUS = fileURLToPath(new URL('../../../shared/skill-corpus', import.meta.url));
const CORPUS_SKILLS = ['anthropics-skills/internal-comms', 'openai-skills/create-plan'];

let ctx: TestApp;
const tricky = uniqueName('tricky');
const TRICKY_DESCRIPTION = `Handles <b>bold</b> & "double" 'single' quotes, then a > sign.`;
const alpha = uniqueName('alpha');
const beta = uniqueName('beta');
const hidden = uniqueName('hidden');
const hiddenQuoted = uniqueName('hidden');
let realNames: string[] = [];

async function publishOk(bundle: BundleFile[], query?: string): Promise<{ name: string; version: string }> {
  const res = await publish(ctx.app, bundle, { query });
  expect([200, 201], res.body).toContain(res.statusCode);
  return res.json();
}

async function publishSkill(name: string, description: string, extra?: string, query?: string) {
  return publishOk(files({ 'SKILL.md': skillMd({ name, description, extra }) }), query);
}

async function promptJson(query: string, headers: Record<string, string> = {}): Promise<PromptJson> {
  const res = await ctx.app.inject({ url: `/prompt?format=json&${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

beforeAll(async () => {
  ctx = await createTestApp();
  await publishSkill(tricky, TRICKY_DESCRIPTION);
  await publishSkill(alpha, 'Alpha skill: converts zebra spreadsheets into reports.');
  await publishSkill(beta, 'Beta skill: drafts release notes from commits.');
  await publishSkill(hidden, 'Only a person may start this one.', 'disable-model-invocation: true');
  await publishSkill(hiddenQuoted, 'Quoted flag, still hidden.', 'disable-model-invocation: "true"');
  for (const relative of CORPUS_SKILLS) {
    const folder = path.join(CORPUS, relative);
    if (!existsSync(folder)) continue;
    realNames.push((await publishOk(await readSkillFolder(folder))).name);
  }
  if (realNames.length === 0) {
    // No corpus next to the project: two stand-ins of the same shape.
    realNames = [uniqueName('internal-comms'), uniqueName('create-plan')];
    for (const name of realNames) await publishSkill(name, `Stand-in for ${name}: writes internal updates.`);
  }
});
afterAll(async () => ctx?.close());

describe('GET /prompt formats', () => {
  it('defaults to the <available_skills> layout with escaped values and instructions first', async () => {
    const res = await ctx.app.inject('/prompt');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; charset=utf-8/);
    expect(res.headers['cache-control']).toBe('public, no-cache');
    expect(res.headers.etag).toMatch(/^W\/"r\d+-/);
    expect(Number(res.headers['x-prompt-tokens'])).toBe(countTokens(res.body));
    const prompt = res.body;
    const instructions = prompt.slice(0, prompt.indexOf('<available_skills>'));
    expect(instructions).toContain('load_skill');
    expect(instructions).toMatch(/not a tool/);
    expect(instructions).toContain('read_skill_file');

    const listed = availableSkills(prompt);
    const names = listed.map((skill) => skill.name);
    expect(names).toEqual(expect.arrayContaining([tricky, alpha, beta, ...realNames]));
    expect(names).not.toContain(hidden);
    expect(names).not.toContain(hiddenQuoted);
    expect(names).toEqual([...names].sort());

    const entry = listed.find((skill) => skill.name === tricky)!;
    expect(entry.description).toBe(TRICKY_DESCRIPTION);
    // Only what XML requires is escaped: `&` and `<`; quotes, apostrophes and `>` read as written.
    expect(prompt).toContain(`&lt;b>bold&lt;/b> &amp; "double" 'single' quotes, then a > sign.`);
    expect(entry.location).toBe(`http://localhost:80/skills/${tricky}/content`);
    const content = await ctx.app.inject(new URL(entry.location).pathname);
    expect(content.statusCode).toBe(200);
  });

  it('renders real skills with their descriptions', async () => {
    const listed = availableSkills((await ctx.app.inject(`/prompt?name=${realNames.join(',')}`)).body);
    expect(listed.map((skill) => skill.name)).toEqual([...realNames].sort());
    for (const skill of listed) {
      const meta = (await ctx.app.inject(`/skills/${skill.name}`)).json();
      expect(skill.description).toBe(meta.description);
    }
  });

  it('renders markdown with the same instructions and one line per skill', async () => {
    const res = await ctx.app.inject(`/prompt?format=markdown&name=${alpha}&name=${tricky}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/markdown; charset=utf-8/);
    expect(res.body).toContain('load_skill');
    expect(res.body).toMatch(/not a tool/);
    const lines = res.body.split('\n').filter((line) => line.startsWith('- **'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      `- **${alpha}**: Alpha skill: converts zebra spreadsheets into reports. (location: http://localhost:80/skills/${alpha}/content)`,
    );
    expect(lines[1]).toContain(TRICKY_DESCRIPTION);
  });

  it('answers json with the prompt, its token count, what is included and what is omitted', async () => {
    const body = await promptJson(`name=${alpha}&name=${beta}&name=${hidden}&name=no-such-skill`);
    expect(body.tokens).toBe(countTokens(body.prompt));
    expect(availableSkills(body.prompt).map((skill) => skill.name)).toEqual([alpha, beta].sort());
    expect(body.included.map((skill) => skill.name)).toEqual([alpha, beta].sort());
    for (const skill of body.included) {
      expect(skill.version).toBe('1.0.0');
      expect(skill.location).toBe(`http://localhost:80/skills/${skill.name}/content`);
      expect(skill.tokens.entry).toBeGreaterThan(0);
      expect(skill.tokens.body).toBeGreaterThan(0);
    }
    expect(body.omitted).toEqual(
      expect.arrayContaining([
        { name: hidden, reason: 'model-invocation-disabled' },
        { name: 'no-such-skill', reason: 'not-found' },
      ]),
    );
    expect(body.omitted).toHaveLength(2);
    // Neither is named to the model: the omitted line is for budget drops only.
    expect(body.prompt).not.toContain(hidden);
    expect(body.prompt).not.toContain('no-such-skill');
  });
});

describe('GET /prompt locations', () => {
  it('follows the request origin, proxy headers included', async () => {
    const body = await promptJson(`name=${alpha}`, {
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'agents.example.org',
    });
    expect(body.included[0]!.location).toBe(`https://agents.example.org/skills/${alpha}/content`);
    expect(body.prompt).toContain(`<location>https://agents.example.org/skills/${alpha}/content</location>`);
  });

  it('gives different ETags to different origins', async () => {
    const a = await ctx.app.inject({ url: '/prompt', headers: { host: 'a.example' } });
    const b = await ctx.app.inject({ url: '/prompt', headers: { host: 'b.example' } });
    expect(a.headers.etag).not.toBe(b.headers.etag);
    const again = await ctx.app.inject({
      url: '/prompt',
      headers: { host: 'b.example', 'if-none-match': String(a.headers.etag) },
    });
    expect(again.statusCode).toBe(200);
  });

  it('uses SKILLREG_PUBLIC_URL when set', async () => {
    const other = await createTestApp({ SKILLREG_PUBLIC_URL: 'https://skills.example.com/registry/' });
    try {
      const name = uniqueName('public');
      await publish(other.app, files({ 'SKILL.md': skillMd({ name, description: 'Public URL check.' }) }));
      const res = await other.app.inject({ url: '/prompt', headers: { host: 'internal:3000' } });
      expect(availableSkills(res.body)[0]!.location).toBe(
        `https://skills.example.com/registry/skills/${name}/content`,
      );
      expect(res.body).not.toContain('internal:3000');
    } finally {
      await other.close();
    }
  });
});

describe('GET /prompt selection', () => {
  it('selects by repeated name, comma-separated names, q and tag', async () => {
    const repeated = await promptJson(`name=${alpha}&name=${tricky}`);
    expect(repeated.included.map((skill) => skill.name)).toEqual([alpha, tricky].sort());
    const comma = await promptJson(`name=${alpha},${tricky}`);
    expect(comma.included.map((skill) => skill.name)).toEqual([alpha, tricky].sort());

    const searched = await promptJson('q=zebra');
    expect(searched.included.map((skill) => skill.name)).toEqual([alpha]);

    const tagged = uniqueName('tagged');
    await publishSkill(tagged, 'Stable description.');
    await publishSkill(
      tagged,
      'Beta description, not yet stable.',
      undefined,
      'tag=beta&version=2.0.0-beta.1',
    );
    const betaPrompt = await promptJson('tag=beta');
    expect(betaPrompt.included).toEqual([
      expect.objectContaining({
        name: tagged,
        version: '2.0.0-beta.1',
        location: `http://localhost:80/skills/${tagged}/content?tag=beta`,
      }),
    ]);
    expect(betaPrompt.prompt).toContain('Beta description, not yet stable.');
    const latest = await promptJson(`name=${tagged}`);
    expect(latest.prompt).toContain('Stable description.');
  });

  it('never lists skills that disable model invocation, whatever the selection', async () => {
    for (const query of ['', `name=${hidden}`, 'q=hidden', `q=${hidden}`, 'format=markdown', 'format=json']) {
      const res = await ctx.app.inject(`/prompt?${query}`);
      expect(res.statusCode).toBe(200);
      const text = query === 'format=json' ? res.json().prompt : res.body;
      expect(text).not.toContain(hidden);
      expect(text).not.toContain(hiddenQuoted);
    }
  });

  it('answers an empty selection with the instructions and an empty list', async () => {
    const body = await promptJson('q=xyzzy-plugh-qwrtz');
    expect(body.included).toEqual([]);
    expect(availableSkills(body.prompt)).toEqual([]);
    expect(body.prompt).toContain('load_skill');
  });
});

describe('GET /prompt budget', () => {
  const loaded = uniqueName('loaded');
  const longest = uniqueName('longest');
  const short = uniqueName('short');
  const selection = `name=${loaded}&name=${longest}&name=${short}`;

  beforeAll(async () => {
    await publishSkill(loaded, `Loaded recently. ${'This skill has a rather long description. '.repeat(8)}`);
    await publishSkill(longest, `Never loaded and long. ${'Words that make the entry longer. '.repeat(25)}`);
    await publishSkill(short, 'Never loaded, short.');
    expect((await ctx.app.inject(`/skills/${loaded}/content`)).statusCode).toBe(200);
    await ctx.app.registry.repositories.loads.flush();
  });

  it('keeps everything when the budget allows, without a word of search', async () => {
    const full = await promptJson(selection);
    const body = await promptJson(`${selection}&budget=${full.tokens}`);
    expect(body.included).toHaveLength(3);
    expect(body.omitted).toEqual([]);
    expect(body.prompt).toBe(full.prompt);
    expect(body.searchFirst).toBe(false);
    expect(body.prompt).not.toContain('search_skills');
  });

  it('drops never-loaded skills first, the longest first, and names them within the budget', async () => {
    // A budget that drops skills makes the fragment search-first: exactly the search-first fragment
    // listing two, and the line naming the third.
    const budget =
      (await promptJson(`name=${loaded}&name=${short}&mode=search`)).tokens +
      countTokens(namesLine([longest]));
    expect(budget).toBeLessThan((await promptJson(selection)).tokens);
    const one = await promptJson(`${selection}&budget=${budget}`);
    expect(one.tokens).toBeLessThanOrEqual(budget);
    expect(countTokens(one.prompt)).toBe(one.tokens);
    expect(one.searchFirst).toBe(true);
    expect(one.prompt).toContain('search_skills');
    expect(one.omitted).toEqual([{ name: longest, reason: 'budget' }]);
    expect(one.included.map((skill) => skill.name).sort()).toEqual([loaded, short].sort());
    expect(one.prompt).toMatch(new RegExp(`not described here.*${longest}`));

    const tighter =
      (await promptJson(`name=${loaded}&mode=search`)).tokens +
      countTokens(namesLine([longest, short].sort()));
    const two = await promptJson(`${selection}&budget=${tighter}`);
    expect(two.tokens).toBeLessThanOrEqual(tighter);
    // Named most loaded first: the reverse of the order they were dropped in (longest went first).
    expect(two.omitted.map((skill) => skill.name)).toEqual([short, longest]);
    expect(two.omittedCount).toBe(2);
    expect(two.included.map((skill) => skill.name)).toEqual([loaded]);
    const line = two.prompt.split('\n').find((text) => text.includes('not described here'))!;
    expect(line).toContain(longest);
    expect(line).toContain(short);

    for (const format of ['xml', 'markdown']) {
      const res = await ctx.app.inject(`/prompt?format=${format}&${selection}&budget=${tighter}`);
      expect(countTokens(res.body)).toBeLessThanOrEqual(tighter);
      expect(res.body).toContain(loaded);
      expect(res.body).toContain('search_skills');
      // Markdown entries are shorter: more may be listed, the rest named or counted.
      expect(res.body).toMatch(new RegExp(`${longest}|1 more skill is available`));
    }
  });

  it('drops the least recently loaded of equally loaded skills first', async () => {
    // Load `short` now: loaded once each, `short` the more recent, so `loaded` goes before it.
    await ctx.app.inject(`/skills/${short}/content`);
    await ctx.app.registry.repositories.loads.flush();
    const budget = (await promptJson(`name=${short}&mode=search`)).tokens + countTokens(namesLine([loaded]));
    const body = await promptJson(`name=${loaded}&name=${short}&budget=${budget}`);
    expect(body.omitted).toEqual([{ name: loaded, reason: 'budget' }]);
    expect(body.included.map((skill) => skill.name)).toEqual([short]);
  });

  it('refuses a budget below the instructions, saying the minimum, and accepts the minimum', async () => {
    const res = await ctx.app.inject(`/prompt?${selection}&budget=5`);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers.etag).toBeUndefined();
    const problem = res.json();
    expect(problem.minimum).toBeGreaterThan(5);
    expect(problem.detail).toContain(String(problem.minimum));
    const minimal = await promptJson(`${selection}&budget=${problem.minimum}`);
    expect(minimal.tokens).toBeLessThanOrEqual(problem.minimum);
    expect(minimal.included).toEqual([]);
    expect(minimal.omitted).toHaveLength(3);

    for (const bad of ['-1', 'lots', '1.5']) {
      const refused = await ctx.app.inject(`/prompt?budget=${bad}`);
      expect(refused.statusCode, bad).toBe(400);
      expect(refused.json().detail, bad).toContain('budget');
    }
  });

  it('keeps the ETag of a prompt every skill fits in while loads are recorded', async () => {
    const url = `/prompt?${selection}&budget=100000`;
    const first = await ctx.app.inject(url);
    const etag = String(first.headers.etag);
    await ctx.app.inject(`/skills/${short}/content`);
    await ctx.app.registry.repositories.loads.flush();
    const after = await ctx.app.inject({ url, headers: { 'if-none-match': etag } });
    expect(after.statusCode).toBe(304);
  });

  it('changes the ETag of a budgeted prompt when loads are recorded', async () => {
    // A budget that drops one skill: which one depends on the loads.
    const budget = (await promptJson(`name=${loaded}&name=${short}&mode=search`)).tokens + 60;
    const url = `/prompt?${selection}&budget=${budget}`;
    expect((await promptJson(`${selection}&budget=${budget}`)).omittedCount).toBeGreaterThan(0);
    const first = await ctx.app.inject(url);
    const etag = String(first.headers.etag);
    const unchanged = await ctx.app.inject({ url, headers: { 'if-none-match': etag } });
    expect(unchanged.statusCode).toBe(304);
    await ctx.app.inject(`/skills/${longest}/content`);
    await ctx.app.registry.repositories.loads.flush();
    // A rendering that took 20 ms or more (a busy machine) follows loads alone at most once per 20
    // times its cost (src/cache/read-cache.ts), so the change may take a moment: poll, within bounds.
    const deadline = Date.now() + 15_000;
    let status = 304;
    while (status === 304 && Date.now() < deadline) {
      const after = await ctx.app.inject({ url, headers: { 'if-none-match': etag } });
      status = after.statusCode;
      if (status === 304) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
  });
});

describe('GET /prompt caching and freshness', () => {
  it('answers 304 to its own ETag and varies the ETag with the query', async () => {
    const first = await ctx.app.inject(`/prompt?name=${alpha}`);
    const etag = String(first.headers.etag);
    const again = await ctx.app.inject({ url: `/prompt?name=${alpha}`, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
    for (const other of [`/prompt?name=${beta}`, `/prompt?name=${alpha}&format=markdown`, '/prompt']) {
      const res = await ctx.app.inject({ url: other, headers: { 'if-none-match': etag } });
      expect(res.statusCode, other).toBe(200);
    }
  });

  it('reflects a publish, a tag move and a yank on the very next request', async () => {
    const name = uniqueName('fresh');
    const initial = await ctx.app.inject('/prompt');
    expect(initial.body).not.toContain(name);

    await publishSkill(name, 'First description.');
    const published = await ctx.app.inject({
      url: '/prompt',
      headers: { 'if-none-match': String(initial.headers.etag) },
    });
    expect(published.statusCode).toBe(200);
    expect(published.body).toContain('First description.');

    await publishSkill(name, 'Second description.');
    const tagMove = await ctx.app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/latest`,
      headers: adminAuth,
      payload: { version: '1.0.0' },
    });
    expect(tagMove.statusCode, tagMove.body).toBe(200);
    const moved = await ctx.app.inject({
      url: `/prompt?name=${name}`,
      headers: { 'if-none-match': String(published.headers.etag) },
    });
    expect(moved.statusCode).toBe(200);
    expect(moved.body).toContain('First description.');
    expect(moved.body).not.toContain('Second description.');

    for (const version of ['1.0.0', '1.0.1']) {
      const yank = await ctx.app.inject({
        method: 'DELETE',
        url: `/skills/${name}/versions/${version}`,
        headers: adminAuth,
      });
      expect(yank.statusCode, yank.body).toBe(200);
    }
    const yanked = await ctx.app.inject({
      url: `/prompt?name=${name}`,
      headers: { 'if-none-match': String(moved.headers.etag) },
    });
    expect(yanked.statusCode).toBe(200);
    expect(yanked.body).not.toContain(name);
  });
});

describe('buildPrompt', () => {
  const skill = (
    name: string,
    description: string,
    lastLoadedAt: Date | null = null,
    loadCount = lastLoadedAt ? 1 : 0,
  ): PromptSkill => ({
    name,
    description,
    version: '1.0.0',
    tokens: { body: 10 },
    loadCount,
    lastLoadedAt,
  });

  it('counts the omitted skills when even their names do not fit', async () => {
    const many = Array.from({ length: 60 }, (_, i) => skill(`skill-number-${i}`, `Description ${i}.`));
    const base = { style: 'xml' as const, baseUrl: 'https://r.example' };
    const empty = await buildPrompt([], { ...base, mode: 'search' });
    const budget = empty.tokens + 60;
    const result = await buildPrompt(many, { ...base, budget });
    expect(result.tokens).toBeLessThanOrEqual(budget);
    expect(result.searchFirst).toBe(true);
    expect(result.included.length + result.omitted.length).toBe(60);
    expect(result.prompt).toMatch(
      new RegExp(
        `\n${result.omitted.length} more skills are available but not described here: find them with search_skills\\.\n$`,
      ),
    );
  });

  it('is deterministic for ties: same loads, same length, by name', async () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const same = `Same. ${'Long enough that dropping one saves more than the search instructions add. '.repeat(8)}`;
    const skills = [skill('b-skill', same, at), skill('a-skill', same, at)];
    const base = { style: 'xml' as const, baseUrl: 'https://r.example' };
    const one = await buildPrompt([skills[0]!], { ...base, mode: 'search' });
    const result = await buildPrompt(skills, {
      ...base,
      budget: one.tokens + countTokens(namesLine(['a-skill'])),
    });
    expect(result.omitted.map((entry) => entry.name)).toEqual(['a-skill']);
    expect(result.included.map((entry) => entry.name)).toEqual(['b-skill']);
  });

  it('keeps the most loaded skill over a more recently loaded one', async () => {
    const skills = [
      skill('busy', `Loaded often, long ago. ${'Words. '.repeat(60)}`, new Date('2026-01-01T00:00:00Z'), 40),
      skill('fresh', `Loaded once, just now. ${'Words. '.repeat(60)}`, new Date('2026-06-01T00:00:00Z'), 1),
    ];
    const base = { style: 'xml' as const, baseUrl: 'https://r.example' };
    const one = await buildPrompt([skills[0]!], { ...base, mode: 'search' });
    const result = await buildPrompt(skills, {
      ...base,
      budget: one.tokens + countTokens(namesLine(['fresh'])),
    });
    expect(result.included.map((entry) => entry.name)).toEqual(['busy']);
    expect(result.omitted).toEqual([{ name: 'fresh', reason: 'budget' }]);
  });
});
