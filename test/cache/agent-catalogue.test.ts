import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  AgentCatalogueMirror,
  applyDelta,
  type CatalogueSnapshot,
  mirroredSkill,
} from '../../src/cache/agent-catalogue.js';
import { DEFAULT_NAMESPACE } from '../../src/domain/scope.js';
import { clearEntryTokenMemo, promptEntryTokens } from '../../src/render/prompt.js';
import { countTokens } from '../../src/render/token-count.js';
import { backfillPromptTokens } from '../../src/server.js';
import type { AgentCatalogueEntry } from '../../src/storage/catalogue-repository.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';
import { until } from '../helpers/polling.js';
import { type Replicas, startReplicas } from '../helpers/replicas.js';

const postgresUrl = inject('postgresUrl');

function entry(name: string, version = '1.0.0'): AgentCatalogueEntry {
  return {
    name,
    description: `About ${name}.`,
    version,
    digest: `sha256:${name}-${version}`,
    disableModelInvocation: null,
    scanVerdict: 'pass',
    tokens: { body: 10 },
    lastLoadedAt: null,
    loadCount: 0,
    promptTokens: null,
  };
}

function bundle(name: string, description = `Mirror test ${name}.`, extra?: string) {
  return files({ 'SKILL.md': skillMd({ name, description, extra }) });
}

interface PromptJson {
  included: { name: string; version: string }[];
  omitted: { name: string; reason: string }[];
}

