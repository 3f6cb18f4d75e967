import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Built repositories on disk, one folder per content key (a digest of everything the repository holds:
 * the same key is the same repository, so a lost folder is rebuilt identically). A build goes into a
 * folder of its own and is renamed into place when complete; one build per key runs at a time. The
 * total size is bounded: the least recently used folders that no request is reading go first.
 */
export interface RepositoryCacheOptions {
  /** Where the folders go; default: a folder of this process under the system's temporary directory. */
  directory?: string;
  /** Bytes on disk before the least recently used repositories are removed. */
  maxBytes: number;
}

interface Entry {
  directory: string;
  bytes: number;
  readers: number;
}

export class RepositoryCache {
  private readonly entries = new Map<string, Entry>();
  private readonly building = new Map<string, Promise<Entry>>();
  private root: Promise<string> | undefined;
  private totalBytes = 0;

  constructor(private readonly options: RepositoryCacheOptions) {}

  /** Bytes the cached repositories take on disk, and how many there are. */
  usage(): { bytes: number; repositories: number } {
    return { bytes: this.totalBytes, repositories: this.entries.size };
  }

  /**
   * The folder of the repository `key`, built first with `build` when it is not on disk; it is not
   * removed until `release` is called (once whoever reads it is done, a streamed answer included).
   */
  async hold(key: string, build: (directory: string) => Promise<void>): Promise<Held> {
    return held(await this.entry(key, build));
  }

  /** The folder of the repository `key` when it is on disk (held until `release`), else undefined. */
  peek(key: string): Held | undefined {
    const entry = this.entries.get(key);
    return entry ? held(entry) : undefined;
  }

  private async entry(key: string, build: (directory: string) => Promise<void>): Promise<Entry> {
    const cached = this.entries.get(key);
    if (cached) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    let pending = this.building.get(key);
    if (!pending) {
      pending = this.build(key, build).finally(() => this.building.delete(key));
      this.building.set(key, pending);
    }
    return pending;
  }

  private async build(key: string, build: (directory: string) => Promise<void>): Promise<Entry> {
    const root = await this.rootDirectory();
    const directory = path.join(root, `${key}.git`);
    const scratch = path.join(root, `.building-${key}-${randomBytes(4).toString('hex')}`);
    try {
      await build(scratch);
      await rm(directory, { recursive: true, force: true });
      await rename(scratch, directory);
    } catch (error) {
      await rm(scratch, { recursive: true, force: true });
      throw error;
    }
    const entry: Entry = { directory, bytes: await folderBytes(directory), readers: 0 };
    this.entries.set(key, entry);
    this.totalBytes += entry.bytes;
    await this.evict();
    return entry;
  }

  private async evict(): Promise<void> {
    for (const [key, entry] of this.entries) {
      if (this.totalBytes <= this.options.maxBytes) return;
      // The newest is kept whatever its size: it was built for a request that is about to read it.
      if (entry.readers > 0 || key === [...this.entries.keys()].at(-1)) continue;
      this.entries.delete(key);
      this.totalBytes -= entry.bytes;
      await rm(entry.directory, { recursive: true, force: true });
    }
  }

  private rootDirectory(): Promise<string> {
    this.root ??= (async () => {
      if (this.options.directory) {
        await mkdir(this.options.directory, { recursive: true });
        return mkdtemp(path.join(this.options.directory, 'repositories-'));
      }
      return mkdtemp(path.join(tmpdir(), 'skillreg-git-'));
    })();
    return this.root;
  }

  /** Removes every cached repository (the process is stopping). */
  async close(): Promise<void> {
    if (!this.root) return;
    const root = await this.root.catch(() => undefined);
    this.entries.clear();
    this.totalBytes = 0;
    if (root) await rm(root, { recursive: true, force: true });
  }
}

/** A folder being read: not removed until released (once; releasing again does nothing). */
interface Held {
  directory: string;
  release: () => void;
}

function held(entry: Entry): Held {
  entry.readers += 1;
  let released = false;
  return {
    directory: entry.directory,
    release: () => {
      if (released) return;
      released = true;
      entry.readers -= 1;
    },
  };
}

async function folderBytes(directory: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}
