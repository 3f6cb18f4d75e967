import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { evalQueries, QUERIES_FILE } from '../../bench/search-eval/corpus.js';
import { catalogueFace, measureFace, type Send, searchSkillsFace } from '../../bench/search-eval/measure.js';
import { writeTarGz } from '../../src/bundle/archive-write.js';
import type { BundleFile } from '../../src/bundle/types.js';
import { readSkillFolder } from '../../src/services/skill-folder.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

const CORPUS = fileURLToPath(new URL('../../../shared/skill-corpus', import.meta.url));
const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

function skillFolders(): string[] {
  if (!existsSync(CORPUS)) return [];
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const full = path.join(dir, entry.name);
      if (existsSync(path.join(full, 'SKILL.md'))) found.push(full);
      else walk(full);
    }
  };
  walk(CORPUS);
  return found.sort();
}

/** What an independent reader makes of a SKILL.md: the frontmatter (if YAML parses) and the body after it. */
function independentRead(text: string): { frontmatter?: Record<string, unknown>; body: string } {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const match = /^---[ \t]*\n([\s\S]*?)\n---[ \t]*(?:\n|$)/.exec(normalized);
  if (!match) return { body: normalized };
  let frontmatter: Record<string, unknown> | undefined;
  try {
    const parsed = parseYaml(match[1]!);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      frontmatter = parsed as Record<string, unknown>;
  } catch {
    frontmatter = undefined;
  }
  return { frontmatter, body: normalized.slice(match[0].length) };
}

const folders = skillFolders();

/** The acceptance bar of the search-eval README (../shared/search-eval). */
const SEARCH_BAR = { recall5: 0.9, mrr10: 0.75 };

interface Publish {
  label: string;
  files: BundleFile[];
  status: number;
  body: string;
  contentType: string | undefined;
}

/**
 * The corpus is published once per run, here, in path order (where several folders publish one name,
 * the later is the newer version): the checks of each publish and the search evaluation read the same
 * registry.
 */
describe.skipIf(folders.length === 0)('the real-world corpus over HTTP (../shared/skill-corpus)', () => {
  let ctx: TestApp;
  const publishes: Publish[] = [];
  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_RATE_LIMIT_WRITES: '0' });
    for (const folder of folders) {
      const files = await readSkillFolder(folder);
      const archive = await writeTarGz(files, { prefix: path.basename(folder) });
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/skills',
        headers: { ...adminAuth, 'content-type': 'application/gzip' },
        payload: archive,
      });
      publishes.push({
        label: path.relative(CORPUS, folder),
        files,
        status: res.statusCode,
        body: res.body,
        contentType: res.headers['content-type'] as string | undefined,
      });
    }
  }, 300_000);
  afterAll(async () => ctx?.close());

  it(`publishes each of the ${folders.length} folders: accepted faithfully or refused with a specific reason`, async () => {
    const outcomes: Record<string, number> = {};
    const reasons: Record<string, number> = {};
    for (const { label, files, status, body, contentType } of publishes) {
      outcomes[status] = (outcomes[status] ?? 0) + 1;
      expect(status, `${label}: ${body.slice(0, 300)}`).toBeLessThan(500);

      const skillMdText = files.find((file) => file.path === 'SKILL.md')!.bytes;
      const expected = independentRead(Buffer.from(skillMdText).toString('utf8'));
      if (status === 200 || status === 201) {
        const published = JSON.parse(body) as { name: string; version: string };
        expect(published.name, label).toMatch(NAME);
        if (typeof expected.frontmatter?.name === 'string' && NAME.test(expected.frontmatter.name)) {
          expect(published.name, label).toBe(expected.frontmatter.name);
        }
        const content = await ctx.app.inject(
          `/skills/${published.name}/content?format=json&version=${encodeURIComponent(published.version)}`,
        );
        expect(content.statusCode, label).toBe(200);
        const json = content.json() as { body: string; frontmatter: Record<string, unknown> };
        expect(json.body.trim(), label).toBe(expected.body.trim());
        const description = expected.frontmatter?.description;
        if (typeof description === 'string' && description.trim().length > 0 && description.length <= 1024) {
          expect(String(json.frontmatter.description).trim(), label).toBe(description.trim());
        }
        // Every key the author wrote is kept.
        for (const key of Object.keys(expected.frontmatter ?? {})) {
          expect(json.frontmatter, `${label}: key ${key}`).toHaveProperty([key]);
        }
      } else {
        expect(contentType, label).toMatch(/application\/problem\+json/);
        const problem = JSON.parse(body) as { detail: string; errors?: { path: string; detail: string }[] };
        expect(problem.detail.length, label).toBeGreaterThan(15);
        if (status === 422) {
          expect(problem.errors?.length, label).toBeGreaterThan(0);
          for (const error of problem.errors ?? []) expect(error.detail.length, label).toBeGreaterThan(20);
        }
        const reason = (problem.errors?.[0]?.detail ?? problem.detail)
          .replace(/'[^']*'/g, "'…'")
          .slice(0, 90);
        reasons[`${status} ${reason}`] = (reasons[`${status} ${reason}`] ?? 0) + 1;
      }
    }
    console.log('[corpus] outcomes by status:', outcomes);
    console.log('[corpus] refusal reasons:', reasons);
    expect(publishes.length).toBe(folders.length);
    // The registry refuses a few corpus folders on purpose (invalid names, descriptions over 1024).
    expect(publishes.filter(({ status }) => status >= 300).length).toBeLessThan(10);
  }, 300_000);

  /**
   * The public search evaluation (../shared/search-eval) on the published corpus, without distractors
   * to stay quick: every query asked of GET /skills?q= and the search_skills tool, and the bar held.
   * Figures among 10,000 distractors come from `npm run bench:search` (docs/PERFORMANCE.md).
   */
  describe.skipIf(!existsSync(QUERIES_FILE))('search evaluation', () => {
    const send: Send = async ({ method, url, headers, body }) => {
      const res = await ctx.app.inject({ method, url, headers, payload: body });
      return { status: res.statusCode, json: () => res.json() };
    };
    it.each([
      { name: 'GET /skills?q=', face: () => catalogueFace(send) },
      { name: 'search_skills (GET /search)', face: () => searchSkillsFace(send) },
    ])(
      '$name puts a relevant skill in the first five for at least 90% of requests',
      async ({ name, face }) => {
        const result = await measureFace(name, face(), evalQueries());
        expect(result.errors).toBe(0);
        expect(result.recall5, JSON.stringify(result.misses.slice(0, 5))).toBeGreaterThanOrEqual(
          SEARCH_BAR.recall5,
        );
        expect(result.mrr10).toBeGreaterThanOrEqual(SEARCH_BAR.mrr10);
      },
    );
  });
});
