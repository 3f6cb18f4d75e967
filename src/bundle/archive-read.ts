import { PassThrough } from 'node:stream';
import { crc32, createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import yauzl from 'yauzl';
import { sortByPathBytes } from './digest.js';
import { normalizeEntryPath } from './paths.js';
import {
  BundleError,
  type BundleFile,
  type BundleIssue,
  type BundleLimits,
  type NormalizedBundle,
} from './types.js';

export type ArchiveKind = 'tar.gz' | 'tar' | 'zip';

const MiB = 1024 * 1024;
const SKILL_MD = 'SKILL.md';

// ---------------------------------------------------------------------------------------------
// Format detection
// ---------------------------------------------------------------------------------------------

/** Recognises an archive by its magic bytes, whatever the Content-Type or file name claimed. */
export function sniffArchiveKind(bytes: Uint8Array): ArchiveKind | undefined {
  if (startsWith(bytes, [0x1f, 0x8b])) return 'tar.gz';
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06]))
    return 'zip';
  if (bytes.length >= 262 && Buffer.from(bytes.subarray(257, 262)).toString('latin1') === 'ustar')
    return 'tar';
  return undefined;
}

function startsWith(bytes: Uint8Array, magic: number[]): boolean {
  return bytes.length >= magic.length && magic.every((byte, i) => bytes[i] === byte);
}

// ---------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------

export interface LimitTracker {
  /** Counts one regular file; throws 413 as soon as there are more than `maxFiles`. */
  addFile(path: string): void;
  /** Counts decompressed bytes as they arrive; throws 413 as soon as the total exceeds the limit. */
  addBytes(n: number): void;
  readonly files: number;
  readonly bytes: number;
}

/** One running count per upload, shared by the archive readers and the multipart reader. */
export function createLimitTracker(limits: BundleLimits): LimitTracker {
  let files = 0;
  let bytes = 0;
  return {
    addFile(path) {
      files += 1;
      if (files > limits.maxFiles) throw tooManyFiles(limits, path);
    },
    addBytes(n) {
      bytes += n;
      if (bytes > limits.maxUncompressedBytes) throw tooLarge(limits);
    },
    get files() {
      return files;
    },
    get bytes() {
      return bytes;
    },
  };
}

export function tooLarge(limits: BundleLimits): BundleError {
  const detail =
    `the bundle is larger than the limit of ${describeBytes(limits.maxUncompressedBytes)} uncompressed; ` +
    'the limit is configurable on the server with SKILLREG_MAX_BUNDLE_BYTES';
  return new BundleError(413, 'Bundle too large', detail, [{ path: '', detail }]);
}

export function tooManyFiles(limits: BundleLimits, atPath?: string): BundleError {
  const where = atPath === undefined ? '' : ` (stopped at "${atPath}")`;
  const detail =
    `the bundle has more than ${limits.maxFiles} files, the limit${where}; ` +
    'the limit is configurable on the server with SKILLREG_MAX_FILES';
  return new BundleError(413, 'Too many files', detail, [{ path: atPath ?? '', detail }]);
}

function describeBytes(n: number): string {
  if (n < MiB) return `${n} bytes`;
  return `${Number((n / MiB).toFixed(2))} MiB (${n} bytes)`;
}

/**
 * Headers, padding and pax records are not file bytes, yet a flood of them (a gzip of millions of
 * directory headers) costs time. The raw tar stream is therefore capped too, with room for honest
 * framing: up to 4 KiB per file (header, padding, a pax record with a long path or macOS xattrs).
 */
function tarStreamLimit(limits: BundleLimits): number {
  return limits.maxUncompressedBytes + limits.maxFiles * 4096 + 4 * MiB;
}

// ---------------------------------------------------------------------------------------------
// Reading archives
// ---------------------------------------------------------------------------------------------

/**
 * Reads every regular file of an archive into memory, enforcing the limits while decompressing so a
 * bomb is refused after at most `maxUncompressedBytes` of work. Paths come back normalised.
 * Always settles with the files or a BundleError (400 unreadable or hostile, 413 over a limit).
 */
export async function readArchive(
  bytes: Uint8Array,
  kind: ArchiveKind,
  limits: BundleLimits,
): Promise<BundleFile[]> {
  try {
    return kind === 'zip' ? await readZip(bytes, limits) : await readTar(bytes, kind === 'tar.gz', limits);
  } catch (error) {
    throw asBundleError(error, kind);
  }
}

