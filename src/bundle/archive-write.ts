import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import tar from 'tar-stream';
import yazl from 'yazl';
import { sortByPathBytes } from './digest.js';
import { normalizeEntryPath } from './paths.js';
import type { BundleFile } from './types.js';

export interface ArchiveWriteOptions {
  /** Wrap every file in this folder (the skill's name), so that extracting the archive makes that one folder. */
  prefix?: string;
}

/** Fixed so that output is a function of the files alone; mid-range deflate keeps serving cheap. */
const GZIP_LEVEL = 6;
const TAR_MTIME = new Date(0);
/**
 * Zip stores a local wall-clock DOS time and yazl reads it with local getters, so the date is built
 * from local components on every call: whatever the process time zone (even if it changes at run
 * time), the fields written are 2000-01-01 00:00:00. 1980-01-01 would sit on yazl's clamping bound,
 * which yazl computed in the time zone of the moment it was loaded.
 */
const zipMtime = () => new Date(2000, 0, 1, 0, 0, 0);
const GZIP_OS_UNKNOWN = 0xff;

const gzipAsync = promisify(gzip);

/**
 * A byte-for-byte deterministic tar.gz of the files: entries in digest order, mtime 1970-01-01,
 * uid/gid 0, empty owner names, mode 0644/0755, a gzip header with no mtime and OS "unknown".
 */
export async function writeTarGz(
  files: readonly BundleFile[],
  options: ArchiveWriteOptions = {},
): Promise<Buffer> {
  const tarBytes = await writeTar(archiveEntries(files, options.prefix));
  const gz = await gzipAsync(tarBytes, { level: GZIP_LEVEL });
  return withPlatformNeutralGzipHeader(gz);
}

/**
 * A byte-for-byte deterministic zip of the files: entries in digest order, deflated, DOS timestamp
 * 2000-01-01 00:00:00 and no extended-timestamp extra field, Unix mode 0644/0755.
 */
export async function writeZip(
  files: readonly BundleFile[],
  options: ArchiveWriteOptions = {},
): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const output = collect(zip.outputStream);
  for (const file of archiveEntries(files, options.prefix)) {
    zip.addBuffer(asBuffer(file.bytes), file.path, {
      mtime: zipMtime(),
      mode: 0o100000 | file.mode,
      compress: true,
      compressionLevel: GZIP_LEVEL,
      forceDosTimestamp: true,
    });
  }
  zip.end();
  return output;
}

function archiveEntries(files: readonly BundleFile[], prefix: string | undefined): BundleFile[] {
  const folder = prefix === undefined ? '' : `${normalizeEntryPath(prefix)}/`;
  return sortByPathBytes(files).map((file) => ({
    path: folder + file.path,
    bytes: file.bytes,
    mode: file.mode & 0o111 ? 0o755 : 0o644,
  }));
}

async function writeTar(entries: BundleFile[]): Promise<Buffer> {
  const pack = tar.pack();
  const output = collect(pack);
  for (const file of entries) {
    pack.entry(
      {
        name: file.path,
        type: 'file',
        size: file.bytes.byteLength,
        mode: file.mode,
        mtime: TAR_MTIME,
        uid: 0,
        gid: 0,
        uname: '',
        gname: '',
      },
      asBuffer(file.bytes),
    );
  }
  pack.finalize();
  return output;
}

/** Node writes mtime 0 already, but the OS byte says where zlib was built; pin both. */
function withPlatformNeutralGzipHeader(gz: Buffer): Buffer {
  gz.writeUInt32LE(0, 4);
  gz[9] = GZIP_OS_UNKNOWN;
  return gz;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Both yazl's Node stream and tar-stream's streamx stream yield Buffers. */
async function collect(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
