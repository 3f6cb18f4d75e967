import { LRUCache } from 'lru-cache';

/**
 * A least-recently-used map bounded by the bytes its values hold (as the caller measures them), not by
 * the number of entries: a cache of 64 MiB stays near 64 MiB whether it holds a few bundles or many
 * small catalogue pages. A value larger than `maxEntryBytes` is never stored, so one huge file cannot
 * flush everything else. lru-cache does the bookkeeping (maxSize, maxEntrySize); this adds the cost of
 * the key and entry, the counters the metrics report, and a bound of 0 meaning "keep nothing".
 */
export interface LruStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
  evictions: number;
}

/** Bytes a key and the entry's bookkeeping cost besides the value (map slot, list links, key string). */
const ENTRY_OVERHEAD = 96;

export class ByteLru<V extends {}> {
  private readonly lru: LRUCache<string, V> | undefined;
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
    this.lru =
      maxBytes >= 1 && this.maxEntryBytes >= 1
        ? new LRUCache<string, V>({
            maxSize: maxBytes,
            maxEntrySize: this.maxEntryBytes,
            dispose: (_value, _key, reason) => {
              if (reason === 'evict') this.evictions += 1;
            },
          })
        : undefined;
  }

  get(key: string): V | undefined {
    const value = this.lru?.get(key);
    if (value === undefined) this.misses += 1;
    else this.hits += 1;
    return value;
  }

  /** Looks without counting a hit or refreshing recency. */
  peek(key: string): V | undefined {
    return this.lru?.peek(key);
  }

  has(key: string): boolean {
    return this.lru?.has(key) ?? false;
  }

  /** Stores `value`, which holds about `bytes` bytes; returns false when it is too large to keep. */
  set(key: string, value: V, bytes: number): boolean {
    const cost = Math.max(0, Math.ceil(bytes)) + key.length * 2 + ENTRY_OVERHEAD;
    if (this.lru === undefined || cost > this.maxEntryBytes) {
      this.lru?.delete(key);
      return false;
    }
    this.lru.set(key, value, { size: cost });
    return true;
  }

  delete(key: string): boolean {
    return this.lru?.delete(key) ?? false;
  }

  clear(): void {
    this.lru?.clear();
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }

  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }

  stats(): LruStats {
    return {
      entries: this.size,
      bytes: this.bytes,
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
      // for...in over own keys: Object.entries would allocate a pair per key of every object measured.
      for (const key in value) {
        if (Object.hasOwn(value, key))
          total += 16 + key.length * 2 + sizeOf((value as Record<string, unknown>)[key], depth + 1);
      }
      return total;
    }
    default:
      return 16;
  }
}