/**
 * The files of an archive the registry served (GET /skills/{name}/bundle) as the version holds them:
 * a tar.gz has them inside a folder named after the skill (registries before that served them at
 * the root, as a zip still does), which is stripped as publishing strips it.
 */
export async function readServedArchive(
  bytes: Uint8Array,
  kind: ArchiveKind,
  limits: BundleLimits,
): Promise<BundleFile[]> {
  return normalizeBundle(await readArchive(bytes, kind, limits), limits).files;
}

function asBundleError(error: unknown, kind: ArchiveKind): BundleError {
  if (error instanceof BundleError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  const detail = `could not read the ${kind} archive: ${reason}`;
  return new BundleError(400, 'Unreadable archive', detail, [{ path: '', detail }]);
}

/** Collects files and refuses a path seen twice (which copy would an agent get?). */
class FileCollector {
  private readonly byPath = new Map<string, BundleFile>();

  add(file: BundleFile): void {
    if (this.byPath.has(file.path)) throw duplicateEntry(file.path);
    this.byPath.set(file.path, file);
  }

  get files(): BundleFile[] {
    return [...this.byPath.values()];
  }
}

function duplicateEntry(path: string): BundleError {
  const detail = `the upload contains "${path}" more than once; keep a single copy of each file`;
  return new BundleError(400, 'Duplicate file in upload', detail, [{ path, detail }]);
}

function hostileEntry(path: string, what: string): BundleError {
  const detail = `entry "${path}" is ${what}`;
  return new BundleError(400, 'Unsupported archive entry', detail, [{ path, detail }]);
}

/** Only the executable bit survives: permissions beyond that mean nothing to an agent. */
function keepExecutableBit(mode: number | undefined): number {
  return (mode ?? 0) & 0o111 ? 0o755 : 0o644;
}

// --- tar / tar.gz ----------------------------------------------------------------------------

const LINK_ADVICE = 'links are not allowed in a skill bundle; include the file itself';

async function readTar(bytes: Uint8Array, gzipped: boolean, limits: BundleLimits): Promise<BundleFile[]> {
  const tracker = createLimitTracker(limits);
  const collector = new FileCollector();
  const source = gzipped ? createGunzip() : new PassThrough();
  const extract = tar.extract();
  capTarStream(source, extract, tarStreamLimit(limits), limits);
  source.on('error', (error) => extract.destroy(error));
  source.pipe(extract);
  source.end(bytes);
  try {
    for await (const entry of extract) {
      const file = await readTarEntry(entry, tracker);
      if (file) collector.add(file);
    }
  } finally {
    source.destroy();
    extract.destroy();
  }
  return collector.files;
}

function capTarStream(
  source: NodeJS.ReadableStream,
  extract: tar.Extract,
  cap: number,
  limits: BundleLimits,
) {
  let seen = 0;
  source.on('data', (chunk: Buffer) => {
    seen += chunk.byteLength;
    if (seen > cap) extract.destroy(tooLarge(limits));
  });
}

/** tar-stream's entry stream; its own typings do not export the type. */
type TarEntry = AsyncIterable<unknown> & { header: tar.Header };

async function readTarEntry(entry: TarEntry, tracker: LimitTracker): Promise<BundleFile | undefined> {
  const { header } = entry;
  // tar-stream reports unknown type flags as null although its typings do not say so.
  const type = header.type as tar.Header['type'] | null;
  switch (type) {
    case 'file':
    case 'contiguous-file':
      // Pre-POSIX tar marks folders as files whose name ends in a slash.
      if (header.name.endsWith('/')) return undefined;
      break;
    case 'directory':
      return undefined;
    case 'symlink':
      throw hostileEntry(header.name, `a symbolic link to "${header.linkname ?? ''}"; ${LINK_ADVICE}`);
    case 'link':
      throw hostileEntry(header.name, `a hard link to "${header.linkname ?? ''}"; ${LINK_ADVICE}`);
    default:
      throw hostileEntry(header.name, `a ${type ?? 'unknown type of'} entry; only regular files are allowed`);
  }
  const path = normalizeEntryPath(header.name);
  tracker.addFile(path);
  const chunks: Buffer[] = [];
  for await (const chunk of entry as AsyncIterable<Buffer>) {
    tracker.addBytes(chunk.byteLength);
    chunks.push(chunk);
  }
  return { path, bytes: Buffer.concat(chunks), mode: keepExecutableBit(header.mode) };
}

// --- zip -------------------------------------------------------------------------------------

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

async function readZip(bytes: Uint8Array, limits: BundleLimits): Promise<BundleFile[]> {
  const tracker = createLimitTracker(limits);
  const collector = new FileCollector();
  const zip = await yauzl.fromBufferPromise(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
    lazyEntries: true,
    validateEntrySizes: true,
    // Names are decoded below so that hostile ones get our own message rather than yauzl's.
    decodeStrings: false,
    autoClose: false,
  });
  try {
    refuseEntryFlood(zip.entryCount, limits);
    const nextEntry = zipEntryPump(zip);
    for (let entry = await nextEntry(); entry; entry = await nextEntry()) {
      const file = await readZipEntry(zip, entry, tracker);
      if (file) collector.add(file);
    }
  } finally {
    closeQuietly(zip);
  }
  return collector.files;
}

