import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { z } from 'zod';
import { promptJsonSchema } from '../wire/index.js';
import type { CachedBody } from './response-bodies.js';

/**
 * The bytes of every layout of GET /prompt (the JSON one's schema is src/wire's promptJsonSchema),
 * produced a slice at a time: at large catalogues the lists and the prompt are tens of megabytes, and
 * the event loop gets turns in between.
 */

/** Entries encoded, and characters converted to UTF-8, per turn of the event loop. */
const JSON_SLICE = 2_000;
const TEXT_SLICE = 1 << 20;

/**
 * The bytes jsonBody(promptJsonSchema, value) gives, built a slice at a time with a turn of the event
 * loop in between: at large catalogues the lists and the prompt are tens of megabytes.
 * `parts` are the prompt in consecutive parts (PromptResult.parts).
 */
export async function promptJsonBody(
  value: z.infer<typeof promptJsonSchema>,
  parts: readonly string[] = [value.prompt],
): Promise<CachedBody> {
  const { tokens } = z.encode(promptJsonSchema.pick({ prompt: true, tokens: true }), {
    prompt: value.prompt,
    tokens: value.tokens,
  });
  const texts = ['{"prompt":"'];
  let converted = 0;
  for (const slice of slices(parts)) {
    texts.push(JSON.stringify(slice).slice(1, -1));
    converted += slice.length;
    if (converted >= TEXT_SLICE) {
      converted = 0;
      await yieldToEventLoop();
    }
  }
  texts.push(`","tokens":${JSON.stringify(tokens)},"included":`);
  texts.push(...(await encodeInSlices(promptJsonSchema.shape.included, value.included)));
  texts.push(',"omitted":');
  texts.push(...(await encodeInSlices(promptJsonSchema.shape.omitted, value.omitted)));
  texts.push(`,"omittedCount":${JSON.stringify(value.omittedCount)}`);
  texts.push(`,"searchFirst":${JSON.stringify(value.searchFirst)}}`);
  return bytesInSlices(texts);
}

/** A text answer's bytes, as bufferBody gives them, converted a part at a time. */
export async function textBody(parts: readonly string[]): Promise<CachedBody> {
  return bytesInSlices(parts);
}

/**
 * JSON.stringify(z.encode(schema, items)) for an array schema, in consecutive parts, JSON_SLICE items
 * per turn.
 */
async function encodeInSlices<S extends z.ZodArray>(schema: S, items: z.output<S>): Promise<string[]> {
  const parts = ['['];
  for (let start = 0; start < items.length; start += JSON_SLICE) {
    if (start > 0) {
      parts.push(',');
      await yieldToEventLoop();
    }
    const slice = items.slice(start, start + JSON_SLICE) as z.output<S>;
    parts.push(JSON.stringify(z.encode(schema, slice)).slice(1, -1));
  }
  parts.push(']');
  return parts;
}

/** The texts in slices of at most TEXT_SLICE characters, never splitting a surrogate pair. */
function* slices(texts: readonly string[]): Generator<string> {
  for (const text of texts) {
    if (text.length <= TEXT_SLICE) {
      yield text;
      continue;
    }
    for (let start = 0; start < text.length; ) {
      let end = Math.min(text.length, start + TEXT_SLICE);
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
      yield text.slice(start, end);
      start = end;
    }
  }
}

/**
 * The UTF-8 of the concatenated texts in one buffer of its own (as bufferBody makes), written a slice
 * at a time: writing tens of megabytes at once would hold the event loop, mostly
 * the first touch of the new memory.
 */
async function bytesInSlices(texts: readonly string[]): Promise<CachedBody> {
  let length = 0;
  for (const slice of slices(texts)) length += Buffer.byteLength(slice);
  const buffer = Buffer.allocUnsafeSlow(length);
  let offset = 0;
  let written = 0;
  for (const slice of slices(texts)) {
    offset += buffer.write(slice, offset);
    written += slice.length;
    if (written >= TEXT_SLICE) {
      written = 0;
      await yieldToEventLoop();
    }
  }
  return { value: buffer, bytes: length };
}
