import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { describe, expect, it } from 'vitest';
import yazl from 'yazl';
import {
  createLimitTracker,
  normalizeBundle,
  readArchive,
  sniffArchiveKind,
} from '../../src/bundle/archive-read.js';
import { writeTarGz, writeZip } from '../../src/bundle/archive-write.js';
import { bundleDigest, fileDigest } from '../../src/bundle/digest.js';
import { normalizeEntryPath } from '../../src/bundle/paths.js';
import { BundleError, type BundleFile, type BundleLimits, DEFAULT_LIMITS } from '../../src/bundle/types.js';

const MiB = 1024 * 1024;
const SMALL: BundleLimits = {
  maxUncompressedBytes: 1 * MiB,
  maxFiles: 10,
  maxSkillMdBytes: 64 * 1024,
  maxFrontmatterBytes: 16 * 1024,
};

// ---------------------------------------------------------------------------------------------
// Archive builders: every archive used here is made in the test itself.
// ---------------------------------------------------------------------------------------------

interface RawTarEntry {
  name: string;
  body?: string | Buffer;
  type?: tar.Header['type'];
  linkname?: string;
  mode?: number;
}

async function drain(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** tar-stream's pack does not validate names or types, so it writes hostile entries as asked. */
async function tarOf(entries: RawTarEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const output = drain(pack);
  for (const entry of entries) {
    const body = entry.body === undefined ? undefined : Buffer.from(entry.body);
    pack.entry(
      {
        name: entry.name,
        type: entry.type ?? 'file',
        linkname: entry.linkname,
        mode: entry.mode ?? 0o644,
        size: body?.byteLength ?? 0,
      },
      body ?? Buffer.alloc(0),
    );
  }
  pack.finalize();
  return output;
}

const tarGzOf = async (entries: RawTarEntry[]) => gzipSync(await tarOf(entries));

interface RawZipEntry {
  name: string;
  body?: string | Buffer;
  mode?: number;
  compress?: boolean;
}

async function zipOf(entries: RawZipEntry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const output = drain(zip.outputStream);
  for (const entry of entries) {
    zip.addBuffer(Buffer.from(entry.body ?? ''), entry.name, {
      mode: entry.mode ?? 0o100644,
      compress: entry.compress ?? true,
    });
  }
  zip.end();
  return output;
}

/**
 * yazl refuses hostile names, so the zip is written with a same-length stand-in and the name is
 * then replaced in both the local header and the central directory (names are not checksummed).
 */
function renameInZip(zip: Buffer, standIn: string, hostile: string): Buffer {
  expect(Buffer.byteLength(standIn)).toBe(Buffer.byteLength(hostile));
  const from = Buffer.from(standIn);
  const to = Buffer.from(hostile);
  const patched = Buffer.from(zip);
  let replaced = 0;
  for (let at = patched.indexOf(from); at !== -1; at = patched.indexOf(from, at + 1)) {
    to.copy(patched, at);
    replaced += 1;
  }
  expect(replaced).toBe(2);
  return patched;
}

/** Marks every entry as traditionally encrypted (general purpose bit 0) in both headers. */
function markEncrypted(zip: Buffer): Buffer {
  const patched = Buffer.from(zip);
  for (const [signature, flagOffset] of [
    [0x04034b50, 6],
    [0x02014b50, 8],
  ] as const) {
    for (let at = 0; at + 4 <= patched.length; at += 1) {
      if (patched.readUInt32LE(at) === signature) {
        patched.writeUInt16LE(patched.readUInt16LE(at + flagOffset) | 1, at + flagOffset);
      }
    }
  }
  return patched;
}

function* zeros(total: number, chunk = MiB): Generator<Buffer> {
  const block = Buffer.alloc(chunk);
  for (let left = total; left > 0; left -= chunk) yield left >= chunk ? block : block.subarray(0, left);
}

/** A POSIX ustar header for one regular file, written by hand so a bomb's body can be streamed. */
function ustarHeader(name: string, size: number): Buffer {
  const header = Buffer.alloc(512);
  const octal = (value: number, at: number, width: number) =>
    header.write(`${value.toString(8).padStart(width - 1, '0')}\0`, at, 'ascii');
  header.write(name, 0, 'utf8');
  octal(0o644, 100, 8);
  octal(0, 108, 8);
  octal(0, 116, 8);
  octal(size, 124, 12);
  octal(0, 136, 12);
  header.write('0', 156, 'ascii');
  header.write('ustar\u000000', 257, 'ascii');
  header.fill(' ', 148, 156);
  const checksum = header.reduce((sum, byte) => sum + byte, 0);
  header.write(`${checksum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return header;
}

/** A tar.gz holding one file of `size` zero bytes, compressed chunk by chunk so the test never holds it. */
async function tarGzBomb(size: number): Promise<Buffer> {
  const gzip = createGzip({ level: 1 });
  const output = drain(gzip);
  Readable.from(
    (function* () {
      yield ustarHeader('SKILL.md', size);
      yield* zeros(size);
    })(),
  ).pipe(gzip);
  return output;
}

async function zipBomb(size: number): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const output = drain(zip.outputStream);
  zip.addBuffer(Buffer.from('---\nname: bomb\ndescription: x\n---\n'), 'SKILL.md');
  zip.addReadStream(Readable.from(zeros(size)), 'assets/zeros.bin', { compressionLevel: 1 });
  zip.end();
  return output;
}

// ---------------------------------------------------------------------------------------------
// Assertions
// ---------------------------------------------------------------------------------------------

function caught(run: () => unknown): BundleError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(BundleError);
    return error as BundleError;
  }
  throw new Error('expected a BundleError, nothing was thrown');
}

async function rejected(promise: Promise<unknown>): Promise<BundleError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(BundleError);
    return error as BundleError;
  }
  throw new Error('expected a BundleError, the promise resolved');
}

const skillMd = (name = 'demo') => `---\nname: ${name}\ndescription: A demo skill.\n---\n\n# Demo\n`;

const sampleFiles = (): BundleFile[] => [
  { path: 'SKILL.md', bytes: Buffer.from(skillMd()), mode: 0o644 },
  { path: 'scripts/run.sh', bytes: Buffer.from('#!/bin/sh\necho hi\n'), mode: 0o755 },
  { path: 'references/empty.txt', bytes: Buffer.alloc(0), mode: 0o644 },
  { path: 'assets/binary.bin', bytes: Buffer.from([0, 1, 2, 255, 254, 0x1f, 0x8b]), mode: 0o644 },
  { path: 'references/naïve café.md', bytes: Buffer.from('accents\n'), mode: 0o644 },
  { path: `references/${'deep/'.repeat(30)}long-name.md`, bytes: Buffer.from('long path\n'), mode: 0o644 },
];

const byPath = (files: BundleFile[]) =>
  Object.fromEntries(
    files.map((f) => [f.path, { bytes: Buffer.from(f.bytes).toString('hex'), mode: f.mode }]),
  );

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe('normalizeEntryPath', () => {
  it.each([
    ['SKILL.md', 'SKILL.md'],
    ['./SKILL.md', 'SKILL.md'],
    ['a//b/./c', 'a/b/c'],
    ['skill/', 'skill'],
    ['scripts\\run.py', 'scripts/run.py'],
    ['%2e%2e/x', '%2e%2e/x'],
    ['..foo/bar..', '..foo/bar..'],
    ['a/.../b', 'a/.../b'],
    ['références/été.md', 'références/été.md'],
    ['emoji/😀.txt', 'emoji/😀.txt'],
    ['x'.repeat(255), 'x'.repeat(255)],
  ])('accepts %j as %j', (raw, expected) => {
    expect(normalizeEntryPath(raw)).toBe(expected);
  });

  it.each([
    ['', 'empty'],
    ['.', 'names no file'],
    ['./', 'names no file'],
    ['/', 'absolute'],
    ['../evil', '".."'],
    ['a/../../x', '".."'],
    ['a/..', '".."'],
    ['..\\evil', '".."'],
    ['a\\..\\..\\x', '".."'],
    ['/etc/passwd', 'absolute'],
    ['//server/share/x', 'absolute'],
    ['\\\\server\\share\\x', 'absolute'],
    ['C:\\Windows\\x', 'drive'],
    ['c:x', 'drive'],
    ['C:/x', 'drive'],
    ['a\u0000b', 'control'],
    ['a\nb', 'control'],
    ['a\rb', 'control'],
    ['tab\there', 'control'],
    ['esc\u001b[31m', 'control'],
    ['del\u007f', 'control'],
    ['c1\u0085', 'control'],
    ['lone\ud800', 'UTF-8'],
    ['replacement\ufffd', 'UTF-8'],
    ['x'.repeat(256), '255 bytes'],
    [`a/${'é'.repeat(128)}`, '255 bytes'],
    [`${'abcdefghi/'.repeat(103)}x`, '1024 bytes'],
  ])('refuses %j (%s)', (raw, why) => {
    const error = caught(() => normalizeEntryPath(raw));
    expect(error.status).toBe(400);
    expect(error.message).toContain(why);
    expect(error.message).toContain(JSON.stringify(raw.slice(0, 200)).slice(0, 40));
  });
});

describe('digest', () => {
  it('hashes the documented canonical form', () => {
    const files: BundleFile[] = [
      { path: 'b.txt', bytes: Buffer.from('bee'), mode: 0o644 },
      { path: 'SKILL.md', bytes: Buffer.from('x'), mode: 0o644 },
    ];
    const canonical = Buffer.concat([
      Buffer.from('SKILL.md\u00001\u0000x'),
      Buffer.from('b.txt\u00003\u0000bee'),
    ]);
    const expected = `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
    expect(bundleDigest(files)).toBe(expected);
    expect(bundleDigest([...files].reverse())).toBe(expected);
    expect(fileDigest(Buffer.from('x'))).toBe(createHash('sha256').update('x').digest('hex'));
  });

  it('sorts by UTF-8 bytes, not UTF-16 code units', () => {
    const high = { path: '\uff5e', bytes: Buffer.from('1'), mode: 0o644 };
    const astral = { path: '😀', bytes: Buffer.from('2'), mode: 0o644 };
    const canonical = Buffer.concat([Buffer.from('\uff5e\u00001\u00001'), Buffer.from('😀\u00001\u00002')]);
    expect(bundleDigest([astral, high])).toBe(
      `sha256:${createHash('sha256').update(canonical).digest('hex')}`,
    );
  });

  it('ignores the mode and distinguishes content moved between files', () => {
    const a = [{ path: 'x', bytes: Buffer.from('ab'), mode: 0o644 }];
    expect(bundleDigest(a)).toBe(bundleDigest([{ ...a[0]!, mode: 0o755 }]));
    const split1 = [
      { path: 'x', bytes: Buffer.from('a'), mode: 0o644 },
      { path: 'y', bytes: Buffer.from('b'), mode: 0o644 },
    ];
    const split2 = [
      { path: 'x', bytes: Buffer.from(''), mode: 0o644 },
      { path: 'y', bytes: Buffer.from('ab'), mode: 0o644 },
    ];
    expect(bundleDigest(split1)).not.toBe(bundleDigest(split2));
  });
});

describe('sniffArchiveKind', () => {
  it('recognises formats by magic bytes', async () => {
    expect(sniffArchiveKind(await writeTarGz(sampleFiles()))).toBe('tar.gz');
    expect(sniffArchiveKind(await writeZip(sampleFiles()))).toBe('zip');
    expect(sniffArchiveKind(await zipOf([]))).toBe('zip');
    expect(sniffArchiveKind(await tarOf([{ name: 'SKILL.md', body: 'x' }]))).toBe('tar');
    expect(sniffArchiveKind(Buffer.from('---\nname: x\n---\n'))).toBeUndefined();
    expect(sniffArchiveKind(new Uint8Array(0))).toBeUndefined();
  });
});

describe('round trips', () => {
  it.each(['tar.gz', 'zip'] as const)('%s: write then read gives the same files and digest', async (kind) => {
    const files = sampleFiles();
    const bytes = kind === 'zip' ? await writeZip(files) : await writeTarGz(files);
    const read = await readArchive(bytes, kind, DEFAULT_LIMITS);
    const bundle = normalizeBundle(read, DEFAULT_LIMITS);
    expect(byPath(bundle.files)).toEqual(byPath(files));
    expect(bundle.folderName).toBeUndefined();
    expect(bundle.warnings).toEqual([]);
    expect(bundleDigest(bundle.files)).toBe(bundleDigest(files));
  });

  it.each(['tar.gz', 'zip'] as const)('%s: writing twice gives identical bytes', async (kind) => {
    const write = kind === 'zip' ? writeZip : writeTarGz;
    const first = await write(sampleFiles());
    const second = await write([...sampleFiles()].reverse());
    expect(second.equals(first)).toBe(true);
  });

  it('zip bytes do not depend on the time zone', async () => {
    const previous = process.env.TZ;
    try {
      process.env.TZ = 'Pacific/Kiritimati';
      const east = await writeZip(sampleFiles());
      process.env.TZ = 'America/Los_Angeles';
      const west = await writeZip(sampleFiles());
      expect(west.equals(east)).toBe(true);
    } finally {
      if (previous === undefined) delete process.env.TZ;
      else process.env.TZ = previous;
    }
  });

  it('gzip header carries no time and no platform', async () => {
    const gz = await writeTarGz(sampleFiles());
    expect([...gz.subarray(0, 4)]).toEqual([0x1f, 0x8b, 8, 0]);
    expect(gz.readUInt32LE(4)).toBe(0);
    expect(gz[9]).toBe(0xff);
  });

  it('a tar.gz and a zip of the same files have the same digest', async () => {
    const fromTar = normalizeBundle(
      await readArchive(await writeTarGz(sampleFiles()), 'tar.gz', DEFAULT_LIMITS),
      DEFAULT_LIMITS,
    );
    const fromZip = normalizeBundle(
      await readArchive(await writeZip(sampleFiles()), 'zip', DEFAULT_LIMITS),
      DEFAULT_LIMITS,
    );
    expect(bundleDigest(fromTar.files)).toBe(bundleDigest(fromZip.files));
  });

  it.each(['tar.gz', 'zip'] as const)(
    '%s: the prefix option wraps files in a folder that reading strips',
    async (kind) => {
      const write = kind === 'zip' ? writeZip : writeTarGz;
      const bytes = await write(sampleFiles(), { prefix: 'demo' });
      const read = await readArchive(bytes, kind, DEFAULT_LIMITS);
      expect(read.every((file) => file.path.startsWith('demo/'))).toBe(true);
      const bundle = normalizeBundle(read, DEFAULT_LIMITS);
      expect(bundle.folderName).toBe('demo');
      expect(bundleDigest(bundle.files)).toBe(bundleDigest(sampleFiles()));
    },
  );

  it('reads a plain tar and keeps the executable bit only', async () => {
    const bytes = await tarOf([
      { name: 'SKILL.md', body: skillMd(), mode: 0o600 },
      { name: 'run', body: 'x', mode: 0o4711 },
    ]);
    const files = await readArchive(bytes, 'tar', DEFAULT_LIMITS);
    expect(files.map((f) => [f.path, f.mode])).toEqual([
      ['SKILL.md', 0o644],
      ['run', 0o755],
    ]);
  });

  it('skips directory entries and reads stored (uncompressed) zip entries', async () => {
    const tarFiles = await readArchive(
      await tarGzOf([
        { name: './', type: 'directory' },
        { name: './skill/', type: 'directory' },
        { name: './skill/SKILL.md', body: skillMd() },
      ]),
      'tar.gz',
      DEFAULT_LIMITS,
    );
    expect(tarFiles.map((f) => f.path)).toEqual(['skill/SKILL.md']);
    const zipFiles = await readArchive(
      await zipOf([
        { name: 'skill/SKILL.md', body: skillMd(), compress: false },
        { name: 'skill/run.sh', body: 'echo', mode: 0o100755 },
      ]),
      'zip',
      DEFAULT_LIMITS,
    );
    expect(zipFiles.map((f) => [f.path, f.mode])).toEqual([
      ['skill/SKILL.md', 0o644],
      ['skill/run.sh', 0o755],
    ]);
  });
});

describe('normalizeBundle', () => {
  const file = (path: string, body = 'x'): BundleFile => ({ path, bytes: Buffer.from(body), mode: 0o644 });

  it('strips a single top folder and reports its name', () => {
    const bundle = normalizeBundle(
      [
        file('my-skill/SKILL.md', skillMd()),
        file('my-skill/scripts/a.py'),
        file('my-skill/references/x/SKILL.md'),
      ],
      DEFAULT_LIMITS,
    );
    expect(bundle.folderName).toBe('my-skill');
    expect(bundle.files.map((f) => f.path)).toEqual(['SKILL.md', 'references/x/SKILL.md', 'scripts/a.py']);
  });

  it('drops macOS and Windows junk with a single warning', async () => {
    const zip = await zipOf([
      { name: 'demo/SKILL.md', body: skillMd() },
      { name: 'demo/.DS_Store', body: 'junk' },
      { name: '__MACOSX/demo/._SKILL.md', body: 'junk' },
      { name: '__MACOSX/._demo', body: 'junk' },
      { name: 'demo/assets/Thumbs.db', body: 'junk' },
      { name: 'demo/assets/._logo.png', body: 'junk' },
    ]);
    const bundle = normalizeBundle(await readArchive(zip, 'zip', DEFAULT_LIMITS), DEFAULT_LIMITS);
    expect(bundle.files.map((f) => f.path)).toEqual(['SKILL.md']);
    expect(bundle.folderName).toBe('demo');
    expect(bundle.warnings).toHaveLength(1);
    expect(bundle.warnings[0]?.detail).toMatch(/ignored 5 operating-system files/);
  });

  it('accepts a lower-case skill.md, renaming it with a warning', () => {
    const bundle = normalizeBundle([file('Skill.md', skillMd()), file('a.txt')], DEFAULT_LIMITS);
    expect(bundle.files.map((f) => f.path)).toEqual(['SKILL.md', 'a.txt']);
    expect(bundle.warnings[0]?.detail).toContain('renamed "Skill.md"');
  });

  it('prefers the exact SKILL.md and keeps a case variant as an ordinary file', () => {
    const bundle = normalizeBundle([file('SKILL.md', skillMd()), file('skill.md', 'notes')], DEFAULT_LIMITS);
    expect(bundle.files.map((f) => f.path)).toEqual(['SKILL.md', 'skill.md']);
    // Kept, but one file on macOS and Windows: said in a warning.
    expect(bundle.warnings.map((w) => w.detail)).toEqual([
      expect.stringContaining('"SKILL.md" and "skill.md"'),
    ]);
  });

  it('refuses several skills in one upload', () => {
    const error = caught(() =>
      normalizeBundle([file('a/SKILL.md'), file('b/SKILL.md'), file('c/SKILL.md')], DEFAULT_LIMITS),
    );
    expect(error.status).toBe(422);
    expect(error.message).toBe('found SKILL.md in 3 folders (a/, b/, c/): publish one skill per upload');
    expect(error.errors.map((e) => e.path)).toEqual(['a/SKILL.md', 'b/SKILL.md', 'c/SKILL.md']);
  });

  it('refuses a SKILL.md nested deeper than one folder', () => {
    const error = caught(() => normalizeBundle([file('x/y/SKILL.md'), file('x/y/run.sh')], DEFAULT_LIMITS));
    expect(error.status).toBe(422);
    expect(error.message).toBe(
      'SKILL.md must be at the root of the bundle or inside a single top folder; found it at x/y/SKILL.md',
    );
  });

  it('refuses files outside the top folder, naming them', () => {
    const error = caught(() =>
      normalizeBundle([file('demo/SKILL.md'), file('README.md'), file('other/x.txt')], DEFAULT_LIMITS),
    );
    expect(error.status).toBe(422);
    expect(error.message).toContain('README.md, other/x.txt');
    expect(error.errors.map((e) => e.path)).toEqual(['README.md', 'other/x.txt']);
  });

  it('refuses an upload without SKILL.md', () => {
    const error = caught(() => normalizeBundle([file('README.md')], DEFAULT_LIMITS));
    expect(error.status).toBe(422);
    expect(error.message).toMatch(/^no SKILL.md in the upload: found 1 file \(README.md\)/);
    expect(caught(() => normalizeBundle([], DEFAULT_LIMITS)).message).toMatch(/no files/);
  });

  it('refuses hostile or duplicate multipart paths', () => {
    expect(caught(() => normalizeBundle([file('SKILL.md'), file('../x')], DEFAULT_LIMITS)).status).toBe(400);
    const duplicate = caught(() => normalizeBundle([file('SKILL.md'), file('./SKILL.md')], DEFAULT_LIMITS));
    expect(duplicate.status).toBe(400);
    expect(duplicate.message).toContain('"SKILL.md" more than once');
  });

  it('refuses a path that is both a file and a folder', () => {
    const error = caught(() => normalizeBundle([file('SKILL.md'), file('a'), file('a/b/c')], DEFAULT_LIMITS));
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      '"a" is both a file and a folder (it would contain "a/b/c"); rename one of them',
    );
  });

  it('keeps paths that differ only by case or Unicode normalisation, with a warning naming them', () => {
    const nfc = 'references/caf\u00e9.md';
    const nfd = 'references/cafe\u0301.md';
    const result = normalizeBundle(
      [file('SKILL.md'), file('README.md'), file('readme.md'), file(nfc), file(nfd), file('other.md')],
      DEFAULT_LIMITS,
    );
    expect(result.files).toHaveLength(6);
    const warning = result.warnings.find((item) => item.detail.includes('letter case'));
    expect(warning?.detail).toContain('"README.md" and "readme.md"');
    expect(warning?.detail).toContain(`"${nfc}" and "${nfd}"`);
    expect(warning?.detail).not.toContain('other.md');
    expect(normalizeBundle([file('SKILL.md'), file('a.md')], DEFAULT_LIMITS).warnings).toEqual([]);
  });

  it('re-checks the file count and the total size', () => {
    const many = Array.from({ length: 11 }, (_, i) => file(`f${i}.txt`));
    expect(caught(() => normalizeBundle([file('SKILL.md'), ...many], SMALL)).status).toBe(413);
    const big = { path: 'big.bin', bytes: Buffer.alloc(MiB), mode: 0o644 };
    const error = caught(() => normalizeBundle([file('SKILL.md'), big], SMALL));
    expect(error.status).toBe(413);
    expect(error.message).toContain('SKILLREG_MAX_BUNDLE_BYTES');
  });
});

describe('createLimitTracker', () => {
  it('throws 413 as soon as a limit is crossed', () => {
    const tracker = createLimitTracker({ ...SMALL, maxFiles: 2 });
    tracker.addFile('a');
    tracker.addFile('b');
    const files = caught(() => tracker.addFile('c'));
    expect(files.status).toBe(413);
    expect(files.message).toContain('more than 2 files');
    expect(files.message).toContain('SKILLREG_MAX_FILES');
    tracker.addBytes(MiB);
    const bytes = caught(() => tracker.addBytes(1));
    expect(bytes.status).toBe(413);
    expect(bytes.message).toContain('1 MiB (1048576 bytes)');
  });
});

describe('hostile archives', () => {
  const hostileNames = [
    ['../evil', 'xx/evil'],
    ['/etc/passwd', 'xetc/passwd'],
    ['a/../../x', 'a/xx/xx/x'],
    ['..\\..\\x', 'xx_xx_x'],
  ] as const;

  it.each(hostileNames)('tar.gz entry %j is refused with 400', async (name) => {
    const bytes = await tarGzOf([
      { name: 'SKILL.md', body: skillMd() },
      { name, body: 'pwned' },
    ]);
    const error = await rejected(readArchive(bytes, 'tar.gz', DEFAULT_LIMITS));
    expect(error.status).toBe(400);
    expect(error.message).toContain(JSON.stringify(name));
  });

  it.each(hostileNames)('zip entry %j is refused with 400', async (name, standIn) => {
    const clean = await zipOf([
      { name: 'SKILL.md', body: skillMd() },
      { name: standIn, body: 'pwned' },
    ]);
    const error = await rejected(readArchive(renameInZip(clean, standIn, name), 'zip', DEFAULT_LIMITS));
    expect(error.status).toBe(400);
    expect(error.message).toContain(JSON.stringify(name));
  });

  it.each([
    [{ name: 'link', type: 'symlink', linkname: '/etc/passwd' }, 'symbolic link'],
    [{ name: 'hard', type: 'link', linkname: 'SKILL.md' }, 'hard link'],
    [{ name: 'tty', type: 'character-device' }, 'character-device'],
    [{ name: 'disk', type: 'block-device' }, 'block-device'],
    [{ name: 'pipe', type: 'fifo' }, 'fifo'],
  ] as const)('tar %j is refused with 400', async (entry, what) => {
    const bytes = await tarGzOf([{ name: 'SKILL.md', body: skillMd() }, entry]);
    const error = await rejected(readArchive(bytes, 'tar.gz', DEFAULT_LIMITS));
    expect(error.status).toBe(400);
    expect(error.message).toContain(`"${entry.name}"`);
    expect(error.message).toContain(what);
  });

  it('zip symlink entries are refused with 400', async () => {
    const bytes = await zipOf([
      { name: 'SKILL.md', body: skillMd() },
      { name: 'escape', body: '/etc/passwd', mode: 0o120777 },
    ]);
    const error = await rejected(readArchive(bytes, 'zip', DEFAULT_LIMITS));
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      'entry "escape" is a symbolic link; links are not allowed in a skill bundle; include the file itself',
    );
  });

  it('zip special files and encrypted entries are refused with 400', async () => {
    const fifo = await zipOf([{ name: 'pipe', body: '', mode: 0o010644 }]);
    expect((await rejected(readArchive(fifo, 'zip', DEFAULT_LIMITS))).message).toContain('special file');
    const encrypted = markEncrypted(await zipOf([{ name: 'SKILL.md', body: skillMd() }]));
    const error = await rejected(readArchive(encrypted, 'zip', DEFAULT_LIMITS));
    expect(error.status).toBe(400);
    expect(error.message).toContain('encrypted');
  });

  it('duplicate entries are refused with 400', async () => {
    const bytes = await tarGzOf([
      { name: 'SKILL.md', body: skillMd() },
      { name: './SKILL.md', body: 'other' },
    ]);
    expect((await rejected(readArchive(bytes, 'tar.gz', DEFAULT_LIMITS))).status).toBe(400);
  });

  it('a gzip bomb is refused with 413 in bounded memory (it stops reading at the limit)', async () => {
    const bomb = await tarGzBomb(200 * MiB);
    expect(bomb.length).toBeLessThan(2 * MiB);
    const before = process.memoryUsage();
    const started = performance.now();
    const error = await rejected(readArchive(bomb, 'tar.gz', SMALL));
    const elapsed = performance.now() - started;
    const after = process.memoryUsage();
    expect(error.status).toBe(413);
    expect(error.message).toContain('1 MiB (1048576 bytes)');
    expect(error.message).toContain('SKILLREG_MAX_BUNDLE_BYTES');
    const grown = after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers);
    expect(grown).toBeLessThan(32 * MiB);
    console.info(
      `gzip bomb (200 MiB in ${bomb.length} bytes): 413 after ${elapsed.toFixed(1)} ms, +${(grown / MiB).toFixed(1)} MiB`,
    );
  });

  it('a zip bomb is refused with 413 in bounded memory (it stops reading at the limit)', async () => {
    const bomb = await zipBomb(200 * MiB);
    expect(bomb.length).toBeLessThan(2 * MiB);
    const before = process.memoryUsage();
    const started = performance.now();
    const error = await rejected(readArchive(bomb, 'zip', SMALL));
    const elapsed = performance.now() - started;
    const after = process.memoryUsage();
    expect(error.status).toBe(413);
    const grown = after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers);
    expect(grown).toBeLessThan(32 * MiB);
    console.info(
      `zip bomb (200 MiB in ${bomb.length} bytes): 413 after ${elapsed.toFixed(1)} ms, +${(grown / MiB).toFixed(1)} MiB`,
    );
  });

  it('a flood of directory headers is refused with 413', async () => {
    const entries: RawTarEntry[] = Array.from({ length: 12_000 }, (_, i) => ({
      name: `d${i}/`,
      type: 'directory',
    }));
    const bytes = await tarGzOf(entries);
    const error = await rejected(readArchive(bytes, 'tar.gz', SMALL));
    expect(error.status).toBe(413);
  });

  it.each(['tar.gz', 'zip'] as const)('%s: too many files is refused with 413', async (kind) => {
    const entries = Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.txt`, body: 'x' }));
    const bytes = kind === 'zip' ? await zipOf(entries) : await tarGzOf(entries);
    const error = await rejected(readArchive(bytes, kind, SMALL));
    expect(error.status).toBe(413);
    expect(error.message).toContain('more than 10 files');
    expect(error.message).toContain('SKILLREG_MAX_FILES');
  });
});

