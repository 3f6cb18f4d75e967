import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as wire from '../src/wire/index.js';

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

  it('keeps faces on services: src/http/routes and src/mcp import nothing from src/storage but types', () => {
    const offending = [...under('http/routes'), ...under('mcp')].flatMap((file) =>
      importsOf(file)
        .filter(({ target, typeOnly }) => target.startsWith('storage/') && !typeOnly)
        .map(({ target }) => `${path.relative(SRC, file)} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('reaches repositories from no face: routes, plugins, MCP and the process go through services', () => {
    // The tokens, the audit log and the quarantine too have services (services/administration.ts).
    const faces = [...under('http'), ...under('mcp'), path.join(SRC, 'server.ts'), path.join(SRC, 'app.ts')];
    const reaching = faces.filter((file) => /\.repositories\b/.test(readFileSync(file, 'utf8')));
    expect(reaching.map((file) => path.relative(SRC, file)).sort()).toEqual([]);
  });

  it('lists skills in one place: only the read service queries the catalogue listing', () => {
    const calling = (pattern: RegExp) =>
      files
        .filter((file) => !path.relative(SRC, file).startsWith('storage/'))
        .filter((file) => pattern.test(readFileSync(file, 'utf8')))
        .map((file) => path.relative(SRC, file))
        .sort();
    // Pages by name, and the items of named skills (the search's hits, one skill of the vendor faces).
    expect(calling(/\bcatalogue\.catalogue\(/)).toEqual(['services/listing.ts']);
    expect(calling(/\.itemsOf\(/)).toEqual(['services/listing.ts', 'services/skill-search.ts']);
    // The in-memory copies behind /prompt and /tools read the agent catalogue; the listing owns them.
    expect(calling(/(?<!listing)\.agentCatalogue(Page|Since)?\(/)).toEqual([
      'cache/agent-catalogue.ts',
      'cache/agent-catalogues.ts',
      'render/prompt-selection.ts',
    ]);
    expect(calling(/\.catalogues\.of\(/)).toEqual(['services/listing.ts']);
    expect(calling(/new AgentCatalogues\(/)).toEqual(['services/registry.ts']);
  });

  it('decides what is live in one query: no other storage module lists skills by their latest tag', () => {
    // Each of these reads `latest` for something else than a listing of skills: the resolution of a
    // selector (skills), counts per namespace (namespaces), usage of current versions (usage), archives
    // still to build at start (archives). A vendor face or a new face listing on its own fails here.
    const readingLatest = under('storage')
      .filter((file) => /\bLATEST\b|'latest'/.test(readFileSync(file, 'utf8')))
      .map((file) => path.relative(SRC, file))
      .sort();
    expect(readingLatest).toEqual([
      'storage/archives-repository.ts',
      'storage/catalogue-repository.ts',
      'storage/namespaces-repository.ts',
      'storage/records.ts',
      'storage/skills-repository.ts',
      'storage/usage-repository.ts',
    ]);
    expect(readFileSync(path.join(SRC, 'storage/vendor-repository.ts'), 'utf8')).not.toMatch(
      /dist_tags|distTags/,
    );
  });

  it('describes every cached read once: ETags and read-cache tiers are derived in services/cached-read.ts', () => {
    const deriving = [...under('services'), ...under('http'), ...under('mcp')]
      .filter((file) =>
        /\b(revisionEtag|digestEtag)\(|\bcache\.(immutable|perSkill|catalogueWide|byLoads)\(/.test(
          readFileSync(file, 'utf8'),
        ),
      )
      .map((file) => path.relative(SRC, file))
      .sort();
    // The resolution keeps its lookups per skill (no ETag: it answers no face by itself).
    expect(deriving).toEqual(['services/cached-read.ts', 'services/resolution.ts']);
  });

  it('writes the LISTEN/NOTIFY protocol in one place', () => {
    const notifying = files.filter((file) => /pg_notify\(/.test(readFileSync(file, 'utf8')));
    expect(notifying.map((file) => path.relative(SRC, file))).toEqual(['db/change-notifications.ts']);
  });
});

/**
 * The wire (every document the registry answers with and every request body it takes) is written once,
 * in src/wire; everything else names it. These checks keep a second copy from creeping back.
 */
describe('wire types written once', () => {
  const WIRE_IMPORTS = ['domain/scope.ts', 'domain/audit-actions.ts'];

  /** Where a zod object may be written outside src/wire, and why it is not part of the wire. */
  const NOT_WIRE: Record<string, string> = {
    'config.ts': 'the environment variables',
    'services/scanning.ts': "the external scanner's output, a subprocess's protocol",
    'mcp/skills-extension.ts': 'the JSON-RPC requests the MCP SDK hands over unparsed',
    'http/schemas.ts': 'path parameters and queries shared by the routes',
    'http/read-mounts.ts': 'the path parameters of each mount',
    'http/vendor-faces.ts': "the vendor faces' path parameters",
  };

  const sourceAndTsx = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return sourceAndTsx(full);
      return /\.tsx?$/.test(entry.name) ? [full] : [];
    });
  const everySource = sourceAndTsx(SRC);
  const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

  it('keeps the wire pure: src/wire imports zod, itself and the pure namespace and audit rules only', () => {
    // The console compiles these types for the browser, and the CLI bundle must not pull the server in.
    const offending = under('wire').flatMap((file) => [
      ...importsOf(file)
        .filter(({ target }) => !target.startsWith('wire/') && !WIRE_IMPORTS.includes(target))
        .map(({ target }) => `${path.relative(SRC, file)} -> ${target}`),
      ...[...readFileSync(file, 'utf8').matchAll(/from\s+'([^.'][^']*)'/g)]
        .filter((match) => match[1] !== 'zod')
        .map((match) => `${path.relative(SRC, file)} -> ${match[1]}`),
    ]);
    expect(under('wire').length).toBeGreaterThan(0);
    expect(offending).toEqual([]);
  });

  it('writes object schemas outside src/wire only for path parameters and queries', () => {
    const offending = everySource
      .filter((file) => {
        const relative = path.relative(SRC, file);
        return !relative.startsWith('wire/') && !(relative in NOT_WIRE);
      })
      .flatMap((file) => {
        const text = readFileSync(file, 'utf8');
        return [...text.matchAll(/z\.(?:object|looseObject|strictObject)\((\{\}\))?/g)]
          .filter((match) => {
            if (match[1]) return false; // z.object({}): the empty parameters of an unprefixed mount
            const before = text.slice(text.lastIndexOf('\n', match.index) + 1, match.index);
            return !/(?:querystring|params):\s*$|const \w+(?:Query|Params) = $/.test(before);
          })
          .map((match) => `${path.relative(SRC, file)}:${lineOf(text, match.index)}`);
      });
    expect(offending).toEqual([]);
  });

  /** The value of each `key:` in a route file: a balanced {...} or the expression up to the next comma. */
  function valuesOf(text: string, key: string): { line: number; value: string }[] {
    return [...text.matchAll(new RegExp(`\\b${key}:\\s*`, 'g'))].map((match) => {
      const start = match.index + match[0].length;
      let depth = 0;
      let end = start;
      for (; end < text.length; end++) {
        const char = text[end]!;
        if ('([{'.includes(char)) depth++;
        else if (')]}'.includes(char)) {
          if (depth === 0) break;
          depth--;
          if (depth === 0 && text[start] === '{') {
            end++;
            break;
          }
        } else if (char === ',' && depth === 0) break;
      }
      return { line: lineOf(text, match.index), value: text.slice(start, end) };
    });
  }

  it('gives every route a wire schema for its responses and body, never one built in place', () => {
    // Only scalars stay in place: bytes (z.any), text (z.string) and no content (z.null).
    const built =
      /z\.(?:object|looseObject|strictObject|array|record|union|discriminatedUnion|tuple|literal|enum|intersection)\(|\.(?:extend|or|and)\(/;
    const offending = under('http/routes').flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return [...valuesOf(text, 'response'), ...valuesOf(text, 'body')]
        .filter(({ value }) => built.test(value))
        .map(({ line }) => `${path.relative(SRC, file)}:${line}`);
    });
    expect(offending).toEqual([]);
  });

  it("gives every MCP tool's output a wire schema, never fields written in place", () => {
    const offending = under('mcp').flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return valuesOf(text, 'outputSchema')
        .filter(({ value }) => /\bz\./.test(value))
        .map(({ line }) => `${path.relative(SRC, file)}:${line}`);
    });
    expect(offending).toEqual([]);
  });

  /** The key sets of every object in the wire's schemas, nested ones included, by where they are. */
  function wireObjects(): { where: string; keys: Set<string> }[] {
    const found: { where: string; keys: Set<string> }[] = [];
    const walk = (node: unknown, where: string) => {
      if (typeof node !== 'object' || node === null) return;
      const { properties } = node as { properties?: Record<string, unknown> };
      if (properties) found.push({ where, keys: new Set(Object.keys(properties)) });
      for (const [key, value] of Object.entries(node)) walk(value, `${where}.${key}`);
    };
    for (const [name, value] of Object.entries(wire)) {
      if (value instanceof z.ZodType) walk(z.toJSONSchema(value, { unrepresentable: 'any' }), name);
    }
    return found;
  }

  /** Every interface and object type alias declared in `source`, with its top-level keys. */
  function declaredObjects(source: string): { name: string; line: number; keys: string[] }[] {
    // Comments blanked (newlines kept, for line numbers): a colon in one is no key.
    const text = source.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (comment) => comment.replace(/[^\n]/g, ' '));
    return [...text.matchAll(/(?:interface (\w+)(?:<[^>]*>)? |type (\w+)(?:<[^>]*>)? = )\{/g)].map(
      (match) => {
        const keys: string[] = [];
        let depth = 0;
        let index = match.index + match[0].length - 1;
        let lineStart = true;
        for (; index < text.length; index++) {
          const char = text[index]!;
          if (char === '{') depth++;
          else if (char === '}' && --depth === 0) break;
          if (depth === 1 && lineStart) {
            const key = /^\s*(\w+)\??:/.exec(text.slice(index, text.indexOf('\n', index)));
            if (key) keys.push(key[1]!);
          }
          lineStart = char === '\n' || char === '{' || char === ';';
        }
        return { name: (match[1] ?? match[2])!, line: lineOf(text, match.index), keys };
      },
    );
  }

  it('declares no copy of a wire document in the client or the console: their types are inferred', () => {
    const objects = wireObjects();
    expect(objects.length).toBeGreaterThan(50);
    const checked = everySource.filter((file) => /^(client|console\/app)\//.test(path.relative(SRC, file)));
    const copies = checked.flatMap((file) =>
      declaredObjects(readFileSync(file, 'utf8'))
        // Three keys or more all found in one wire object: a hand-written (maybe partial) copy of it.
        .filter(({ keys }) => keys.length >= 3)
        .flatMap(({ name, line, keys }) => {
          const copied = objects.find((object) => keys.every((key) => object.keys.has(key)));
          return copied ? [`${path.relative(SRC, file)}:${line} ${name} copies ${copied.where}`] : [];
        }),
    );
    // Inline shapes as type arguments of the console's API calls count too: getJson<{ items: ... }>.
    const inline = checked.flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return [...text.matchAll(/\b(?:getJson|send)<\{/g)].map(
        (match) => `${path.relative(SRC, file)}:${lineOf(text, match.index)} inline type argument`,
      );
    });
    expect([...copies, ...inline]).toEqual([]);
  });
});
