/**
 * Property-based tests of the bundle layer (fast-check): whatever bytes, archives, paths or
 * SKILL.md text arrive, the layer either refuses them with a BundleError or returns data that keeps
 * its promises (paths inside the bundle, a spec-valid name, a bounded description, lossless round
 * trips). Run counts keep the file well under 30 s; a failure prints the seed to replay it.
 */
import path from 'node:path';
import { crc32, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import tar from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ArchiveKind,
  normalizeBundle,
  readArchive,
  sniffArchiveKind,
} from '../../src/bundle/archive-read.js';
import { writeTarGz, writeZip } from '../../src/bundle/archive-write.js';
import { bundleDigest } from '../../src/bundle/digest.js';
import { MAX_PATH_BYTES, normalizeEntryPath } from '../../src/bundle/paths.js';
import { BundleError, type BundleFile, type BundleLimits } from '../../src/bundle/types.js';
import { isValidSkillName, MAX_DESCRIPTION_LENGTH, parseSkillMd } from '../../src/bundle/validate.js';

const KiB = 1024;
const LIMITS: BundleLimits = {
  maxUncompressedBytes: 256 * KiB,
  maxFiles: 50,
  maxSkillMdBytes: 64 * KiB,
  maxFrontmatterBytes: 16 * KiB,
};
const KINDS: ArchiveKind[] = ['tar.gz', 'tar', 'zip'];
/** PROPERTY_RUNS_SCALE=20 npx vitest run test/bundle/properties.test.ts searches deeper (minutes, not seconds). */
const SCALE = Number(process.env.PROPERTY_RUNS_SCALE ?? 1);
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
/** Per run: an archive read that takes longer than this counts as a hang. */
const RUN_TIMEOUT_MS = 2000;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** Runs `action`; a BundleError (or nothing) passes, anything else is rethrown for fast-check to report. */
async function onlyBundleErrors<T>(action: () => Promise<T> | T): Promise<T | BundleError> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof BundleError) {
      expect([400, 413, 415, 422]).toContain(error.status);
      expect(error.message.length).toBeGreaterThan(0);
      return error;
    }
    throw error;
  }
}

const ROOT = path.resolve('/srv/skills/some-skill');
const WIN_ROOT = 'C:\\skills\\some-skill';
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Everything a path coming out of the bundle layer promises. */
function expectSafePath(p: string): void {
  expect(typeof p).toBe('string');
  expect(p.length).toBeGreaterThan(0);
  expect(p.startsWith('/')).toBe(false);
  expect(p).not.toContain('\\');
  expect(p).not.toContain('\u0000');
  expect(p).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  expect(p).not.toMatch(LONE_SURROGATE);
  expect(p).not.toMatch(/^[A-Za-z]:/);
  expect(Buffer.byteLength(p)).toBeLessThanOrEqual(MAX_PATH_BYTES);
  const segments = p.split('/');
  expect(segments).not.toContain('..');
  expect(segments).not.toContain('.');
  expect(segments).not.toContain('');
  expect(normalizeEntryPath(p)).toBe(p);
  expect(path.resolve(ROOT, p).startsWith(ROOT + path.sep)).toBe(true);
  expect(path.posix.resolve('/root', p).startsWith('/root/')).toBe(true);
  expect(path.win32.resolve(WIN_ROOT, p).startsWith(`${WIN_ROOT}\\`)).toBe(true);
}