describe('unreadable archives', () => {
  it.each([
    ['tar.gz', Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9])],
    ['tar.gz', Buffer.alloc(0)],
    ['zip', Buffer.concat([Buffer.from('PK\u0003\u0004'), Buffer.alloc(100, 7)])],
    ['zip', Buffer.alloc(0)],
    ['tar', Buffer.alloc(700, 0x41)],
  ] as const)('corrupt %s bytes give 400', async (kind, bytes) => {
    const error = await rejected(readArchive(bytes, kind, DEFAULT_LIMITS));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(new RegExp(`^could not read the ${kind.replace('.', '\\.')} archive: `));
  });

  it.each(['tar.gz', 'zip', 'tar'] as const)('a truncated %s gives 400', async (kind) => {
    const files = [...sampleFiles(), { path: 'big.bin', bytes: Buffer.alloc(64 * 1024, 1), mode: 0o644 }];
    const whole =
      kind === 'zip'
        ? await writeZip(files)
        : kind === 'tar'
          ? await tarOf(files.map((f) => ({ name: f.path, body: Buffer.from(f.bytes) })))
          : await writeTarGz(files);
    for (const fraction of [0.3, 0.6, 0.9]) {
      const cut = whole.subarray(0, Math.floor(whole.length * fraction));
      const error = await rejected(readArchive(cut, kind, DEFAULT_LIMITS));
      expect(error.status).toBe(400);
      expect(error.message).toContain(`could not read the ${kind} archive`);
    }
  });

  it('a zip whose stored data was altered fails its CRC check', async () => {
    const bytes = await zipOf([{ name: 'SKILL.md', body: skillMd(), compress: false }]);
    const at = bytes.indexOf('A demo skill');
    bytes[at] = 'B'.charCodeAt(0);
    const error = await rejected(readArchive(bytes, 'zip', DEFAULT_LIMITS));
    expect(error.status).toBe(400);
    expect(error.message).toContain('CRC-32 mismatch');
  });

  it.each(['tar.gz', 'zip'] as const)(
    'an empty %s reads as no files and then fails with 422',
    async (kind) => {
      const bytes = kind === 'zip' ? await zipOf([]) : await tarGzOf([]);
      const files = await readArchive(bytes, kind, DEFAULT_LIMITS);
      expect(files).toEqual([]);
      const error = caught(() => normalizeBundle(files, DEFAULT_LIMITS));
      expect(error.status).toBe(422);
      expect(error.message).toMatch(/^no SKILL.md in the upload/);
    },
  );
});
