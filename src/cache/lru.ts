/**
 * A least-recently-used map bounded by the bytes its values hold (as the caller measures them), not by
 * the number of entries: a cache of 64 MiB stays near 64 MiB whether it holds a few bundles or many
 * small catalogue pages. A value larger than `maxEntryBytes` is never stored, so one huge file cannot
 * flush everything else.
 *
 * A Map keeps insertion order, so the first key is the least recently used: a hit moves the entry to
 * the end, an insert over the bound drops entries from the front.
 */
export interface LruStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
  evictions: number;
}

/** Bytes a key and the entry's bookkeeping cost besides the value (Map slot, entry object, key string). */
const ENTRY_OVERHEAD = 96;

export class ByteLru<V> {
  private readonly map = new Map<string, { value: V; bytes: number }>();
  private used = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;
  readonly maxEntryBytes: number;

  constructor(
    readonly maxBytes: number,
    maxEntryBytes = Math.floor(maxBytes / 8),
  ) {
    if (!(maxBytes >= 0)) throw new RangeError('maxBytes must be a number >= 0');
    this.maxEntryBytes = Math.min(maxEntryBytes, maxBytes);
  }

  get(key: string): V | undefined {
    const entry = this.map.get(key);
    if (entry === undefined) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    this.map.delete(key);
    this.map.set(key, entry);
    return entry.value;
  }

  /** Looks without counting a hit or refreshing recency. */
  peek(key: string): V | undefined {
    return this.map.get(key)?.value;
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  /** Stores `value`, which holds about `bytes` bytes; returns false when it is too large to keep. */
  set(key: string, value: V, bytes: number): boolean {
    const cost = Math.max(0, Math.ceil(bytes)) + key.length * 2 + ENTRY_OVERHEAD;
    this.delete(key);
    if (cost > this.maxEntryBytes) return false;
    this.map.set(key, { value, bytes: cost });
    this.used += cost;
    while (this.used > this.maxBytes) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
      this.evictions += 1;
    }
    return true;
  }

  delete(key: string): boolean {
    const entry = this.map.get(key);
    if (entry === undefined) return false;
    this.map.delete(key);
    this.used -= entry.bytes;
    return true;
  }

  clear(): void {
    this.map.clear();
    this.used = 0;
  }

  get size(): number {
    return this.map.size;
  }

  get bytes(): number {
    return this.used;
  }

  stats(): LruStats {
    return {
      entries: this.map.size,
      bytes: this.used,
      maxBytes: this.maxBytes,
      hits: this.hits,
      misses: this.misses,
      evictions: this.evictions,
    };
  }
}

/** Rough bytes a JavaScript value holds: strings at two bytes a character, buffers at their length. */
export function sizeOf(value: unknown, depth = 0): number {
  if (value === null || value === undefined) return 8;
  switch (typeof value) {
    case 'string':
      return 16 + value.length * 2;
    case 'number':
    case 'boolean':
    case 'bigint':
      return 8;
    case 'object': {
      if (value instanceof Uint8Array) return 64 + value.byteLength;
      if (value instanceof Date) return 32;
      if (depth > 8) return 64;
      let total = 32;
      if (Array.isArray(value)) {
        for (const item of value) total += 8 + sizeOf(item, depth + 1);
        return total;
      }
      for (const [key, item] of Object.entries(value)) total += 16 + key.length * 2 + sizeOf(item, depth + 1);
      return total;
    }
    default:
      return 16;
  }
}