async function drain(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface RawEntry {
  name: string;
  body: Uint8Array;
  mode: number;
}

/** A tar written by tar-stream's pack, which does not validate names. */
async function rawTar(entries: RawEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const output = drain(pack);
  for (const entry of entries) {
    pack.entry({ name: entry.name, mode: entry.mode, size: entry.body.length }, Buffer.from(entry.body));
  }
  pack.finalize();
  return output;
}

/**
 * A stored (uncompressed) zip written by hand, because yazl refuses hostile names: any name bytes,
 * the UTF-8 flag on, Unix mode in the external attributes.
 */
function rawZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const body = Buffer.from(entry.body);
    const crc = crc32(body);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(body.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(body.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((0o100000 | entry.mode) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

async function archiveOf(kind: ArchiveKind, entries: RawEntry[]): Promise<Buffer> {
  if (kind === 'zip') return rawZip(entries);
  const plain = await rawTar(entries);
  return kind === 'tar' ? plain : gzipSync(plain);
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

/** Segments chosen to hit every rule of normalizeEntryPath, plus arbitrary text. */
const trickySegment = fc.constantFrom(
  '..',
  '.',
  '',
  '...',
  '.. ',
  ' ..',
  '..\u0000',
  '%2e%2e',
  '%2f',
  '..%2f',
  '\u2024\u2024',
  '\uff0e\uff0e',
  '\ufe52\ufe52',
  'C:',
  'c:x',
  '~',
  '$HOME',
  'SKILL.md',
  'skill.md',
  '__MACOSX',
  '._SKILL.md',
  '.DS_Store',
  'a\\..',
  '..\\..',
  '\\',
  '\u0000',
  '\n',
  '\u007f',
  '\u0085',
  '\ud800',
  '\udfff',
  '\ufffd',
  'e\u0301',
  '\u202e',
  'con',
  'x'.repeat(300),
);
const segment = fc.oneof(
  { weight: 4, arbitrary: trickySegment },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 6 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
);
const separator = fc.constantFrom('/', '/', '/', '\\', '//', '/./');
const hostilePath = fc
  .tuple(
    fc.constantFrom('', '', '', '/', '\\', './', '//', '\\\\', 'C:\\', 'c:/', '../'),
    fc.array(fc.tuple(separator, segment), { minLength: 1, maxLength: 6 }),
    fc.constantFrom('', '', '/', '\\'),
  )
  .map(
    ([lead, parts, trail]) =>
      lead + parts.map(([sep, seg], i) => (i === 0 ? seg : sep + seg)).join('') + trail,
  );
const anyPath = fc.oneof(
  { weight: 5, arbitrary: hostilePath },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }) },
);

const skillMdText = (name: string) =>
  `---\nname: ${name}\ndescription: A property test skill.\n---\n# Body\n`;

const hostileEntries = fc.array(
  fc.record({
    name: fc.oneof(
      { weight: 6, arbitrary: anyPath },
      { weight: 1, arbitrary: fc.constantFrom('SKILL.md', 'top/SKILL.md', 'skill.md', './SKILL.md') },
    ),
    body: fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.constant(new TextEncoder().encode(skillMdText('prop-skill'))),
    ),
    mode: fc.constantFrom(0o644, 0o755, 0o4755, 0o777),
  }),
  { maxLength: 8 },
);

/** A path that normalizeEntryPath keeps as it is: what a well-behaved uploader sends. */
const safeSegment = fc
  .oneof(
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }),
  )
  .filter((s) => !s.includes('/') && !s.includes('\\'));
const safePath = fc
  .array(safeSegment, { minLength: 1, maxLength: 4 })
  .map((segments) => segments.join('/'))
  .filter((p) => {
    try {
      return normalizeEntryPath(p) === p;
    } catch {
      return false;
    }
  });
const validFileSet = fc.uniqueArray(
  fc.record({
    path: safePath,
    bytes: fc.uint8Array({ maxLength: 2048 }),
    mode: fc.constantFrom(0o644, 0o755),
  }),
  { selector: (file) => file.path, minLength: 1, maxLength: 12 },
);

// ---------------------------------------------------------------------------------------------
// (1) Arbitrary bytes
// ---------------------------------------------------------------------------------------------

