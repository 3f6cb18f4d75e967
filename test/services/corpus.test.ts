import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { writeTarGz } from '../../src/bundle/archive-write.js';
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

describe.skipIf(folders.length === 0)('the real-world corpus over HTTP (../shared/skill-corpus)', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx?.close());

  it(`publishes each of the ${folders.length} folders: accepted faithfully or refused with a specific reason`, async () => {
    const outcomes: Record<string, number> = {};
    const reasons: Record<string, number> = {};
    for (const folder of folders) {
      const label = path.relative(CORPUS, folder);
      const files = await readSkillFolder(folder);
      const archive = await writeTarGz(files, { prefix: path.basename(folder) });
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/skills',
        headers: { ...adminAuth, 'content-type': 'application/gzip' },
        payload: archive,
      });
      outcomes[res.statusCode] = (outcomes[res.statusCode] ?? 0) + 1;
      expect(res.statusCode, `${label}: ${res.body.slice(0, 300)}`).toBeLessThan(500);

      const skillMdText = files.find((file) => file.path === 'SKILL.md')!.bytes;
      const expected = independentRead(Buffer.from(skillMdText).toString('utf8'));
      if (res.statusCode === 200 || res.statusCode === 201) {
        const published = res.json() as { name: string; version: string };
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
        expect(res.headers['content-type'], label).toMatch(/application\/problem\+json/);
        const problem = res.json() as { detail: string; errors?: { path: string; detail: string }[] };
        expect(problem.detail.length, label).toBeGreaterThan(15);
        if (res.statusCode === 422) {
          expect(problem.errors?.length, label).toBeGreaterThan(0);
          for (const error of problem.errors ?? []) expect(error.detail.length, label).toBeGreaterThan(20);
        }
        const reason = (problem.errors?.[0]?.detail ?? problem.detail)
          .replace(/'[^']*'/g, "'…'")
          .slice(0, 90);
        reasons[`${res.statusCode} ${reason}`] = (reasons[`${res.statusCode} ${reason}`] ?? 0) + 1;
      }
    }
    console.log('[corpus] outcomes by status:', outcomes);
    console.log('[corpus] refusal reasons:', reasons);
    expect(Object.values(outcomes).reduce((a, b) => a + b, 0)).toBe(folders.length);
  }, 300_000);
});