/**
 * Folder entries are not files, so the file limit never sees them; a zip of hundreds of thousands of
 * empty folders would be walked entry by entry. The central directory states the
 * entry count up front: more than four entries per allowed file (each file, its folder, and macOS's
 * AppleDouble twin and __MACOSX folder) is refused before any entry is read.
 */
function refuseEntryFlood(entryCount: number, limits: BundleLimits): void {
  const maxEntries = limits.maxFiles * 4 + 100;
  if (entryCount <= maxEntries) return;
  const detail =
    `the zip archive lists ${entryCount} entries; at most ${maxEntries} entries (files and folders, ` +
    `four per file of the limit of ${limits.maxFiles} files) are read; ` +
    'the limit is configurable on the server with SKILLREG_MAX_FILES';
  throw new BundleError(413, 'Too many files', detail, [{ path: '', detail }]);
}

/**
 * Turns yauzl's lazy entry events into a pull function. The error listener stays attached for the
 * whole read so a late error can never surface as an unhandled 'error' event.
 */
function zipEntryPump(zip: yauzl.ZipFile): () => Promise<yauzl.Entry | undefined> {
  let failure: Error | undefined;
  let waiting:
    | { resolve: (entry: yauzl.Entry | undefined) => void; reject: (error: Error) => void }
    | undefined;
  const settle = (action: (w: NonNullable<typeof waiting>) => void) => {
    const current = waiting;
    waiting = undefined;
    if (current) action(current);
  };
  zip.on('entry', (entry: yauzl.Entry) => settle((w) => w.resolve(entry)));
  zip.on('end', () => settle((w) => w.resolve(undefined)));
  zip.on('error', (error: Error) => {
    failure ??= error;
    settle((w) => w.reject(error));
  });
  return () =>
    new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      waiting = { resolve, reject };
      zip.readEntry();
    });
}

function closeQuietly(zip: yauzl.ZipFile): void {
  try {
    if (zip.isOpen) zip.close();
  } catch {
    // Closing an in-memory reader cannot lose data; a failure here must not mask the real outcome.
  }
}

/** Decodes the name as yauzl would (UTF-8 flag, Info-ZIP Unicode path field, else CP437), backslashes kept verbatim. */
function zipEntryName(entry: yauzl.Entry): string {
  return yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
}

async function readZipEntry(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  tracker: LimitTracker,
): Promise<BundleFile | undefined> {
  const name = zipEntryName(entry);
  const unixMode = (entry.externalFileAttributes >>> 16) & 0xffff;
  const fileType = unixMode & S_IFMT;
  if (fileType === S_IFLNK) throw hostileEntry(name, `a symbolic link; ${LINK_ADVICE}`);
  if (name.endsWith('/') || fileType === S_IFDIR) return undefined;
  if (fileType !== 0 && fileType !== S_IFREG) {
    throw hostileEntry(name, 'a special file (device, FIFO or socket); only regular files are allowed');
  }
  if (entry.isEncrypted()) throw hostileEntry(name, 'encrypted; upload an archive without a password');
  if (!entry.canDecodeFileData()) {
    throw hostileEntry(
      name,
      `compressed with method ${entry.compressionMethod}; use deflate or no compression`,
    );
  }
  const path = normalizeEntryPath(name);
  tracker.addFile(path);
  const bytes = await readZipData(zip, entry, path, tracker);
  return { path, bytes, mode: keepExecutableBit(unixMode) };
}

async function readZipData(zip: yauzl.ZipFile, entry: yauzl.Entry, path: string, tracker: LimitTracker) {
  const stream = await zip.openReadStreamPromise(entry);
  const chunks: Buffer[] = [];
  let checksum = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      tracker.addBytes(chunk.byteLength);
      checksum = crc32(chunk, checksum);
      chunks.push(chunk);
    }
  } finally {
    stream.destroy();
  }
  // yauzl does not verify CRC-32; without this a corrupted stored entry would be published silently.
  if (checksum !== entry.crc32) throw new Error(`CRC-32 mismatch in "${path}" (the archive is corrupted)`);
  return Buffer.concat(chunks);
}

