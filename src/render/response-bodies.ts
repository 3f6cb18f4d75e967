import { z } from 'zod';

/** A representation as the caches keep it: the bytes to send and what they cost in memory. */
export interface CachedBody {
  value: Buffer;
  bytes: number;
}

/**
 * Bytes to keep in a cache, in a buffer of their own. Node hands out small buffers as slices of
 * shared 8 KiB slabs; keeping such a slice would keep its whole slab alive, uncounted.
 */
export function bufferBody(value: Buffer | Uint8Array | string): CachedBody {
  const length = typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength;
  const buffer = Buffer.allocUnsafeSlow(length);
  if (typeof value === 'string') buffer.write(value);
  else buffer.set(value);
  return { value: buffer, bytes: length };
}

/**
 * The JSON bytes a route's zod response schema would produce (fastify-type-provider-zod encodes with
 * the schema, then JSON.stringify), computed once so a cached answer skips both steps.
 */
export function jsonBody<S extends z.ZodType>(schema: S, data: z.output<S>): CachedBody {
  return bufferBody(JSON.stringify(z.encode(schema, data)));
}
