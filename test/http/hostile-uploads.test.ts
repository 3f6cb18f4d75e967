/**
 * Hostile uploads and hostile file reads, end to end over HTTP (contract, "Errors: hostile input").
 *
 * Every archive is crafted here: tar with tar-stream's pack (which writes whatever header it is
 * given) or by hand, zip with yazl and byte patching where yazl refuses a name. Each refusal must be a
 * 4xx problem with a specific detail, come back in bounded time, and leave nothing stored: same
 * catalogue ETag, same row counts in every table a publish writes, no audit row.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { count } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import {
  auditLog,
  blobs,
  distTags,
  registryState,
  skills,
  skillVersions,
  versionArchives,
  versionFiles,
} from '../../src/db/schema.js';
import { files, multipartBody, publish, skillMd } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

const KiB = 1024;
const MiB = 1024 * KiB;

// Small limits keep every test fast; each refusal must name the value it was refused against.
const LIMITS = {
  bundle: 256 * KiB,
  files: 20,
  skillMd: 32 * KiB,
  frontmatter: 8 * KiB,
};
const BODY_LIMIT = LIMITS.bundle + MiB;

let ctx: TestApp;
let baseUrl: string;
const secret = `BETA-SECRET-${randomBytes(8).toString('hex')}`;

beforeAll(async () => {
  ctx = await createTestApp({
    SKILLREG_MAX_BUNDLE_BYTES: String(LIMITS.bundle),
    SKILLREG_MAX_FILES: String(LIMITS.files),
    SKILLREG_MAX_SKILL_MD_BYTES: String(LIMITS.skillMd),
    SKILLREG_MAX_FRONTMATTER_BYTES: String(LIMITS.frontmatter),
    SKILLREG_RATE_LIMIT_WRITES: '0',
  });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  // Two skills the traversal tests try to cross between.
  for (const res of [
    await publish(
      ctx.app,
      files({
        'SKILL.md': skillMd({ name: 'alpha', description: 'First skill.' }),
        'references/a.md': '# A\n',
      }),
    ),
    await publish(
      ctx.app,
      files({ 'SKILL.md': skillMd({ name: 'beta', description: 'Second skill.' }), 'secret.txt': secret }),
    ),
  ]) {
    expect(res.statusCode, res.body).toBe(201);
  }
});
afterAll(async () => ctx?.close());

// ---------------------------------------------------------------------------------------------
// Nothing stored
// ---------------------------------------------------------------------------------------------

async function snapshot() {
  const { db } = ctx.database;
  const rows = async (table: Parameters<ReturnType<typeof db.select>['from']>[0]) =>
    (await db.select({ n: count() }).from(table))[0]!.n;
  const catalogue = await ctx.app.inject('/skills?limit=500');
  expect(catalogue.statusCode).toBe(200);
  return {
    etag: catalogue.headers.etag,
    names: (catalogue.json().items as { name: string }[]).map((item) => item.name).sort(),
    skills: await rows(skills),
    versions: await rows(skillVersions),
    files: await rows(versionFiles),
    blobs: await rows(blobs),
    archives: await rows(versionArchives),
    tags: await rows(distTags),
    audit: await rows(auditLog),
    revision: (await db.select({ revision: registryState.revision }).from(registryState))[0]?.revision,
  };
}

interface Problem {
  status: number;
  title: string;
  detail: string;
  errors?: { path: string; detail: string }[];
}

/**
 * Sends a hostile request and checks the whole refusal: status, problem+json, the detail, the time
 * it took, and that not a single row changed anywhere.
 */
async function refused(
  send: () => Promise<LightMyRequestResponse>,
  status: number,
  ...details: (string | RegExp)[]
): Promise<Problem> {
  const before = await snapshot();
  const started = performance.now();
  const res = await send();
  const elapsed = performance.now() - started;
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = res.json() as Problem;
  expect(problem.status).toBe(status);
  for (const detail of details) {
    if (typeof detail === 'string') expect(problem.detail).toContain(detail);
    else expect(problem.detail).toMatch(detail);
  }
  expect(elapsed).toBeLessThan(2000);
  expect(await snapshot()).toEqual(before);
  return problem;
}

function post(body: Buffer | string, contentType: string, query = '') {
  return () =>
    ctx.app.inject({
      method: 'POST',
      url: `/skills${query}`,
      headers: { ...adminAuth, 'content-type': contentType },
      payload: body,
    });
}

const postTarGz = (bytes: Buffer) => post(bytes, 'application/gzip');
const postZip = (bytes: Buffer) => post(bytes, 'application/zip');
const postMarkdown = (text: string | Buffer, query = '') => post(text, 'text/markdown', query);
const postMultipart = (parts: { path: string; bytes: Buffer }[]) => {
  const { body, contentType } = multipartBody(parts.map((part) => ({ ...part, mode: 0o644 })));
  return post(body, contentType);
};