async function promptJson(app: FastifyInstance, query = ''): Promise<PromptJson> {
  const res = await app.inject(`/prompt?format=json${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as PromptJson;
}

async function includedVersion(app: FastifyInstance, name: string): Promise<string | undefined> {
  return (await promptJson(app)).included.find((skill) => skill.name === name)?.version;
}

describe('an entry of the copy', () => {
  it('reads back every field a rendering asks for, whatever the row holds', () => {
    const counts = [
      null,
      { xml: 12, markdown: 9, listed: 3 },
      { xml: 40, markdown: -1, listed: 5 },
      // Too large to pack into one number: held beside the entry.
      { xml: 2047, markdown: 2046, listed: 255 },
      { xml: 2048, markdown: 7, listed: 2 },
      { xml: 9, markdown: 2047, listed: 2 },
      { xml: 9, markdown: 7, listed: 256 },
    ];
    const flags = [null, 'true', 'maybe'];
    const verdicts = [null, 'pass', 'warn', 'flagged'];
    const bodies = [0, 1, 73_219, 2 ** 27 - 1, 2 ** 27, 2 ** 40];
    const loads = [
      { lastLoadedAt: null, loadCount: 0 },
      { lastLoadedAt: new Date('2026-12-01T10:11:12.345Z'), loadCount: 41 },
      { lastLoadedAt: null, loadCount: 3 },
    ];
    let checked = 0;
    for (const promptTokens of counts)
      for (const disableModelInvocation of flags)
        for (const scanVerdict of verdicts)
          for (const body of bodies)
            for (const load of loads) {
              const row: AgentCatalogueEntry = {
                ...entry(`entry-${checked}`),
                promptTokens,
                disableModelInvocation,
                scanVerdict,
                tokens: { body },
                ...load,
              };
              const held = mirroredSkill(row, row.version, row.name);
              expect({
                name: held.name,
                version: held.version,
                description: held.description,
                digest: held.digest,
                disableModelInvocation: held.disableModelInvocation,
                scanVerdict: held.scanVerdict,
                tokens: held.tokens,
                loadCount: held.loadCount,
                lastLoadedAt: held.lastLoadedAt,
                promptTokens: held.promptTokens && {
                  xml: held.promptTokens.xml,
                  markdown: held.promptTokens.markdown,
                  listed: held.promptTokens.listed,
                },
              }).toEqual({
                name: row.name,
                version: row.version,
                // Kept only when the entry must be counted: renderings fetch the others' descriptions.
                description: promptTokens ? undefined : row.description,
                digest: promptTokens ? undefined : row.digest,
                disableModelInvocation,
                scanVerdict,
                tokens: { body },
                loadCount: load.loadCount,
                lastLoadedAt: load.lastLoadedAt,
                promptTokens: promptTokens && { ...promptTokens },
              });
              checked += 1;
            }
    expect(checked).toBe(7 * 3 * 4 * 6 * 3);
  });
});

describe('applyDelta', () => {
  const base: CatalogueSnapshot = {
    revision: 5,
    loadsRevision: 2,
    entries: ['b', 'd', 'f'].map((name) => entry(name)),
  };

  it('replaces changed entries, drops removed ones and merges new names in code point order', () => {
    const next = applyDelta(base, {
      revision: 9,
      loadsRevision: 3,
      entries: [entry('d', '2.0.0'), entry('g'), entry('a'), entry('c-x'), entry('c0')],
      removed: ['f', 'not-there'],
    });
    expect(next.entries.map((skill) => `${skill.name}@${skill.version}`)).toEqual([
      'a@1.0.0',
      'b@1.0.0',
      'c-x@1.0.0',
      'c0@1.0.0',
      'd@2.0.0',
      'g@1.0.0',
    ]);
    expect(next).toMatchObject({ revision: 9, loadsRevision: 3 });
    // The snapshot it started from is untouched: a rendering still reading it stays consistent.
    expect(base.entries.map((skill) => `${skill.name}@${skill.version}`)).toEqual([
      'b@1.0.0',
      'd@1.0.0',
      'f@1.0.0',
    ]);
  });

  it('answers what sorting the changed set answers, for one new name or many, with removals', () => {
    let state = 9;
    const random = () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state / 2_147_483_648;
    };
    const name = () => `s${Math.floor(random() * 5000).toString(36)}`;
    for (let round = 0; round < 120; round++) {
      const names = [...new Set(Array.from({ length: Math.floor(random() * 300) }, name))].sort();
      const start: CatalogueSnapshot = { revision: 1, loadsRevision: 0, entries: names.map((n) => entry(n)) };
      // Rounds alternate between a publish or two and a bulk change (more than the binary-search path takes).
      const changes = round % 3 === 0 ? 100 + Math.floor(random() * 100) : Math.floor(random() * 4);
      const changed = [...new Set(Array.from({ length: changes }, name))].map((n) => entry(n, '2.0.0'));
      const removed = [...new Set(Array.from({ length: Math.floor(random() * 5) }, name))].filter(
        (n) => !changed.some((skill) => skill.name === n),
      );
      const expected = new Map(names.map((n) => [n, '1.0.0']));
      for (const skill of changed) expected.set(skill.name, '2.0.0');
      for (const n of removed) expected.delete(n);
      const next = applyDelta(start, { revision: 2, loadsRevision: 0, entries: changed, removed });
      expect(next.entries.map((skill) => `${skill.name}@${skill.version}`)).toEqual(
        [...expected].sort(([x], [y]) => (x < y ? -1 : 1)).map(([n, version]) => `${n}@${version}`),
      );
    }
  });

  it('keeps the entries array when nothing changed, and never moves revisions back', () => {
    const next = applyDelta(base, { revision: 4, loadsRevision: 7, entries: [], removed: [] });
    expect(next.entries).toBe(base.entries);
    expect(next).toMatchObject({ revision: 5, loadsRevision: 7 });
  });
});

describe('the in-memory agent catalogue behind /prompt and /tools', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it("holds the search index's string for each name it lists, when the index has the skill", async () => {
    const { app } = ctx;
    const name = uniqueName('shared-name');
    expect((await publish(app, bundle(name))).statusCode).toBe(201);
    // The search index catches up first (as at a start, where the copy is read after it)...
    const search = await app.inject(`/skills?q=${encodeURIComponent(name)}`);
    expect(search.json().items.map((item: { name: string }) => item.name)).toContain(name);
    const shared = vi.spyOn(app.registry.search, 'sharedName');
    // ...then the agent catalogue's catch-up asks it for the name of every entry it makes.
    expect(await includedVersion(app, name)).toBe('1.0.0');
    expect(shared).toHaveBeenCalledWith(DEFAULT_NAMESPACE, name);
    expect(shared.mock.results.find((_, at) => shared.mock.calls[at]![1] === name)?.value).toBe(name);
    shared.mockRestore();
  });

  it('is first read in batches of one snapshot, and catches up on what was written meanwhile', async () => {
    const { app } = ctx;
    const catalogue = app.registry.repositories.catalogue;
    for (let i = 0; i < 5; i++) {
      expect((await publish(app, bundle(uniqueName(`batched-${i}`)))).statusCode).toBe(201);
    }
    const late = uniqueName('batched-late');
    const original = catalogue.agentCatalogueAll.bind(catalogue);
    let landing: Promise<unknown> | undefined;
    let batches = 0;
    const read = vi
      .spyOn(catalogue, 'agentCatalogueAll')
      .mockImplementation((tag, namespace, batch, onBatch) =>
        original(tag, namespace, batch, (page) => {
          batches += 1;
          // A publish starts while the first batch is read (on PGlite it waits for the read to end).
          if (batches === 1) landing = publish(app, bundle(late));
          return onBatch(page);
        }),
      );
    const mirror = new AgentCatalogueMirror(catalogue, app.registry.cache.state, async () => [], {
      batchSize: 2,
    });
    try {
      const first = await mirror.snapshot();
      expect((await landing) as { statusCode: number }).toMatchObject({ statusCode: 201 });
      expect(batches).toBeGreaterThanOrEqual(3);
      const whole = (await catalogue.agentCatalogueSince('latest')).entries.map((skill) => skill.name);
      const names = first.entries.map((skill) => skill.name);
      // In batches of two, every skill there was when the read began, in name order...
      expect(names).toEqual([...names].sort());
      expect(names).not.toContain(late);
      expect(names).toEqual(whole.filter((name) => name !== late).sort());
      // ...and from the snapshot's revision on, the next snapshot catches up with the late one.
      expect(first.revision).toBeLessThan(await app.registry.cache.state.current().then((s) => s.revision));
      const next = await mirror.snapshot();
      expect(next.entries.map((skill) => skill.name)).toEqual([...whole].sort());
      expect(next.entries.map((skill) => skill.name)).toContain(late);
    } finally {
      read.mockRestore();
      mirror.close();
    }
  });

  it('follows every kind of write on the next request, reading only what changed', async () => {
    const { app } = ctx;
    const since = vi.spyOn(app.registry.repositories.catalogue, 'agentCatalogueSince');
    const name = uniqueName('mirror');
    expect(await includedVersion(app, name)).toBeUndefined();

    expect((await publish(app, bundle(name))).statusCode).toBe(201);
    expect(await includedVersion(app, name)).toBe('1.0.0');
    expect((await publish(app, bundle(name, 'Second.'))).statusCode).toBe(201);
    expect(await includedVersion(app, name)).toBe('1.0.1');

    // Pinning latest by hand, then yanking what it points at, then every version.
    const pin = await app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/latest`,
      headers: adminAuth,
      payload: { version: '1.0.0' },
    });
    expect(pin.statusCode).toBe(200);
    expect(await includedVersion(app, name)).toBe('1.0.0');
    for (const version of ['1.0.0', '1.0.1']) {
      const yank = await app.inject({
        method: 'DELETE',
        url: `/skills/${name}/versions/${version}`,
        headers: adminAuth,
      });
      expect(yank.statusCode).toBe(200);
    }
    expect(await includedVersion(app, name)).toBeUndefined();
    const tools = await app.inject('/tools');
    expect(tools.body).not.toContain(name);

    // A new version that a model must not invoke is left out, and named as such when asked for.
    expect((await publish(app, bundle(name, 'Third.', 'disable-model-invocation: true'))).statusCode).toBe(
      201,
    );
    const named = await promptJson(app, `&name=${name}&name=no-such-skill`);
    expect(named.included).toEqual([]);
    expect(named.omitted).toEqual(
      expect.arrayContaining([
        { name, reason: 'model-invocation-disabled' },
        { name: 'no-such-skill', reason: 'not-found' },
      ]),
    );

    // After the first full read, each catch-up asked only for changes since what the copy held.
    const calls = since.mock.calls;
    expect(calls.length).toBeGreaterThan(1);
    for (const call of calls.slice(1)) expect(call[1]).toBeDefined();

    // Nothing written: renderings that miss the response cache (new budgets) cost no statement.
    since.mockClear();
    for (const budget of [5000, 6000, 7000]) await promptJson(app, `&budget=${budget}`);
    expect(since).not.toHaveBeenCalled();
    since.mockRestore();
  });

  it('renders from token counts stored at publish, which add up to the whole count', async () => {
    const { app, database } = ctx;
    const stem = uniqueName('stored');
    const descriptions = [
      'Reviews <pull requests> & "diffs"; flags risky changes.',
      'Übersetzt Texte ins Deutsche — mit Glossar, 日本語 too.',
      'Multi-line\n  description:   with   odd   spacing.',
    ];
    const names = descriptions.map((_, i) => `${stem}-${i}`);
    for (const [i, name] of names.entries()) {
      expect((await publish(app, bundle(name, descriptions[i]))).statusCode).toBe(201);
    }
    const stored = await database.db.execute(sql`
      select name, tokens_prompt_xml, tokens_prompt_markdown, tokens_prompt_name from skill_versions
      where name like ${`${stem}-%`} order by name`);
    const rows = (stored as unknown as { rows: Record<string, unknown>[] }).rows;
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const counts = promptEntryTokens(String(row.name), descriptions[Number(String(row.name).at(-1))]!);
      expect(row).toMatchObject({
        tokens_prompt_xml: counts!.xml,
        tokens_prompt_markdown: counts!.markdown,
        tokens_prompt_name: counts!.listed,
      });
    }
    clearEntryTokenMemo();
    const selection = names.map((name) => `name=${name}`).join('&');
    for (const format of ['xml', 'markdown']) {
      const res = await app.inject(`/prompt?format=${format}&${selection}`);
      expect(res.statusCode).toBe(200);
      expect(Number(res.headers['x-prompt-tokens']), format).toBe(countTokens(res.body));
      // The copy keeps no descriptions; the rendering fetched those it lists.
      expect(res.body).toContain(format === 'xml' ? 'flags risky changes.' : 'mit Glossar, 日本語 too.');
    }
    const { entries } = await app.registry.agents.catalogues.mirror(DEFAULT_NAMESPACE).snapshot();
    const held = entries.filter((entry) => entry.name.startsWith(stem));
    expect(held).toHaveLength(3);
    for (const entry of held) expect(entry.description).toBeUndefined();
    // The smallest budget that lists one of the three and names the others (a little more than the
    // one that only counts them) describes that one only.
    const markers = ['risky', 'Glossar', 'odd'];
    let fit: { prompt: string; included: { name: string }[] } | undefined;
    for (let budget = 150; budget < 2000 && !fit; budget += 5) {
      const res = await app.inject(`/prompt?format=json&${selection}&budget=${budget}`);
      const body = res.json() as { prompt: string; included: { name: string }[] };
      if (res.statusCode === 200 && body.included.length === 1 && body.prompt.includes('load them by name')) {
        fit = body;
      }
    }
    expect(fit).toBeDefined();
    const listed = names.indexOf(fit!.included[0]!.name);
    for (const [i, marker] of markers.entries()) {
      if (i === listed) expect(fit!.prompt).toContain(marker);
      else {
        expect(fit!.prompt).not.toContain(marker);
        expect(fit!.prompt).toContain(names[i]);
      }
    }
  });

  it('backfills the counts of versions stored without them, once', async () => {
    const { app, database } = ctx;
    const name = uniqueName('backfill');
    expect((await publish(app, bundle(name, 'Stored before counts existed.'))).statusCode).toBe(201);
    const columns = sql`select tokens_prompt_xml as xml, tokens_prompt_markdown as markdown,
      tokens_prompt_name as listed from skill_versions where name = ${name}`;
    const read = async () =>
      (
        (await database.db.execute(columns)) as unknown as {
          rows: { xml: number | null; markdown: number | null; listed: number | null }[];
        }
      ).rows[0];
    await database.db.execute(sql`update skill_versions set tokens_prompt_xml = null,
      tokens_prompt_markdown = null, tokens_prompt_name = null where name = ${name}`);
    expect(await read()).toEqual({ xml: null, markdown: null, listed: null });
    await backfillPromptTokens(app);
    expect(await read()).toEqual(promptEntryTokens(name, 'Stored before counts existed.'));
    expect(await app.registry.fillPromptTokens()).toBe(0);
  });

  it('serves searches and other tags from the database, as before', async () => {
    const { app } = ctx;
    const name = uniqueName('mirrorsearch');
    expect((await publish(app, bundle(name, 'Tends a zanzibarian greenhouse.'))).statusCode).toBe(201);
    expect((await publish(app, bundle(name, 'Tends a zanzibarian orchard.'))).statusCode).toBe(201);
    const moved = await app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/stable`,
      headers: adminAuth,
      payload: { version: '1.0.0' },
    });
    expect(moved.statusCode).toBe(200);
    expect((await promptJson(app, '&q=zanzibarian')).included).toEqual([
      expect.objectContaining({ name, version: '1.0.1' }),
    ]);
    const stable = (await promptJson(app, '&tag=stable')).included.find((skill) => skill.name === name);
    expect(stable?.version).toBe('1.0.0');
  });

  it('orders skills by code point everywhere: catalogue pages and prompts agree', async () => {
    const { app } = ctx;
    const stem = uniqueName('order');
    const names = [`${stem}0`, `${stem}-b`, `${stem}a`, `${stem}-a0`];
    for (const name of names) expect((await publish(app, bundle(name))).statusCode).toBe(201);
    const expected = [...names].sort(); // JavaScript compares code points: '-' < '0' < 'a'
    const page = await app.inject('/skills?limit=500');
    const pageNames = (page.json() as { items: { name: string }[] }).items
      .map((item) => item.name)
      .filter((name) => name.startsWith(stem));
    expect(pageNames).toEqual(expected);
    const promptNames = (await promptJson(app)).included
      .map((skill) => skill.name)
      .filter((name) => name.startsWith(stem));
    expect(promptNames).toEqual(expected);
  });

  it('follows recorded loads: a budget keeps the most loaded skill, the one loaded last of equals', async () => {
    const { app } = ctx;
    const stem = uniqueName('loads');
    const names = [`${stem}-a`, `${stem}-b`, `${stem}-c`];
    for (const name of names) expect((await publish(app, bundle(name))).statusCode).toBe(201);
    const selection = names.map((name) => `&name=${name}`).join('');
    const all = await promptJson(app, selection);
    expect(all.included).toHaveLength(3);
    /**
     * The skills the smallest budget that lists any of the three lists. Each round asks other budgets:
     * a rendering cached before the loads may be served a while after them on a busy machine.
     */
    let round = 0;
    const keptByBudget = async (): Promise<string[]> => {
      round += 1;
      for (let budget = 200 + round; budget < 2000; budget += 10) {
        const fit = await app.inject(`/prompt?format=json${selection}&budget=${budget}`);
        if (fit.statusCode !== 200) continue;
        const kept = (fit.json() as PromptJson).included.map((skill) => skill.name);
        if (kept.length > 0) return kept;
      }
      return [];
    };
    const load = async (name: string, times: number) => {
      for (let i = 0; i < times; i++) {
        expect((await app.inject(`/skills/${name}/content`)).statusCode).toBe(200);
      }
      await app.registry.repositories.loads.flush();
    };
    // One load each: the later one is kept.
    for (const loaded of [names[2]!, names[0]!]) {
      await load(loaded, 1);
      expect(await keptByBudget()).toEqual([loaded]);
    }
    // Two more loads of c (three in all) outweigh a's one, more recent, load.
    await load(names[2]!, 2);
    expect(await keptByBudget()).toEqual([names[2]!]);
    // The copy caught up by loads revision, counts included.
    const { entries } = await app.registry.agents.catalogues.mirror(DEFAULT_NAMESPACE).snapshot();
    const counts = entries.filter((entry) => names.includes(entry.name)).map((entry) => entry.loadCount);
    expect(counts).toEqual([1, 0, 3]);
  });
});

describe.skipIf(!postgresUrl)('the agent catalogue on two replicas of one database', () => {
  let replicas: Replicas;
  let a: FastifyInstance;
  let b: FastifyInstance;

  beforeAll(async () => {
    replicas = await startReplicas(2);
    [a, b] = replicas.apps as [FastifyInstance, FastifyInstance];
  });
  afterAll(async () => {
    await replicas?.close();
  });

  it('lists a publish and a yank made on the other replica, also with the change feed down', async () => {
    const name = uniqueName('mirror-replica');
    expect(await includedVersion(b, name)).toBeUndefined();
    expect((await publish(a, bundle(name))).statusCode).toBe(201);
    await until(async () => (await includedVersion(b, name)) === '1.0.0');

    await b.registry.cache.changeFeed!.close();
    expect(b.registry.cache.state.live).toBe(false);
    expect((await publish(a, bundle(name, 'Second.'))).statusCode).toBe(201);
    // Without the feed every request reads the revision row: the very next one is current.
    expect(await includedVersion(b, name)).toBe('1.0.1');
    const yank = await a.inject({
      method: 'DELETE',
      url: `/skills/${name}/versions/1.0.1`,
      headers: adminAuth,
    });
    expect(yank.statusCode).toBe(200);
    expect(await includedVersion(b, name)).toBe('1.0.0');
  });
});
