import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layering the code is navigated by (README, "Layout"): routes -> services -> repositories, one
 * read path for every face, caching in src/cache. These checks keep it from eroding unnoticed.
 */
const SRC = path.resolve(import.meta.dirname, '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Each relative import of a file, as a path below src/ (e.g. "render/prompt.ts"), with whether it is type-only. */
function importsOf(file: string): { target: string; typeOnly: boolean }[] {
  const text = readFileSync(file, 'utf8');
  const found: { target: string; typeOnly: boolean }[] = [];
  for (const match of text.matchAll(/^(import|export)(\s+type)?\s[^;]*?from\s+'(\.[^']+)'/gms)) {
    const resolved = path.resolve(path.dirname(file), match[3]!).replace(/\.js$/, '.ts');
    found.push({ target: path.relative(SRC, resolved), typeOnly: Boolean(match[2]) });
  }
  return found;
}

const files = sourceFiles(SRC);
const under = (folder: string) => files.filter((file) => path.relative(SRC, file).startsWith(`${folder}/`));

describe('source layout', () => {
  it('keeps every file in src/ under 600 lines', () => {
    const long = files
      .map((file) => ({
        file: path.relative(SRC, file),
        lines: readFileSync(file, 'utf8').split('\n').length,
      }))
      .filter((entry) => entry.lines > 600);
    expect(long).toEqual([]);
  });

  it('keeps repositories to queries: src/storage imports no renderer, cache, HTTP or bundle logic', () => {
    const offending = under('storage').flatMap((file) =>
      importsOf(file)
        .filter(
          ({ target, typeOnly }) =>
            /^(render|cache|http|services|mcp)\//.test(target) ||
            (target.startsWith('bundle/') && !(typeOnly && target === 'bundle/types.ts')),
        )
        .map(({ target }) => `${path.relative(SRC, file)} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('keeps ranking pure: src/search imports nothing but itself (no database, cache or HTTP)', () => {
    const offending = under('search').flatMap((file) =>
      importsOf(file)
        .filter(({ target }) => !target.startsWith('search/'))
        .map(({ target }) => `${path.relative(SRC, file)} -> ${target}`),
    );
    expect(under('search').length).toBeGreaterThan(0);
    expect(offending).toEqual([]);
  });

  it('keeps scanning pure: src/scan imports nothing but itself, and no node:fs, node:net or child_process', () => {
    const offending = under('scan').flatMap((file) => [
      ...importsOf(file)
        .filter(({ target }) => !target.startsWith('scan/'))
        .map(({ target }) => `${path.relative(SRC, file)} -> ${target}`),
      ...[
        ...readFileSync(file, 'utf8').matchAll(/from\s+'(node:(?:fs|net|http|https|child_process)[^']*)'/g),
      ].map((match) => `${path.relative(SRC, file)} -> ${match[1]}`),
    ]);
    expect(under('scan').length).toBeGreaterThan(0);
    expect(offending).toEqual([]);
  });

  it('keeps provenance pure: src/provenance imports nothing but itself and node:crypto', () => {
    const offending = under('provenance').flatMap((file) => [
      ...importsOf(file)
        .filter(({ target }) => !target.startsWith('provenance/'))
        .map(({ target }) => `${path.relative(SRC, file)} -> ${target}`),
      ...[...readFileSync(file, 'utf8').matchAll(/from\s+'(node:(?!crypto')[^']*)'/g)].map(
        (match) => `${path.relative(SRC, file)} -> ${match[1]}`,
      ),
    ]);
    expect(under('provenance').length).toBeGreaterThan(0);
    expect(offending).toEqual([]);
  });

  it('keeps MCP off the HTTP layer: src/mcp imports nothing from src/http', () => {
    const offending = under('mcp').flatMap((file) =>
      importsOf(file)
        .filter(({ target }) => target.startsWith('http/'))
        .map(({ target }) => `${path.relative(SRC, file)} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('keeps services and caches free of Fastify glue: neither imports src/http', () => {
    const offending = [...under('services'), ...under('cache')].flatMap((file) =>
      importsOf(file)
        .filter(({ target }) => target.startsWith('http/'))
        .map(({ target }) => `${path.relative(SRC, file)} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('hands services to route plugins as options: no route reads the registry or repositories off the app', () => {
    const offending = under('http/routes').filter((file) =>
      /\bapp\.(registry|repositories|readCache|database)\b/.test(readFileSync(file, 'utf8')),
    );
    expect(offending.map((file) => path.relative(SRC, file))).toEqual([]);
  });

  it('writes the LISTEN/NOTIFY protocol in one place', () => {
    const notifying = files.filter((file) => /pg_notify\(/.test(readFileSync(file, 'utf8')));
    expect(notifying.map((file) => path.relative(SRC, file))).toEqual(['db/change-notifications.ts']);
  });
});
