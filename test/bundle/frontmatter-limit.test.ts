/**
 * SKILLREG_MAX_FRONTMATTER_BYTES: the YAML frontmatter block is measured before it is parsed, because
 * YAML parsing costs CPU on the event loop (about 2 s for a 1 MiB block of short keys) while real
 * frontmatter stays under a few KiB. The limit counts the UTF-8 bytes between the `---` lines.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitFrontmatter } from '../../src/bundle/frontmatter.js';
import { BundleError, DEFAULT_LIMITS, type NormalizedBundle } from '../../src/bundle/types.js';
import { parseSkillMd, validateBundle } from '../../src/bundle/validate.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { auditLog, blobs, skills, skillVersions } from '../../src/db/schema.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const DEFAULT = 64 * KiB;
const utf8 = (text: string) => new TextEncoder().encode(text);

const HEAD = 'name: sized\ndescription: A skill with a large frontmatter.';

/** `head`, then key lines (`kN: v`, the costliest shape for the parser) until the block is exactly `bytes`. */
function blockOf(bytes: number, head = HEAD, line = (i: number) => `k${i}: v`): string {
  // The block runs from the newline that ends the opening --- to the newline before the closing ---.
  const parts = [`\n${head}`];
  let size = Buffer.byteLength(parts[0]!);
  for (let i = 0; ; i++) {
    const next = `\n${line(i)}`;
    const length = Buffer.byteLength(next);
    if (size + length > bytes) break;
    parts.push(next);
    size += length;
  }
  const missing = bytes - size;
  if (missing === 1) parts.push('\n');
  else if (missing >= 2) parts.push(`\n#${'x'.repeat(missing - 2)}`);
  const block = parts.join('');
  expect(Buffer.byteLength(block)).toBe(bytes);
  return block;
}

const documentWithBlock = (block: string, body = '# Body\n\nDo the thing.\n') => `---${block}\n---\n${body}`;

function refusal(run: () => unknown): BundleError {
  try {
    run();
  } catch (error) {
    if (error instanceof BundleError) return error;
    throw error;
  }
  throw new Error('expected a BundleError');
}

const bundleOf = (text: string): NormalizedBundle => ({
  files: [{ path: 'SKILL.md', bytes: utf8(text), mode: 0o644 }],
  folderName: 'from-folder',
  warnings: [],
});