// ---------------------------------------------------------------------------------------------
// Archive builders
// ---------------------------------------------------------------------------------------------

const validSkillMd = (name = 'hostile') => skillMd({ name, description: 'Looks harmless.' });

async function drain(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface RawTarEntry {
  name: string;
  body?: string | Buffer;
  type?: tar.Header['type'];
  linkname?: string;
}

/** tar-stream's pack writes any name and type it is given, which is what a hostile tool does. */
async function tarGzOf(entries: RawTarEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const output = drain(pack);
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? '');
    pack.entry(
      {
        name: entry.name,
        type: entry.type ?? 'file',
        linkname: entry.linkname,
        mode: 0o644,
        size: body.length,
      },
      body,
    );
  }
  pack.finalize();
  return gzipSync(await output);
}

/** A POSIX ustar header written byte by byte: the name may be any bytes, the size anything. */
function ustarHeader(name: Buffer, size: number): Buffer {
  const header = Buffer.alloc(512);
  const octal = (value: number, at: number, width: number) =>
    header.write(`${value.toString(8).padStart(width - 1, '0')}\0`, at, 'ascii');
  name.copy(header, 0, 0, Math.min(name.length, 100));
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

function rawTarGz(entries: { name: Buffer; body: Buffer }[]): Buffer {
  const blocks = entries.flatMap(({ name, body }) => [
    ustarHeader(name, body.length),
    body,
    Buffer.alloc((512 - (body.length % 512)) % 512),
  ]);
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
}

function* zeros(total: number, chunk = MiB): Generator<Buffer> {
  const block = Buffer.alloc(chunk);
  for (let left = total; left > 0; left -= chunk) yield left >= chunk ? block : block.subarray(0, left);
}

/** A tar.gz with a valid SKILL.md and one file of `size` zeros, compressed as a stream. */
async function gzipBomb(size: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const output = drain(gzip);
  const skill = Buffer.from(validSkillMd('gzip-bomb'));
  Readable.from(
    (function* () {
      yield ustarHeader(Buffer.from('SKILL.md'), skill.length);
      yield Buffer.concat([skill, Buffer.alloc((512 - (skill.length % 512)) % 512)]);
      yield ustarHeader(Buffer.from('assets/zeros.bin'), size);
      yield* zeros(size);
      yield Buffer.alloc(1024);
    })(),
  ).pipe(gzip);
  return output;
}

interface RawZipEntry {
  name: string;
  body?: string | Buffer;
  mode?: number;
  directory?: boolean;
}

async function zipOf(entries: RawZipEntry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const output = drain(zip.outputStream);
  for (const entry of entries) {
    if (entry.directory) zip.addEmptyDirectory(entry.name);
    else
      zip.addBuffer(Buffer.from(entry.body ?? ''), entry.name, {
        mode: entry.mode ?? 0o100644,
        compress: false,
      });
  }
  zip.end();
  return output;
}

async function zipBomb(size: number): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const output = drain(zip.outputStream);
  zip.addBuffer(Buffer.from(validSkillMd('zip-bomb')), 'SKILL.md');
  zip.addReadStream(Readable.from(zeros(size)), 'assets/zeros.bin', { compressionLevel: 9 });
  zip.end();
  return output;
}

/** yazl refuses hostile names: write a same-length stand-in, then patch both headers that hold it. */
function renameInZip(zip: Buffer, standIn: string, hostile: string): Buffer {
  const from = Buffer.from(standIn);
  const to = Buffer.from(hostile);
  expect(to.length).toBe(from.length);
  const patched = Buffer.from(zip);
  let replaced = 0;
  for (let at = patched.indexOf(from); at !== -1; at = patched.indexOf(from, at + 1)) {
    to.copy(patched, at);
    replaced += 1;
  }
  expect(replaced).toBe(2);
  return patched;
}

/** A zip that says in both headers that an entry inflates to `declared` bytes, whatever it holds. */
function lieAboutSizes(zip: Buffer, name: string, declared: number): Buffer {
  const patched = Buffer.from(zip);
  const target = Buffer.from(name);
  let patchedHeaders = 0;
  for (let at = 0; at + 46 <= patched.length; at += 1) {
    const signature = patched.readUInt32LE(at);
    if (signature === 0x04034b50) {
      const nameLength = patched.readUInt16LE(at + 26);
      if (patched.subarray(at + 30, at + 30 + nameLength).equals(target)) {
        patched.writeUInt32LE(declared, at + 22);
        patchedHeaders += 1;
      }
    } else if (signature === 0x02014b50) {
      const nameLength = patched.readUInt16LE(at + 28);
      if (patched.subarray(at + 46, at + 46 + nameLength).equals(target)) {
        patched.writeUInt32LE(declared, at + 24);
        patchedHeaders += 1;
      }
    }
  }
  expect(patchedHeaders).toBeGreaterThanOrEqual(1);
  return patched;
}