describe('arbitrary bytes', () => {
  const samples = new Map<ArchiveKind, Buffer>();

  beforeAll(async () => {
    const files: RawEntry[] = [
      { name: 'skill/SKILL.md', body: new TextEncoder().encode(skillMdText('sample')), mode: 0o644 },
      { name: 'skill/scripts/run.sh', body: new TextEncoder().encode('#!/bin/sh\necho hi\n'), mode: 0o755 },
      { name: 'skill/references/long.md', body: new Uint8Array(3000).fill(0x61), mode: 0o644 },
    ];
    const valid = files.map((f) => ({ path: f.name, bytes: f.body, mode: f.mode }));
    samples.set('tar.gz', await writeTarGz(valid));
    samples.set('tar', await rawTar(files));
    samples.set('zip', await writeZip(valid));
  });

  it('sniffArchiveKind accepts any bytes and answers a kind or undefined', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1024 }), (bytes) => {
        const kind = sniffArchiveKind(bytes);
        expect(kind === undefined || KINDS.includes(kind)).toBe(true);
      }),
      { numRuns: runs(1500) },
    );
  });

  it.each(KINDS)('readArchive(%s) on random bytes settles with files or a BundleError', async (kind) => {
    const magic = { 'tar.gz': [0x1f, 0x8b, 0x08], zip: [0x50, 0x4b, 0x03, 0x04], tar: [] }[kind];
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.uint8Array({ maxLength: 2048 }), async (withMagic, tail) => {
        const bytes = withMagic ? Buffer.concat([Buffer.from(magic), tail]) : Buffer.from(tail);
        const result = await onlyBundleErrors(() => readArchive(bytes, kind, LIMITS));
        if (!(result instanceof BundleError)) for (const file of result) expectSafePath(file.path);
      }),
      { numRuns: runs(450), timeout: RUN_TIMEOUT_MS },
    );
  });

  it.each(KINDS)(
    'readArchive(%s) on a corrupted real archive settles with files or a BundleError',
    async (kind) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
          fc.option(fc.nat(), { nil: undefined }),
          async (flips, cut) => {
            const sample = samples.get(kind)!;
            const bytes = Buffer.from(sample);
            for (const [at, value] of flips) bytes[at % bytes.length] = value;
            const input = cut === undefined ? bytes : bytes.subarray(0, cut % bytes.length);
            const result = await onlyBundleErrors(() => readArchive(input, kind, LIMITS));
            if (!(result instanceof BundleError)) {
              for (const file of result) expectSafePath(file.path);
              expect(result.length).toBeLessThanOrEqual(LIMITS.maxFiles);
              const total = result.reduce((sum, file) => sum + file.bytes.length, 0);
              expect(total).toBeLessThanOrEqual(LIMITS.maxUncompressedBytes);
            }
          },
        ),
        { numRuns: runs(600), timeout: RUN_TIMEOUT_MS },
      );
    },
  );
});

// ---------------------------------------------------------------------------------------------
// (2) Arbitrary archives
// ---------------------------------------------------------------------------------------------

