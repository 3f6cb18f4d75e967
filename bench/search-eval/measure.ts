/**
 * The search-eval measurement against a running registry (../../shared/search-eval/README.md): publish
 * the corpus (and distractors), ask each query of each search face, score recall@5 and MRR@10, time
 * each query's first (uncached) answer. Used by bench/search-eval.ts and by the test that holds the
 * bar on the public corpus.
 */
import { writeZip } from '../../src/bundle/archive-write.js';
import { readSkillFolder } from '../../src/services/skill-folder.js';
import { type EvalQuery, type Score, score } from './corpus.js';
import type { Distractor } from './distractors.js';

/** Sends one request to the registry under test (fetch over HTTP, or app.inject in tests). */
export type Send = (request: {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}) => Promise<{ status: number; json: () => unknown }>;

/** A search face: a query in, ranked skill names out (an error answer counts as no results). */
export type Face = (query: string, limit: number) => Promise<string[]>;

export interface FaceResult extends Score {
  face: string;
  p50Ms: number;
  p95Ms: number;
  errors: number;
  misses: { q: string; relevant: string[]; got: string[] }[];
}

async function publish(
  send: Send,
  token: string,
  contentType: string,
  body: Buffer | string,
): Promise<number> {
  const answer = await send({
    method: 'POST',
    url: '/skills',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    body,
  });
  return answer.status;
}

export function distractorMarkdown(skill: Distractor): string {
  return `---\nname: ${skill.name}\ndescription: ${JSON.stringify(skill.description)}\n---\n${skill.body}\n`;
}

/** Runs `work` over items with `concurrency` at once. */
async function eachConcurrently<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/**
 * Publishes half the distractors, then every corpus folder (as the zip of its files), then the other
 * half, so recency favours neither. Answers how many corpus folders the registry refused.
 */
export async function publishAll(
  send: Send,
  token: string,
  folders: readonly string[],
  distractors: readonly Distractor[],
  concurrency = 4,
): Promise<{ refused: string[] }> {
  const half = Math.floor(distractors.length / 2);
  const publishDistractors = (slice: readonly Distractor[]) =>
    eachConcurrently(slice, concurrency, async (skill) => {
      const status = await publish(send, token, 'text/markdown', distractorMarkdown(skill));
      if (status >= 300) throw new Error(`publishing distractor ${skill.name} answered ${status}`);
    });
  await publishDistractors(distractors.slice(0, half));
  const refused: string[] = [];
  // In path order, one at a time: where several folders publish one name, the later is the newer version.
  for (const folder of folders) {
    const files = await readSkillFolder(folder).catch(() => undefined);
    if (!files) {
      refused.push(folder);
      continue;
    }
    const zip = await writeZip(
      files.map((file) => ({ path: `skill/${file.path}`, bytes: file.bytes, mode: 0o644 })),
    );
    const status = await publish(send, token, 'application/zip', Buffer.from(zip));
    if (status >= 300) refused.push(folder);
  }
  await publishDistractors(distractors.slice(half));
  return { refused };
}

/** A face answered by one GET: the ranked names read off its JSON. */
function getFace(send: Send, path: string, names: (body: unknown) => string[]): Face {
  return async (query, limit) => {
    const answer = await send({
      method: 'GET',
      url: `${path}?q=${encodeURIComponent(query)}&limit=${limit}`,
    });
    if (answer.status !== 200) throw new Error(`status ${answer.status}`);
    return names(answer.json());
  };
}

/** GET /skills?q= — the catalogue's search. */
export function catalogueFace(send: Send): Face {
  return getFace(send, '/skills', (body) =>
    (body as { items: { name: string }[] }).items.map((item) => item.name),
  );
}

/** GET /search — what the search_skills tool answers, over REST. */
export function searchSkillsFace(send: Send): Face {
  return getFace(send, '/search', (body) =>
    (body as { results: { name: string }[] }).results.map((result) => result.name),
  );
}

export async function measureFace(
  name: string,
  face: Face,
  queries: readonly EvalQuery[],
): Promise<FaceResult> {
  const times: number[] = [];
  let errors = 0;
  const results: { relevant: string[]; got: string[] }[] = [];
  for (const { q, relevant } of queries) {
    const started = performance.now();
    let got: string[] = [];
    try {
      got = await face(q, 10);
    } catch {
      errors += 1;
    }
    times.push(performance.now() - started);
    results.push({ relevant, got });
  }
  times.sort((a, b) => a - b);
  const misses = queries.flatMap(({ q }, at) => {
    const { relevant, got } = results[at]!;
    const rank = got.slice(0, 5).findIndex((n) => relevant.includes(n));
    return rank < 0 ? [{ q, relevant, got: got.slice(0, 5) }] : [];
  });
  return {
    face: name,
    ...score(results),
    p50Ms: times[Math.floor(times.length * 0.5)] ?? 0,
    p95Ms: times[Math.min(times.length - 1, Math.floor(times.length * 0.95))] ?? 0,
    errors,
    misses,
  };
}