describe('configuration', () => {
  it('defaults to 64 KiB and reads SKILLREG_MAX_FRONTMATTER_BYTES', () => {
    expect(DEFAULT_LIMITS.maxFrontmatterBytes).toBe(DEFAULT);
    expect(loadConfig({}).limits.maxFrontmatterBytes).toBe(DEFAULT);
    expect(loadConfig({ SKILLREG_MAX_FRONTMATTER_BYTES: '4096' }).limits.maxFrontmatterBytes).toBe(4096);
    expect(loadConfig({ SKILLREG_MAX_FRONTMATTER_BYTES: '' }).limits.maxFrontmatterBytes).toBe(DEFAULT);
  });

  it.each(['0', '-1', 'lots', '1.5'])('refuses SKILLREG_MAX_FRONTMATTER_BYTES=%s at start', (value) => {
    let error: unknown;
    try {
      loadConfig({ SKILLREG_MAX_FRONTMATTER_BYTES: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.join('\n')).toContain(`SKILLREG_MAX_FRONTMATTER_BYTES="${value}"`);
  });
});

describe('the check in the bundle layer', () => {
  it('accepts a block of exactly the limit and refuses one byte more with 413', () => {
    const limits = { ...DEFAULT_LIMITS, maxFrontmatterBytes: 2048 };
    const atLimit = validateBundle(bundleOf(documentWithBlock(blockOf(2048))), { limits });
    expect(atLimit.name).toBe('sized');
    const error = refusal(() => validateBundle(bundleOf(documentWithBlock(blockOf(2049))), { limits }));
    expect(error.status).toBe(413);
    expect(error.title).toBe('Frontmatter too large');
    expect(error.message).toBe(
      'SKILL.md frontmatter is 2049 bytes; the limit is 2048 bytes (2 KiB), configurable on the server with ' +
        'SKILLREG_MAX_FRONTMATTER_BYTES: keep the frontmatter to name, description and a few short keys, ' +
        'and move long material into the body or references/ files',
    );
    expect(error.errors).toEqual([{ path: 'SKILL.md', detail: error.message }]);
  });

  it('counts UTF-8 bytes, not characters, and ignores a BOM and the CR of CRLF line endings', () => {
    const limits = { ...DEFAULT_LIMITS, maxFrontmatterBytes: 64 };
    // 30 × "é" is 30 characters but 60 bytes, which with the rest of the block passes 64 bytes.
    const block = `\nname: a\ndescription: ${'é'.repeat(30)}`;
    expect(block.length).toBeLessThan(64);
    const accented = refusal(() => validateBundle(bundleOf(documentWithBlock(block)), { limits }));
    expect(accented.message).toContain(`frontmatter is ${Buffer.byteLength(block)} bytes`);
    // 63 bytes with LF; the same file saved with CRLF and a BOM is measured after both are removed.
    const plain = documentWithBlock(`\nname: a\ndescription: ${'d'.repeat(41)}`);
    const crlf = `\uFEFF${plain.replaceAll('\n', '\r\n')}`;
    expect(validateBundle(bundleOf(plain), { limits }).name).toBe('a');
    expect(validateBundle(bundleOf(crlf), { limits }).name).toBe('a');
  });

  it('the body does not count, however long', () => {
    const limits = { ...DEFAULT_LIMITS, maxFrontmatterBytes: 128 };
    const text = documentWithBlock('\nname: a\ndescription: d', 'word '.repeat(100_000));
    expect(validateBundle(bundleOf(text), { limits }).name).toBe('a');
  });

  it('a file without frontmatter, or with an unclosed one, is unaffected', () => {
    const limits = { ...DEFAULT_LIMITS, maxFrontmatterBytes: 16 };
    expect(validateBundle(bundleOf('No frontmatter here, just text.\n'), { limits }).description).toBe(
      'No frontmatter here, just text.',
    );
    const unclosed = refusal(() => validateBundle(bundleOf('---\nname: a\ndescription: d\n'), { limits }));
    expect(unclosed.status).toBe(422);
  });

  it('parseSkillMd and splitFrontmatter are unbounded unless given a limit (offline tools choose)', () => {
    const text = documentWithBlock(blockOf(100 * KiB));
    expect(parseSkillMd(utf8(text), {}).name).toBe('sized');
    expect(splitFrontmatter(text).data.name).toBe('sized');
    expect(refusal(() => splitFrontmatter(text, { maxFrontmatterBytes: DEFAULT })).status).toBe(413);
  });

  it('refuses a 1 MiB frontmatter without parsing it', () => {
    const limits = { ...DEFAULT_LIMITS, maxFrontmatterBytes: DEFAULT, maxSkillMdBytes: 2 * MiB };
    const text = documentWithBlock(blockOf(MiB));
    const error = refusal(() => validateBundle(bundleOf(text), { limits }));
    expect(error.status).toBe(413);
    expect(error.message).toContain(`frontmatter is ${MiB} bytes; the limit is ${DEFAULT} bytes (64 KiB)`);
    // The same block made invalid YAML by its first line is still refused for its size, not its syntax:
    // the size is measured before the parser sees a byte (the parser would answer 422).
    const broken = documentWithBlock(blockOf(MiB, 'name: [unclosed\ndescription: x'));
    const sized = refusal(() => validateBundle(bundleOf(broken), { limits }));
    expect(sized.status).toBe(413);
    const small = documentWithBlock('\nname: [unclosed\ndescription: x');
    expect(refusal(() => validateBundle(bundleOf(small), { limits })).status).toBe(422);
  });
});

describe('cost of the largest allowed frontmatter', () => {
  /** Shapes that are expensive for the yaml parser, each exactly at the default limit. */
  const shapes: Record<string, (bytes: number) => string> = {
    'short keys': (bytes) => blockOf(bytes),
    'one key repeated': (bytes) => blockOf(bytes, HEAD, () => 'k: v'),
    'list items': (bytes) => {
      const head = '\nname: sized\ndescription: d\nitems:';
      return head + '\n  - a'.repeat(Math.floor((bytes - head.length) / 6)).padEnd(bytes - head.length, ' ');
    },
    'flow sequence': (bytes) => {
      const head = '\nname: sized\ndescription: d\nitems: [';
      const items = 'a,'.repeat(Math.floor((bytes - head.length - 2) / 2));
      return `${head}${items}a]`.padEnd(bytes, ' ');
    },
    // Past ~1,100 errors the yaml package stops listing them and the repair pass gives up (422).
    'repairable values, 1,000 lines (repaired)': () => blockOf(22_000, HEAD, (i) => `k${i}: use when: asked`),
    'repairable values (too many to repair)': (bytes) =>
      blockOf(bytes, HEAD, (i) => `k${i}: use when: asked`),
    'unterminated quotes': (bytes) => blockOf(bytes, HEAD, (i) => `k${i}: "v`),
  };

  it('parses (or refuses with 422) each shape at 64 KiB, and prints what each costs', () => {
    const figures: string[] = [];
    for (const [shape, make] of Object.entries(shapes)) {
      const block = make(DEFAULT);
      expect(Buffer.byteLength(block)).toBeLessThanOrEqual(DEFAULT);
      const bytes = utf8(documentWithBlock(block));
      parseQuietly(bytes); // warm up the JIT so the figure is the steady-state cost
      let best = Number.POSITIVE_INFINITY;
      let outcome = '';
      for (let round = 0; round < 3; round++) {
        const started = performance.now();
        outcome = parseQuietly(bytes);
        best = Math.min(best, performance.now() - started);
      }
      figures.push(`${shape}: ${best.toFixed(0)} ms (${outcome})`);
    }
    console.info(`frontmatter up to ${DEFAULT} bytes, parse time (best of 3): ${figures.join('; ')}`);
  });

  function parseQuietly(bytes: Uint8Array): string {
    try {
      parseSkillMd(bytes, { maxFrontmatterBytes: DEFAULT });
      return 'parsed';
    } catch (error) {
      if (!(error instanceof BundleError)) throw error;
      expect(error.status).toBe(422);
      return `refused ${error.status}`;
    }
  }
});

const corpusRoot = fileURLToPath(new URL('../../../shared/skill-corpus', import.meta.url));
const seedRoot = fileURLToPath(new URL('../../skills-seed', import.meta.url));

describe('real frontmatter is far below the default', () => {
  const largestBlock = (root: string) =>
    readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name === 'SKILL.md')
      .map((entry) => {
        const text = readFileSync(join(entry.parentPath, entry.name), 'utf8').replace(/\r\n/g, '\n');
        const end = text.startsWith('---') ? text.indexOf('\n---', 3) : -1;
        return end === -1 ? 0 : Buffer.byteLength(text.slice(text.indexOf('\n'), end));
      })
      .reduce((max, size) => Math.max(max, size), 0);

  it('the bundled seed skills', () => {
    expect(largestBlock(seedRoot)).toBeLessThan(4 * KiB);
  });

  it.skipIf(!existsSync(corpusRoot))('the real-world corpus (../shared/skill-corpus)', () => {
    const largest = largestBlock(corpusRoot);
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThan(4 * KiB);
    console.info(`largest frontmatter in the corpus: ${largest} bytes`);
  });
});

describe('over HTTP', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_RATE_LIMIT_WRITES: '0' });
  });
  afterAll(async () => ctx?.close());

  const publishMarkdown = (text: string) =>
    ctx.app.inject({
      method: 'POST',
      url: '/skills',
      headers: { ...adminAuth, 'content-type': 'text/markdown' },
      payload: text,
    });

  async function rows() {
    const { db } = ctx.database;
    const n = async (table: typeof skills | typeof skillVersions | typeof blobs | typeof auditLog) =>
      (await db.select({ n: count() }).from(table))[0]!.n;
    return {
      skills: await n(skills),
      versions: await n(skillVersions),
      blobs: await n(blobs),
      audit: await n(auditLog),
    };
  }

  it('publishes a frontmatter of exactly the default limit', async () => {
    const res = await publishMarkdown(
      documentWithBlock(blockOf(DEFAULT, 'name: at-the-limit\ndescription: d')),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().name).toBe('at-the-limit');
  });

  it('refuses one byte more with 413 naming the limit and the variable, storing nothing', async () => {
    const before = await rows();
    const etag = (await ctx.app.inject('/skills')).headers.etag;
    const res = await publishMarkdown(
      documentWithBlock(blockOf(DEFAULT + 1, 'name: over-limit\ndescription: d')),
    );
    expect(res.statusCode).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({
      status: 413,
      title: 'Frontmatter too large',
      detail: expect.stringContaining(
        `SKILL.md frontmatter is ${DEFAULT + 1} bytes; the limit is ${DEFAULT} bytes (64 KiB), configurable on the server with SKILLREG_MAX_FRONTMATTER_BYTES`,
      ),
      errors: [{ path: 'SKILL.md', detail: expect.stringContaining('SKILLREG_MAX_FRONTMATTER_BYTES') }],
    });
    expect(await rows()).toEqual(before);
    expect((await ctx.app.inject('/skills')).headers.etag).toBe(etag);
  });
});