describe('arbitrary archives', () => {
  it.each(KINDS)(
    '%s: readArchive + normalizeBundle refuse with a BundleError or yield only paths inside the bundle',
    async (kind) => {
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(hostileEntries, async (entries) => {
          const bytes = await archiveOf(kind, entries);
          const read = await onlyBundleErrors(() => readArchive(bytes, kind, LIMITS));
          if (read instanceof BundleError) return;
          for (const file of read) expectSafePath(file.path);
          const bundle = await onlyBundleErrors(() => normalizeBundle(read, LIMITS));
          if (bundle instanceof BundleError) return;
          accepted += 1;
          expect(bundle.files.some((file) => file.path === 'SKILL.md')).toBe(true);
          for (const file of bundle.files) {
            expectSafePath(file.path);
            expect([0o644, 0o755]).toContain(file.mode);
          }
          expect(new Set(bundle.files.map((file) => file.path)).size).toBe(bundle.files.length);
        }),
        { numRuns: runs(750), timeout: RUN_TIMEOUT_MS },
      );
      // The generator must reach the interesting part: some archives pass every check.
      expect(accepted).toBeGreaterThan(0);
    },
  );

  it('normalizeBundle on arbitrary (multipart-style) file lists', () => {
    fc.assert(
      fc.property(hostileEntries, (entries) => {
        const files: BundleFile[] = entries.map((e) => ({ path: e.name, bytes: e.body, mode: e.mode }));
        try {
          const bundle = normalizeBundle(files, LIMITS);
          for (const file of bundle.files) expectSafePath(file.path);
          if (bundle.folderName !== undefined) expectSafePath(bundle.folderName);
        } catch (error) {
          if (!(error instanceof BundleError)) throw error;
        }
      }),
      { numRuns: runs(3000) },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// (3) normalizeEntryPath
// ---------------------------------------------------------------------------------------------

describe('normalizeEntryPath', () => {
  it('refuses with a 400 BundleError or returns a safe path that it maps to itself', () => {
    fc.assert(
      fc.property(anyPath, (raw) => {
        let normalized: string;
        try {
          normalized = normalizeEntryPath(raw);
        } catch (error) {
          expect(error).toBeInstanceOf(BundleError);
          expect((error as BundleError).status).toBe(400);
          return;
        }
        expectSafePath(normalized);
        expect(normalizeEntryPath(normalized)).toBe(normalized);
        // Nothing is invented: the result is the input's own non-empty, non-"." segments.
        const segments = raw.replaceAll('\\', '/').split('/');
        expect(segments.filter((s) => s !== '' && s !== '.').join('/')).toBe(normalized);
      }),
      { numRuns: runs(9000) },
    );
  });

  it('refuses every path with a ".." segment, whatever the separators', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(separator, segment), { maxLength: 4 }),
        fc.array(fc.tuple(separator, segment), { maxLength: 4 }),
        (before, after) => {
          const join = (parts: [string, string][]) => parts.map(([sep, seg]) => sep + seg).join('');
          const raw = `${join(before)}/..${join(after)}`;
          expect(() => normalizeEntryPath(raw)).toThrow(BundleError);
        },
      ),
      { numRuns: runs(3000) },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// (4) SKILL.md parsing
// ---------------------------------------------------------------------------------------------

const MARKER = '__skillreg_property_evaluated';
const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Values and lines that YAML, gray-matter or a careless loader could treat as more than text. */
const yamlValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    'valid-name',
    'a',
    '"quoted: value"',
    "'single'",
    'Use when: the user asks',
    `!!js/function "function () { globalThis.${MARKER} = true }"`,
    `!<tag:yaml.org,2002:js/function> "function () { globalThis.${MARKER} = true }"`,
    '!!python/object/apply:os.system ["true"]',
    '!!js/undefined ""',
    '!!binary aGVsbG8=',
    '!!set { a, b }',
    '!!omap [ a: 1 ]',
    '&anchor value',
    '*anchor',
    '*undefined_alias',
    '[a, b, [c, *anchor]]',
    '{ a: 1, b: { c: 2 } }',
    '|\n  block\n  text',
    '>-\n  folded\n  text',
    '~',
    'null',
    '.inf',
    '0x1F',
    '1e400',
    '2024-01-01',
    'yes',
    '- item',
    '`tick`',
    '@at',
    '%percent',
    '"unterminated',
    '\t tab',
    'x'.repeat(1100),
    `${'['.repeat(40)}${']'.repeat(40)}`,
  ),
);
const yamlKey = fc.oneof(
  fc.constantFrom(
    'name',
    'description',
    'Name',
    'metadata',
    'license',
    'compatibility',
    'allowed-tools',
    '__proto__',
    'constructor',
    'prototype',
    '<<',
    '? complex',
    '"quoted key"',
    'version',
  ),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 10 }),
);
const yamlLine = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(yamlKey, yamlValue).map(([k, v]) => `${k}: ${v}`) },
  { weight: 1, arbitrary: fc.tuple(yamlKey, yamlKey, yamlValue).map(([k, k2, v]) => `${k}:\n  ${k2}: ${v}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('# comment', '', '---', '...', '- list item', '  indented: x', '\tkey: v'),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);
const opener = fc.constantFrom(
  '---',
  '---',
  '---',
  '---yaml',
  '---js',
  '---javascript',
  '--- coffee',
  '---json',
  '---toml',
  '----',
  '\ufeff---',
  '\n\n---',
);
const body = fc.oneof(
  fc.constant('# Title\n\nDo the thing.\n'),
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    '',
    '\n',
    '```\ncode\n```\n',
    '_a '.repeat(50),
    '![a]('.repeat(30),
    'Paragraph one.\n\nTwo.',
  ),
);
/** Often a valid name and description first, so that many documents get past them to the rest. */
const identityLines = fc.tuple(
  fc.constantFrom([], ['name: generated-skill'], ['name: "generated-skill"']),
  fc.constantFrom([], ['description: Does things when asked.'], ['description: >\n  Folded\n  text.']),
);
const skillMdDocument = fc
  .tuple(
    opener,
    identityLines,
    fc.array(yamlLine, { maxLength: 10 }),
    fc.constantFrom('\n---\n', '\r\n---\r\n', '\n--- \n', '\n'),
    body,
    fc.boolean(),
  )
  .map(([open, [name, description], lines, close, text, crlf]) => {
    const document = `${open}\n${[...name, ...description, ...lines].join('\n')}${close}${text}`;
    return crlf ? document.replaceAll('\n', '\r\n') : document;
  });
const sometimes = <T>(arbitrary: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
const parseContext = fc.record({
  folderName: sometimes(
    fc.oneof(fc.constantFrom('my-skill', 'My Skill', '..', ''), fc.string({ maxLength: 12 })),
  ),
  nameOverride: sometimes(
    fc.oneof(fc.constantFrom('generated-skill', '../../etc', 'a/b'), fc.string({ maxLength: 12 })),
  ),
  maxFrontmatterBytes: sometimes(fc.integer({ min: 1, max: 64 * KiB })),
});

/** Parses and checks the promises of a parsed skill; true when it parsed, false when it was refused. */
function expectValidParse(bytes: Uint8Array, ctx: Parameters<typeof parseSkillMd>[1]): boolean {
  let skill: ReturnType<typeof parseSkillMd>;
  try {
    skill = parseSkillMd(bytes, ctx);
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    expect([413, 422]).toContain(error.status);
    expect(error.errors.length).toBeGreaterThan(0);
    return false;
  }
  expect(isValidSkillName(skill.name)).toBe(true);
  expect(skill.name).toMatch(NAME_PATTERN);
  expect(skill.name.length).toBeLessThanOrEqual(64);
  const length = [...skill.description].length;
  expect(length).toBeGreaterThanOrEqual(1);
  expect(length).toBeLessThanOrEqual(MAX_DESCRIPTION_LENGTH);
  expect(skill.description.trim()).not.toBe('');
  expect(skill.frontmatter.name).toBe(skill.name);
  expect(skill.frontmatter.description).toBe(skill.description);
  expect(typeof skill.body).toBe('string');
  // Whatever the YAML said, the data is plain: no functions, nothing from a custom tag.
  expect(
    JSON.stringify(skill.frontmatter, (_, value) => {
      expect(typeof value).not.toBe('function');
      expect(typeof value).not.toBe('symbol');
      return value;
    }),
  ).toBeDefined();
  return true;
}

describe('parseSkillMd', () => {
  const evaluated = () => (globalThis as Record<string, unknown>)[MARKER];
  const polluted = () => ({}) as Record<string, unknown>;

  it('arbitrary bytes: a parsed skill or a BundleError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), parseContext, (bytes, ctx) => {
        expectValidParse(bytes, ctx);
      }),
      { numRuns: runs(1500) },
    );
  });

  it('arbitrary text after "---": a parsed skill or a BundleError', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 200 })),
        fc.boolean(),
        parseContext,
        (text, framed, ctx) => {
          const document = framed ? `---\n${text}\n---\nbody` : text;
          expectValidParse(new TextEncoder().encode(document), ctx);
        },
      ),
      { numRuns: runs(1500) },
    );
  });

  it('generated YAML-ish frontmatter: a parsed skill or a BundleError, and nothing is ever evaluated', () => {
    let parsed = 0;
    fc.assert(
      fc.property(skillMdDocument, parseContext, (document, ctx) => {
        if (expectValidParse(new TextEncoder().encode(document), ctx)) parsed += 1;
        expect(evaluated()).toBeUndefined();
        expect(polluted().polluted).toBeUndefined();
        expect(Object.getPrototypeOf({})).toBe(Object.prototype);
      }),
      { numRuns: runs(4500) },
    );
    expect(evaluated()).toBeUndefined();
    // The generator must reach both sides: many documents parse, many are refused.
    expect(parsed).toBeGreaterThan(runs(4500) / 20);
  });

  it('maxFrontmatterBytes: a 413 exactly when the block is over the limit, at any size', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 32, max: 4096 }),
        fc.integer({ min: -40, max: 40 }),
        fc.constantFrom('k: v', 'é: ü', '漢: 字'),
        (limit, delta, line) => {
          // The block is the text between the newline ending "---" and the newline before the closing "---".
          let block = '\nname: a\ndescription: d';
          while (Buffer.byteLength(block) + Buffer.byteLength(line) + 1 <= limit + delta)
            block += `\n${line}`;
          const size = Buffer.byteLength(block);
          const document = `---${block}\n---\nbody\n`;
          let status: number | undefined;
          try {
            parseSkillMd(new TextEncoder().encode(document), { maxFrontmatterBytes: limit });
          } catch (error) {
            if (!(error instanceof BundleError)) throw error;
            status = error.status;
            if (status === 413) {
              expect(error.message).toContain(`frontmatter is ${size} bytes; the limit is ${limit} bytes`);
              expect(error.message).toContain('SKILLREG_MAX_FRONTMATTER_BYTES');
            }
          }
          expect(status === 413).toBe(size > limit);
        },
      ),
      { numRuns: runs(600) },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// (5) Round trips
// ---------------------------------------------------------------------------------------------

describe('round trips', () => {
  const canonical = (files: readonly BundleFile[]) =>
    files
      .map((file) => ({ path: file.path, bytes: Buffer.from(file.bytes).toString('hex'), mode: file.mode }))
      .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));

  it('writeTarGz and writeZip read back to the same files and the same digest', async () => {
    await fc.assert(
      fc.asyncProperty(validFileSet, async (files) => {
        const digest = bundleDigest(files);
        for (const [kind, bytes] of [
          ['tar.gz', await writeTarGz(files)],
          ['zip', await writeZip(files)],
        ] as const) {
          expect(sniffArchiveKind(bytes)).toBe(kind);
          const read = await readArchive(bytes, kind, { ...LIMITS, maxFiles: 100 });
          expect(canonical(read)).toEqual(canonical(files));
          expect(bundleDigest(read)).toBe(digest);
        }
      }),
      { numRuns: runs(450), timeout: RUN_TIMEOUT_MS },
    );
  });

  it('a prefixed archive reads back under the prefix and normalises to the same digest', async () => {
    await fc.assert(
      fc.asyncProperty(validFileSet, async (files) => {
        const withSkill = [
          ...files.filter(
            (file) => file.path.toLowerCase() !== 'skill.md' && !file.path.startsWith('SKILL.md/'),
          ),
          { path: 'SKILL.md', bytes: new TextEncoder().encode(skillMdText('round-trip')), mode: 0o644 },
        ];
        const bundle = await onlyBundleErrors(async () =>
          normalizeBundle(
            await readArchive(await writeTarGz(withSkill, { prefix: 'round-trip' }), 'tar.gz', LIMITS),
            LIMITS,
          ),
        );
        // Refusals here are about the file set (e.g. a file that is also a folder), never about the archive.
        if (bundle instanceof BundleError) {
          expect(bundle.status).toBe(400);
          return;
        }
        expect(bundle.folderName).toBe('round-trip');
        expect(bundleDigest(bundle.files)).toBe(bundleDigest(normalizeBundle(withSkill, LIMITS).files));
      }),
      { numRuns: runs(300), timeout: RUN_TIMEOUT_MS },
    );
  });
});