// ---------------------------------------------------------------------------------------------
// Normalising a file set into a bundle
// ---------------------------------------------------------------------------------------------

/**
 * The single gate every upload passes (archives and multipart alike): canonical paths, no OS junk,
 * no duplicates, within limits, and exactly one SKILL.md at the root or inside one top folder, which
 * is then stripped. Files come back sorted in digest order.
 */
export function normalizeBundle(files: BundleFile[], limits: BundleLimits): NormalizedBundle {
  const warnings: BundleIssue[] = [];
  const normalized = files.map((file) => ({ ...file, path: normalizeEntryPath(file.path) }));
  const kept = dropOsJunk(normalized, warnings);
  refuseCollisions(kept);
  warnFoldedCollisions(kept, warnings);
  checkLimits(kept, limits);

  const skillMd = locateSkillMd(kept.map((file) => file.path));
  let result = kept;
  if (skillMd.folder !== undefined) result = stripTopFolder(kept, skillMd.folder);
  const skillMdPath =
    skillMd.folder === undefined ? skillMd.path : skillMd.path.slice(skillMd.folder.length + 1);
  if (skillMdPath !== SKILL_MD) result = renameSkillMd(result, skillMdPath, warnings);

  return { files: sortByPathBytes(result), folderName: skillMd.folder, warnings };
}

const JUNK_BASENAMES = new Set(['.DS_Store', 'Thumbs.db']);

/** Finder, Explorer and AppleDouble leftovers: never part of a skill, and would break top-folder detection. */
function isOsJunk(path: string): boolean {
  const segments = path.split('/');
  const base = segments[segments.length - 1] ?? '';
  return segments.includes('__MACOSX') || JUNK_BASENAMES.has(base) || base.startsWith('._');
}

function dropOsJunk(files: BundleFile[], warnings: BundleIssue[]): BundleFile[] {
  const junk = files.filter((file) => isOsJunk(file.path));
  if (junk.length === 0) return files;
  const shown = junk.slice(0, 5).map((file) => file.path);
  const more = junk.length > shown.length ? ` and ${junk.length - shown.length} more` : '';
  warnings.push({
    path: junk[0]?.path ?? '',
    detail:
      `ignored ${junk.length} operating-system file${junk.length === 1 ? '' : 's'} ` +
      `(__MACOSX/, .DS_Store, ._*, Thumbs.db): ${shown.join(', ')}${more}`,
  });
  return files.filter((file) => !isOsJunk(file.path));
}

/** Two files at one path, or a file that is also a folder, cannot both be extracted by an agent. */
function refuseCollisions(files: BundleFile[]): void {
  const paths = new Set<string>();
  for (const file of files) {
    if (paths.has(file.path)) throw duplicateEntry(file.path);
    paths.add(file.path);
  }
  for (const path of paths) {
    const folder = parentFolders(path).find((parent) => paths.has(parent));
    if (folder !== undefined) throw fileAndFolder(folder, path);
  }
}

/**
 * Paths that differ only by letter case or Unicode normalisation (NFC/NFD: "é" typed two ways) are two
 * files on Linux but one on macOS and Windows, where extracting the bundle would overwrite one with the
 * other. Kept as they are, with a warning naming them.
 */
function warnFoldedCollisions(files: BundleFile[], warnings: BundleIssue[]): void {
  const seen = new Map<string, string>();
  const clashes: [string, string][] = [];
  for (const file of files) {
    const folded = file.path.normalize('NFC').toLowerCase();
    const other = seen.get(folded);
    if (other === undefined) seen.set(folded, file.path);
    else clashes.push([other, file.path]);
  }
  if (clashes.length === 0) return;
  const shown = clashes.slice(0, 5).map(([a, b]) => `"${a}" and "${b}"`);
  const more = clashes.length > shown.length ? ` and ${clashes.length - shown.length} more pairs` : '';
  warnings.push({
    path: clashes[0]![1],
    detail:
      `${shown.join(', ')}${more} differ only by letter case or Unicode normalisation: they are one file ` +
      'on macOS and Windows, where extracting this skill keeps only one of them; rename one of each pair',
  });
}

function parentFolders(path: string): string[] {
  const segments = path.split('/');
  return segments.slice(1).map((_, i) => segments.slice(0, i + 1).join('/'));
}