/**
 * David Fifield's overlapping zip bomb in small: the central-directory record of `name` is copied
 * `copies` times under other names of the same length, every copy pointing at the same local entry.
 */
function overlapEntry(zip: Buffer, name: string, copies: number): Buffer {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const cdSize = zip.readUInt32LE(eocd + 12);
  const cdOffset = zip.readUInt32LE(eocd + 16);
  const entries = zip.readUInt16LE(eocd + 10);
  let record: Buffer | undefined;
  for (let at = cdOffset; at < cdOffset + cdSize; ) {
    const nameLength = zip.readUInt16LE(at + 28);
    const length = 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    if (zip.subarray(at + 46, at + 46 + nameLength).toString() === name)
      record = zip.subarray(at, at + length);
    at += length;
  }
  expect(record).toBeDefined();
  const extra = Array.from({ length: copies }, (_, i) => {
    const copy = Buffer.from(record!);
    const suffix = String(i + 1).padStart(2, '0');
    copy.write(suffix, 46 + name.length - 6, 'ascii'); // assets/zNN.bin: replace NN
    return copy;
  });
  const end = Buffer.from(zip.subarray(eocd));
  end.writeUInt16LE(entries + copies, 8);
  end.writeUInt16LE(entries + copies, 10);
  end.writeUInt32LE(cdSize + extra.reduce((sum, copy) => sum + copy.length, 0), 12);
  return Buffer.concat([zip.subarray(0, cdOffset + cdSize), ...extra, end]);
}

