import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Names a reader navigates by (README, "Layout"): a file's folder says what it is, a file name means
 * one thing, and a comment or document that names a file names one that exists.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) return [];
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

const sources = walk(SRC).filter((file) => /\.tsx?$/.test(file));

/** The files at src/'s top level: the entry points and the composition of the app. */
const TOP_LEVEL = ['app.ts', 'config.ts', 'server.ts'];

/**
 * File names that repeat because they are the same thing at two layers (a resource's routes and its
 * service, a plugin wiring a mechanism, a folder's index or types, a command running a script).
 */
const SAME_MEANING = new Set([
  'index.ts',
  'types.ts',
  'namespaces.ts',
  'usage.ts',
  'response-cache.ts',
  'metrics.ts',
  'migrate.ts',
  'validate.ts',
  // The ClawHub face: its routes, its service and its wire schemas.
  'clawhub.ts',
  // Trusted publishing: its routes, its service and its wire schemas.
  'trusted-publishing.ts',
]);

describe('layout and names', () => {
  it('keeps src/ top level to the entry points; everything else lives in a folder named for what it is', () => {
    const loose = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isFile() && !TOP_LEVEL.includes(entry.name))
      .map((entry) => entry.name);
    expect(loose).toEqual([]);
  });

  it('gives files that mean different things different names', () => {
    const byName = new Map<string, string[]>();
    for (const file of sources) {
      // The console's pages (.tsx) are named for the resource they show, as its routes are.
      const name = path.basename(file);
      byName.set(name, [...(byName.get(name) ?? []), path.relative(SRC, file)]);
    }
    const repeated = [...byName]
      .filter(([name, files]) => files.length > 1 && !SAME_MEANING.has(name))
      .map(([, files]) => files.join(' = '));
    expect(repeated).toEqual([]);
  });

  it('names only files that exist, in comments, docs and CI', () => {
    const texts = [
      ...sources,
      ...walk(path.join(ROOT, 'test')).filter((file) => file.endsWith('.ts')),
      ...walk(path.join(ROOT, 'docs')).filter((file) => file.endsWith('.md')),
      ...walk(path.join(ROOT, 'bench')).filter((file) => file.endsWith('.ts')),
      path.join(ROOT, 'README.md'),
      path.join(ROOT, 'Dockerfile'),
      path.join(ROOT, '.ci/run'),
    ];
    const missing: string[] = [];
    for (const file of texts) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(
        /(?<![\w./-])((?:src|test|bench|docs|migrations|scripts)\/[\w./-]+\.(?:tsx?|md|mjs|sql))\b/g,
      )) {
        const named = match[1]!;
        if (!existsSync(path.join(ROOT, named))) missing.push(`${path.relative(ROOT, file)}: ${named}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('keeps folders from importing each other both ways', () => {
    const edges = new Map<string, Set<string>>();
    for (const file of sources) {
      const relative = path.relative(SRC, file);
      if (relative.startsWith('console/app/')) continue;
      const from = relative.split('/')[0]!;
      for (const match of readFileSync(file, 'utf8').matchAll(
        /^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms,
      )) {
        const to = path.relative(SRC, path.resolve(path.dirname(file), match[1]!)).split('/')[0]!;
        if (to === from || to.startsWith('..')) continue;
        edges.set(from, (edges.get(from) ?? new Set()).add(to));
      }
    }
    const mutual = [...edges].flatMap(([from, targets]) =>
      [...targets].filter((to) => from < to && edges.get(to)?.has(from)).map((to) => `${from} <-> ${to}`),
    );
    expect(mutual).toEqual([]);
  });
});