function fileAndFolder(path: string, inside: string): BundleError {
  const detail = `"${path}" is both a file and a folder (it would contain "${inside}"); rename one of them`;
  return new BundleError(400, 'Conflicting paths in upload', detail, [{ path, detail }]);
}

function checkLimits(files: BundleFile[], limits: BundleLimits): void {
  if (files.length > limits.maxFiles) throw tooManyFiles(limits);
  const total = files.reduce((sum, file) => sum + file.bytes.byteLength, 0);
  if (total > limits.maxUncompressedBytes) throw tooLarge(limits);
}

interface SkillMdLocation {
  /** Full path of the chosen SKILL.md (possibly a case variant) before stripping. */
  path: string;
  /** The top folder holding it, when it is not at the root. */
  folder?: string;
}

const isSkillMdName = (path: string) => basename(path).toLowerCase() === 'skill.md';
const depthOf = (path: string) => path.split('/').length - 1;

/**
 * Picks the SKILL.md that defines the bundle: the shallowest one, preferring the exact spelling over
 * case variants at that depth. Deeper SKILL.md files (examples, nested references) are ordinary files.
 */
function locateSkillMd(paths: string[]): SkillMdLocation {
  const candidates = paths.filter(isSkillMdName);
  if (candidates.length === 0) throw noSkillMd(paths);
  const depth = Math.min(...candidates.map(depthOf));
  const shallowest = candidates.filter((path) => depthOf(path) === depth);
  const exact = shallowest.filter((path) => basename(path) === SKILL_MD);
  const chosen = exact.length > 0 ? exact : shallowest;

  if (depth > 1) throw skillMdTooDeep(shallowest);
  if (chosen.length > 1) throw severalSkillMds(chosen, depth);
  const path = chosen[0] as string;
  return depth === 0 ? { path } : { path, folder: path.split('/')[0] as string };
}

function stripTopFolder(files: BundleFile[], folder: string): BundleFile[] {
  const prefix = `${folder}/`;
  const outside = files.filter((file) => !file.path.startsWith(prefix));
  if (outside.length > 0)
    throw filesOutsideFolder(
      outside.map((file) => file.path),
      folder,
    );
  return files.map((file) => ({ ...file, path: file.path.slice(prefix.length) }));
}

function renameSkillMd(files: BundleFile[], from: string, warnings: BundleIssue[]): BundleFile[] {
  warnings.push({
    path: SKILL_MD,
    detail: `renamed "${from}" to "${SKILL_MD}"; the Agent Skills spec requires that exact spelling`,
  });
  return files.map((file) => (file.path === from ? { ...file, path: SKILL_MD } : file));
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function invalidBundle(detail: string, errors: BundleIssue[]): BundleError {
  return new BundleError(422, 'Invalid skill bundle', detail, errors);
}

function noSkillMd(paths: string[]): BundleError {
  const found =
    paths.length === 0
      ? 'the upload holds no files'
      : `found ${paths.length} file${paths.length === 1 ? '' : 's'} (${listSome(paths)}) but none is named SKILL.md`;
  const detail = `no SKILL.md in the upload: ${found}; a skill needs SKILL.md at its root or inside a single top folder`;
  return invalidBundle(detail, [{ path: SKILL_MD, detail }]);
}

function skillMdTooDeep(paths: string[]): BundleError {
  const detail =
    'SKILL.md must be at the root of the bundle or inside a single top folder; ' +
    `found it at ${listSome(paths)}`;
  return invalidBundle(
    detail,
    paths.map((path) => ({ path, detail: `${path} is nested too deep; upload the folder that holds it` })),
  );
}

function severalSkillMds(paths: string[], depth: number): BundleError {
  const detail =
    depth === 0
      ? `found ${paths.length} files named like SKILL.md at the root (${listSome(paths)}): keep exactly one, named SKILL.md`
      : `found SKILL.md in ${paths.length} folders (${listSome(paths.map((path) => `${path.split('/')[0]}/`))}): ` +
        'publish one skill per upload';
  return invalidBundle(
    detail,
    paths.map((path) => ({ path, detail })),
  );
}

function filesOutsideFolder(paths: string[], folder: string): BundleError {
  const detail =
    `SKILL.md is inside the folder "${folder}/" but ${paths.length} file${paths.length === 1 ? ' is' : 's are'} ` +
    `outside it (${listSome(paths)}); put every file inside "${folder}/" or move SKILL.md to the root`;
  return invalidBundle(
    detail,
    paths.map((path) => ({ path, detail: `"${path}" is outside the skill folder "${folder}/"` })),
  );
}

function listSome(items: string[], max = 5): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}