/** A multipart body whose part headers are written verbatim (RFC 5987 filenames, odd bytes). */
function rawMultipart(parts: { disposition: string; body: Buffer }[]): { body: Buffer; contentType: string } {
  const boundary = `----hostile${randomBytes(6).toString('hex')}`;
  const chunks = parts.flatMap((part) => [
    Buffer.from(`--${boundary}\r\nContent-Disposition: ${part.disposition}\r\n\r\n`, 'latin1'),
    part.body,
    Buffer.from('\r\n'),
  ]);
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

// ---------------------------------------------------------------------------------------------
// Paths that escape the bundle
// ---------------------------------------------------------------------------------------------

const ESCAPING_PATHS = [
  ['../evil.md', '".." segments would escape the bundle'],
  ['a/../../evil.md', '".." segments would escape the bundle'],
  ['/etc/passwd', 'absolute paths are not allowed'],
  ['..\\..\\evil.md', '".." segments would escape the bundle'],
  ['\\\\server\\share\\x', 'absolute paths are not allowed'],
  ['C:/Windows/evil.md', 'Windows drive paths are not allowed'],
  ['scripts/\u0000evil.sh', 'NUL or control character'],
] as const;

/** The same number of bytes, made only of letters: yazl accepts it and it appears nowhere else. */
const standInFor = (hostile: string) => hostile.replace(/[^A-Za-z0-9]/g, 'Q');

describe('archive entries that escape the bundle are refused with 400', () => {
  // A tar header ends its name at the first NUL, so "scripts/\0evil.sh" would read as "scripts/".
  const tarPaths = ESCAPING_PATHS.filter(([name]) => !name.includes('\u0000'));

  it.each(tarPaths)('tar.gz entry %j', async (name, reason) => {
    const archive = await tarGzOf([
      { name: 'SKILL.md', body: validSkillMd() },
      { name, body: 'pwned' },
    ]);
    await refused(postTarGz(archive), 400, JSON.stringify(name), reason);
  });

  it.each(ESCAPING_PATHS)('zip entry %j', async (name, reason) => {
    const clean = await zipOf([
      { name: 'SKILL.md', body: validSkillMd() },
      { name: standInFor(name), body: 'pwned' },
    ]);
    const archive = renameInZip(clean, standInFor(name), name);
    await refused(postZip(archive), 400, JSON.stringify(name), reason);
  });

  it.each(ESCAPING_PATHS)('multipart filename %j', async (name, reason) => {
    // The filename is a quoted string in the part header, where "\\" stands for one backslash.
    const received = name.replaceAll('\\\\', '\\');
    await refused(
      postMultipart([
        { path: 'SKILL.md', bytes: Buffer.from(validSkillMd()) },
        { path: name, bytes: Buffer.from('pwned') },
      ]),
      400,
      JSON.stringify(received),
      reason,
    );
  });

  it('multipart: an RFC 5987 encoded filename is decoded before it is checked', async () => {
    const { body, contentType } = rawMultipart([
      { disposition: 'form-data; name="files[]"; filename="SKILL.md"', body: Buffer.from(validSkillMd()) },
      {
        disposition: `form-data; name="files[]"; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd`,
        body: Buffer.from('pwned'),
      },
    ]);
    await refused(
      post(body, contentType),
      400,
      '"../../etc/passwd"',
      '".." segments would escape the bundle',
    );
  });

  it('a tar entry whose name is not UTF-8 is refused', async () => {
    const archive = rawTarGz([
      { name: Buffer.from('SKILL.md'), body: Buffer.from(validSkillMd()) },
      { name: Buffer.from([0x72, 0x65, 0x66, 0xff, 0xfe, 0x2e, 0x6d, 0x64]), body: Buffer.from('x') },
    ]);
    await refused(postTarGz(archive), 400, 'the path is not valid UTF-8');
  });

  it('a zip whose SKILL.md sits in a folder named ".." is refused, not unwrapped', async () => {
    const clean = await zipOf([{ name: 'QQ/SKILL.md', body: validSkillMd() }]);
    await refused(postZip(renameInZip(clean, 'QQ/SKILL.md', '../SKILL.md')), 400, '"../SKILL.md"');
  });
});

// ---------------------------------------------------------------------------------------------
// Links and special files
// ---------------------------------------------------------------------------------------------

describe('links and special files are refused with 400', () => {
  it.each([
    [{ name: 'escape', type: 'symlink', linkname: '/etc/passwd' }, 'a symbolic link to "/etc/passwd"'],
    [{ name: 'up', type: 'symlink', linkname: '../../beta/secret.txt' }, 'a symbolic link'],
    [{ name: 'hard', type: 'link', linkname: '/etc/shadow' }, 'a hard link to "/etc/shadow"'],
    [{ name: 'tty', type: 'character-device' }, 'a character-device entry'],
    [{ name: 'disk', type: 'block-device' }, 'a block-device entry'],
    [{ name: 'pipe', type: 'fifo' }, 'a fifo entry'],
  ] as const)('tar.gz %j', async (entry, what) => {
    const archive = await tarGzOf([{ name: 'SKILL.md', body: validSkillMd() }, entry]);
    const problem = await refused(postTarGz(archive), 400, `entry "${entry.name}" is ${what}`);
    expect(problem.errors).toEqual([{ path: entry.name, detail: problem.detail }]);
  });

  it('a plain (uncompressed) tar with a symlink', async () => {
    const pack = tar.pack();
    const output = drain(pack);
    pack.entry({ name: 'SKILL.md', mode: 0o644 }, validSkillMd());
    pack.entry({ name: 'link', type: 'symlink', linkname: '/etc/passwd', mode: 0o777 });
    pack.finalize();
    await refused(post(await output, 'application/x-tar'), 400, 'a symbolic link');
  });

  it.each([
    [0o120777, 'a symbolic link'],
    [0o010644, 'a special file (device, FIFO or socket)'],
    [0o020644, 'a special file (device, FIFO or socket)'],
    [0o060644, 'a special file (device, FIFO or socket)'],
    [0o140644, 'a special file (device, FIFO or socket)'],
  ])('zip entry with unix mode %o', async (mode, what) => {
    const archive = await zipOf([
      { name: 'SKILL.md', body: validSkillMd() },
      { name: 'special', body: '/etc/passwd', mode },
    ]);
    await refused(postZip(archive), 400, `entry "special" is ${what}`);
  });
});

// ---------------------------------------------------------------------------------------------
// Bombs and limits
// ---------------------------------------------------------------------------------------------

describe('bombs and limits are refused with 413, naming the limit', () => {
  const bundleLimit = [`${LIMITS.bundle} bytes`, 'SKILLREG_MAX_BUNDLE_BYTES'];

  it('a gzip bomb (64 MiB of zeros in a few KiB) stops at the limit while streaming', async () => {
    const bomb = await gzipBomb(64 * MiB);
    expect(bomb.length).toBeLessThan(BODY_LIMIT);
    const started = performance.now();
    await refused(postTarGz(bomb), 413, ...bundleLimit);
    console.info(
      `gzip bomb: 64 MiB in ${bomb.length} bytes refused in ${(performance.now() - started).toFixed(0)} ms`,
    );
  });

  it('a zip bomb (64 MiB of zeros) stops at the limit while inflating', async () => {
    const bomb = await zipBomb(64 * MiB);
    expect(bomb.length).toBeLessThan(BODY_LIMIT);
    const started = performance.now();
    await refused(postZip(bomb), 413, ...bundleLimit);
    console.info(
      `zip bomb: 64 MiB in ${bomb.length} bytes refused in ${(performance.now() - started).toFixed(0)} ms`,
    );
  });

  it('a zip bomb whose headers claim a tiny size is cut off where the claim ends', async () => {
    const honest = await zipBomb(16 * MiB);
    const bomb = lieAboutSizes(honest, 'assets/zeros.bin', 1000);
    const problem = await refused(postZip(bomb), 400, 'could not read the zip archive');
    expect(problem.detail).toMatch(/too many bytes|size/i);
  });

  it('a zip of overlapping entries (one compressed stream listed many times) stops at the limit', async () => {
    const zip = new yazl.ZipFile();
    const output = drain(zip.outputStream);
    zip.addBuffer(Buffer.from(validSkillMd('overlap')), 'SKILL.md');
    zip.addBuffer(Buffer.alloc(100 * KiB), 'assets/z00.bin');
    zip.end();
    // 11 central-directory records share one 100 KiB deflate stream: 1.1 MiB to inflate from ~200 bytes.
    const bomb = overlapEntry(await output, 'assets/z00.bin', 10);
    await refused(postZip(bomb), 413, ...bundleLimit);
  });

  it.each(['tar.gz', 'zip', 'multipart'] as const)('too many files (%s)', async (format) => {
    const entries = [
      { name: 'SKILL.md', body: validSkillMd() },
      ...Array.from({ length: LIMITS.files }, (_, i) => ({ name: `references/f${i}.md`, body: 'x' })),
    ];
    const send =
      format === 'tar.gz'
        ? postTarGz(await tarGzOf(entries))
        : format === 'zip'
          ? postZip(await zipOf(entries))
          : postMultipart(entries.map((entry) => ({ path: entry.name, bytes: Buffer.from(entry.body) })));
    await refused(send, 413, `more than ${LIMITS.files} files`, 'SKILLREG_MAX_FILES');
  });

  it('a zip listing a flood of folder entries is refused before they are walked', async () => {
    const entries = [
      { name: 'SKILL.md', body: validSkillMd() },
      ...Array.from({ length: 400 }, (_, i) => ({ name: `d${i}`, directory: true })),
    ];
    await refused(postZip(await zipOf(entries)), 413, 'lists 401 entries', 'SKILLREG_MAX_FILES');
  });

  it('a tar.gz flood of folder headers is refused', async () => {
    const entries: RawTarEntry[] = [
      { name: 'SKILL.md', body: validSkillMd() },
      ...Array.from({ length: 10_000 }, (_, i): RawTarEntry => ({ name: `d${i}/`, type: 'directory' })),
    ];
    // 5 MiB of headers: over the stream cap of the bundle limit + 4 KiB per allowed file + 4 MiB.
    const archive = await tarGzOf(entries);
    await refused(postTarGz(archive), 413, ...bundleLimit);
  });

  it.each([
    ['application/gzip', 'tar.gz'],
    ['application/zip', 'zip'],
    ['text/markdown', 'markdown'],
  ])('a %s request body over the body limit', async (contentType) => {
    const body = randomBytes(BODY_LIMIT + 1);
    await refused(post(body, contentType), 413, `${BODY_LIMIT} bytes`, 'SKILLREG_MAX_BUNDLE_BYTES');
  });

  it('a multipart file over the bundle limit', async () => {
    await refused(
      postMultipart([
        { path: 'SKILL.md', bytes: Buffer.from(validSkillMd()) },
        { path: 'assets/big.bin', bytes: Buffer.alloc(LIMITS.bundle + 1, 1) },
      ]),
      413,
      ...bundleLimit,
    );
  });

  it('several multipart files that together pass the bundle limit', async () => {
    await refused(
      postMultipart([
        { path: 'SKILL.md', bytes: Buffer.from(validSkillMd()) },
        ...Array.from({ length: 3 }, (_, i) => ({
          path: `assets/part${i}.bin`,
          bytes: Buffer.alloc(LIMITS.bundle / 2, 1),
        })),
      ]),
      413,
      ...bundleLimit,
    );
  });

  const oversizeSkillMd = () => validSkillMd().replace('Do the thing', 'x'.repeat(LIMITS.skillMd));
  const skillMdLimit = [`the limit is ${LIMITS.skillMd} bytes`, 'SKILLREG_MAX_SKILL_MD_BYTES'];

  it('a SKILL.md over SKILLREG_MAX_SKILL_MD_BYTES (text/markdown)', async () => {
    await refused(postMarkdown(oversizeSkillMd()), 413, ...skillMdLimit);
  });

  it('a SKILL.md over SKILLREG_MAX_SKILL_MD_BYTES (inside a tar.gz)', async () => {
    const archive = await tarGzOf([{ name: 'skill/SKILL.md', body: oversizeSkillMd() }]);
    await refused(postTarGz(archive), 413, ...skillMdLimit);
  });

  it('a frontmatter over SKILLREG_MAX_FRONTMATTER_BYTES, refused before it is parsed', async () => {
    const padding = Array.from({ length: 1500 }, (_, i) => `k${i}: v`).join('\n');
    expect(padding.length).toBeGreaterThan(LIMITS.frontmatter);
    const text = `---\nname: big-frontmatter\ndescription: d\n${padding}\n---\n# Body\n`;
    await refused(
      postMarkdown(text),
      413,
      `the limit is ${LIMITS.frontmatter} bytes`,
      'SKILLREG_MAX_FRONTMATTER_BYTES',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// SKILL.md contents
// ---------------------------------------------------------------------------------------------

describe('hostile SKILL.md contents', () => {
  const invalidUtf8 = Buffer.concat([
    Buffer.from('---\nname: bad-bytes\ndescription: d\n---\n'),
    Buffer.from([0xc3, 0x28, 0xa0, 0xa1]),
    Buffer.from('\n'),
  ]);

  it('SKILL.md that is not UTF-8 is refused with 422 and the offset (text/markdown)', async () => {
    await refused(postMarkdown(invalidUtf8), 422, 'SKILL.md is not valid UTF-8', 'offset 39, line 5');
  });

  it('SKILL.md that is not UTF-8 is refused with 422 (tar.gz, multipart)', async () => {
    await refused(
      postTarGz(await tarGzOf([{ name: 'SKILL.md', body: invalidUtf8 }])),
      422,
      'not valid UTF-8',
    );
    await refused(postMultipart([{ path: 'SKILL.md', bytes: invalidUtf8 }]), 422, 'not valid UTF-8');
  });

  it('a UTF-16 SKILL.md is refused rather than stored as mojibake', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(validSkillMd(), 'utf16le')]);
    await refused(postMarkdown(utf16), 422, 'not valid UTF-8', 'offset 0');
  });

  it.each(['../../etc', 'a/b', '..', '/etc/passwd', 'a\\\\b', '.hidden', 'A/../B'])(
    'name: %j is refused with 422',
    async (name) => {
      const text = `---\nname: ${JSON.stringify(name)}\ndescription: d\n---\n# Body\n`;
      const problem = await refused(postMarkdown(text), 422, /name '.*' must /);
      expect(problem.errors?.[0]?.path).toBe('SKILL.md#name');
    },
  );

  it('?name= that is a path is refused with 422', async () => {
    const text = '---\ndescription: d\n---\n# Body\n';
    await refused(postMarkdown(text, '?name=..%2F..%2Fetc'), 422, "cannot be used instead: name '../../etc'");
  });

  it.each(['js', 'javascript', ' js', 'JS', 'coffee', 'json'])(
    '---%s frontmatter is refused with 422 and never evaluated',
    async (language) => {
      const marker = `__skillreg_hostile_${randomBytes(4).toString('hex')}`;
      const file = path.join(os.tmpdir(), `${marker}.txt`);
      const code = [
        `{ name: (globalThis.${marker} = true,`,
        `  require('fs').writeFileSync(${JSON.stringify(file)}, 'pwned'),`,
        `  process.mainModule && process.mainModule.require('fs').writeFileSync(${JSON.stringify(file)}, 'pwned'),`,
        `  'x'), description: 'd' }`,
      ].join('\n');
      try {
        await refused(
          postMarkdown(`---${language}\n${code}\n---\n# Body\n`),
          422,
          `frontmatter language '${language.trim()}' is not allowed`,
        );
        expect((globalThis as Record<string, unknown>)[marker]).toBeUndefined();
        expect(existsSync(file)).toBe(false);
      } finally {
        rmSync(file, { force: true });
      }
    },
  );

  it('a YAML alias bomb (billion laughs) is refused with 422 in bounded time', async () => {
    const levels = [`a: &a [${Array(9).fill('"lol"').join(',')}]`];
    for (let i = 1; i < 10; i++) {
      const previous = String.fromCharCode(96 + i);
      const current = String.fromCharCode(97 + i);
      levels.push(`${current}: &${current} [${Array(9).fill(`*${previous}`).join(',')}]`);
    }
    const text = `---\nname: lol-bomb\ndescription: d\n${levels.join('\n')}\n---\n# Body\n`;
    await refused(postMarkdown(text), 422, 'aliases', 'expand beyond 100');
  });

  it('frontmatter nested thousands of levels deep is refused with 422, not a stack overflow', async () => {
    const depth = 3000;
    const text = `---\nname: deep\ndescription: d\nx: ${'['.repeat(depth)}${']'.repeat(depth)}\n---\n# Body\n`;
    await refused(postMarkdown(text), 422, 'not valid YAML');
  });

  it('frontmatter that is a YAML list or scalar is refused with 422', async () => {
    await refused(postMarkdown('---\n- a\n- b\n---\n# Body\n'), 422, 'it is a list');
  });
});

describe('frontmatter that would run code if a YAML loader evaluated tags', () => {
  it('js and python tags are kept as text, never evaluated, and no prototype is touched', async () => {
    const marker = `__skillreg_tag_${randomBytes(4).toString('hex')}`;
    const text = [
      '---',
      'name: tagged-values',
      'description: d',
      `run: !!js/function "function () { globalThis.${marker} = true }"`,
      `undef: !!js/undefined ''`,
      `shell: !!python/object/apply:os.system ["touch /tmp/${marker}"]`,
      `regexp: !!js/regexp /(a+)+$/`,
      '__proto__:',
      '  polluted: yes',
      'constructor:',
      '  prototype:',
      '    polluted: yes',
      '---',
      '# Body',
      '',
    ].join('\n');
    const res = await postMarkdown(text)();
    expect([201, 422]).toContain(res.statusCode);
    expect((globalThis as Record<string, unknown>)[marker]).toBeUndefined();
    expect(existsSync(`/tmp/${marker}`)).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    if (res.statusCode === 201) {
      const detail = await ctx.app.inject('/skills/tagged-values');
      const frontmatter = detail.json().frontmatter as Record<string, unknown>;
      expect(typeof frontmatter.run).toBe('string');
      expect(frontmatter.shell).toEqual([`touch /tmp/${marker}`]);
    }
  });

  it('a 30 KB paragraph of unclosed Markdown markers still publishes quickly (no regex backtracking)', async () => {
    // No description: the body's first paragraph is used, which strips inline Markdown.
    for (const [name, line] of [
      ['redos-underscores', '_a '.repeat(10_000)],
      ['redos-images', '![a]('.repeat(5_000)],
      ['redos-brackets', `x ${'<['.repeat(15_000)}`],
    ] as const) {
      const started = performance.now();
      const res = await postMarkdown(`---\nname: ${name}\n---\n${line}\n`)();
      const elapsed = performance.now() - started;
      expect(res.statusCode, res.body).toBe(201);
      expect(elapsed).toBeLessThan(2000);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// File reads
// ---------------------------------------------------------------------------------------------

/** A raw request over a socket: unlike app.inject, nothing normalises `..` or `%2e%2e` on the way. */
function rawGet(target: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(baseUrl);
    const request = http.request(
      { host: url.hostname, port: url.port, path: target, method: 'GET' },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            type: String(response.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks).toString('latin1'),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end();
  });
}

describe('file reads never leave their bundle', () => {
  const TRAVERSALS = [
    '../beta/files/secret.txt',
    '../../beta/files/secret.txt',
    '..%2fbeta%2ffiles%2fsecret.txt',
    '..%2F..%2Fbeta%2Ffiles%2Fsecret.txt',
    '%2e%2e/%2e%2e/beta/files/secret.txt',
    '%2e%2e%2f%2e%2e%2fbeta%2ffiles%2fsecret.txt',
    '%2E%2E%2F%2E%2E%2Fbeta%2Ffiles%2Fsecret.txt',
    '%252e%252e%252f%252e%252e%252fbeta%252ffiles%252fsecret.txt',
    '..%252f..%252fbeta%252ffiles%252fsecret.txt',
    '..%5c..%5cbeta%5cfiles%5csecret.txt',
    '..\\..\\beta\\files\\secret.txt',
    '%5c..%5c..%5cbeta%5csecret.txt',
    '%c0%ae%c0%ae/%c0%ae%c0%ae/beta/files/secret.txt',
    '%c0%ae%c0%ae%c0%af%c0%ae%c0%ae%c0%afbeta',
    '%e0%80%ae%e0%80%ae/secret.txt',
    '..%c0%af..%c0%afbeta',
    '..%00/secret.txt',
    'secret.txt%00.md',
    'references%2fa.md%00',
    '%00',
    '%0a..%0a',
    '%E2%80%A4%E2%80%A4/%E2%80%A4%E2%80%A4/beta/files/secret.txt',
    '%EF%BC%8E%EF%BC%8E%EF%BC%8F%EF%BC%8E%EF%BC%8E%EF%BC%8Fbeta',
    '%EF%B9%92%EF%B9%92/secret.txt',
    '%2fetc%2fpasswd',
    '/etc/passwd',
    '%2F%2Fetc%2Fpasswd',
    'C:%5cWindows%5cwin.ini',
    'file:%2f%2f%2fetc%2fpasswd',
    '....//....//beta/files/secret.txt',
    '..;/..;/beta/files/secret.txt',
    '.%2e/.%2e/beta/files/secret.txt',
    'references/../../beta/files/secret.txt',
    'references/%2e%2e/%2e%2e/beta/files/secret.txt',
    '%ff%fe',
    `${'../'.repeat(200)}etc/passwd`,
    'a'.repeat(5000),
  ];

  it('the secret is readable where it belongs', async () => {
    const own = await rawGet('/skills/beta/files/secret.txt');
    expect(own.status).toBe(200);
    expect(own.body).toBe(secret);
    const encodedSlash = await rawGet('/skills/alpha/files/references%2fa.md');
    expect(encodedSlash.status).toBe(200);
    expect(encodedSlash.body).toBe('# A\n');
  });

  const labelled = TRAVERSALS.map((target) => [
    target.length > 60 ? `${target.slice(0, 40)}… (${target.length})` : target,
    target,
  ]);

  it.each(labelled)(
    'GET /skills/alpha/files/%s is a 4xx and never another bundle or the disk',
    async (_, target) => {
      const res = await rawGet(`/skills/alpha/files/${target}`);
      expect(res.status, res.body).toBeGreaterThanOrEqual(400);
      expect(res.status, res.body).toBeLessThan(500);
      expect(res.body).not.toContain(secret);
      expect(res.body).not.toContain('root:');
      expect(res.body).not.toContain('[fonts]');
      // Fastify answers URLs that do not decode (%c0%ae, %ff) itself, as JSON rather than a problem.
      if (!res.body.includes('FST_ERR_BAD_URL')) expect(res.type).toMatch(/^application\/problem\+json/);
    },
  );

  it.each([
    '/skills/alpha%00/files/SKILL.md',
    '/skills/..%2fbeta/files/secret.txt',
    '/skills/alpha/files/secret.txt?version=..%2f..%2fbeta',
    '/skills/alpha/files/SKILL.md?version=%00',
    '/skills/alpha/files/SKILL.md?tag=%00',
    '/skills/alpha?version=1.0.0%00',
    '/skills/alpha/content?tag=latest%00',
    '/skills/alpha%00/bundle',
    '/skills?q=%00',
    '/skills?tag=latest%00',
  ])('%s is a 4xx, never a 500', async (target) => {
    const res = await rawGet(target);
    expect(res.status, res.body).toBeGreaterThanOrEqual(400);
    expect(res.status, res.body).toBeLessThan(500);
    expect(res.body).not.toContain(secret);
    expect(res.type).toMatch(/^application\/problem\+json/);
  });

  it('writes naming a version with a NUL are a 400, not a 500, and change nothing', async () => {
    const yank = () =>
      ctx.app.inject({ method: 'DELETE', url: '/skills/alpha/versions/1.0.0%00', headers: adminAuth });
    await refused(yank, 400, 'must not contain a NUL character');
    const moveTag = () =>
      ctx.app.inject({
        method: 'PUT',
        url: '/skills/alpha/tags/stable',
        headers: adminAuth,
        payload: { version: '1.0.0\u0000' },
      });
    await refused(moveTag, 400, 'must not contain a NUL character');
  });

  it('paths that are not canonical but stay inside the bundle find the canonical file', async () => {
    for (const target of [
      'references/./a.md',
      'references//a.md',
      './references/a.md',
      'references%5ca.md',
    ]) {
      const res = await rawGet(`/skills/alpha/files/${target}`);
      expect(res.status, target).toBe(200);
      expect(res.body).toBe('# A\n');
    }
  });

  it('MCP read_skill_file refuses the same traversals', async () => {
    const client = new Client({ name: 'hostile-tests', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', baseUrl)));
    try {
      for (const target of [
        '../beta/secret.txt',
        '../../beta/files/secret.txt',
        '..\\beta\\secret.txt',
        '/etc/passwd',
        'secret.txt\u0000',
        '%2e%2e/beta/secret.txt',
      ]) {
        const result = (await client.callTool({
          name: 'read_skill_file',
          arguments: { name: 'alpha', path: target },
        })) as CallToolResult;
        const text = JSON.stringify(result.content);
        expect(result.isError, `${target}: ${text}`).toBe(true);
        expect(text).not.toContain(secret);
        expect(text).not.toContain('root:');
      }
    } finally {
      await client.close();
    }
  });
});
