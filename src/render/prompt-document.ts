import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { z } from 'zod';
import type { CachedBody } from '../cache/bodies.js';

/**
 * The JSON layout of GET /prompt (`format=json`) and the bytes of every layout, produced a slice at a
 * time: at large catalogues the lists and the prompt are tens of megabytes, and the event loop gets
 * turns in between.
 */

/** What listings say of a version's security scan (GET /skills/{name} has the findings). */
export const scanVerdictSchema = z
  .object({ verdict: z.enum(['pass', 'warn', 'block']) })
  .nullable()
  .describe(
    "The version's security scan verdict: pass, or warn (published and flagged; GET /skills/{name} lists the findings); null for a version stored before scanning, until POST /admin/rescan",
  );

const omittedSchema = z.object({
  name: z.string(),
  reason: z
    .enum(['budget', 'not-found', 'model-invocation-disabled'])
    .describe(
      'budget: dropped to fit budget= (the search-first fragment names it, or counts it when the names do not fit); not-found: a name= with no current version under the tag; model-invocation-disabled: disable-model-invocation is true',
    ),
});

/** The JSON layout names at most this many omitted skills, so the answer does not grow with the catalogue. */
export const OMITTED_NAMED = 100;

export const promptJsonSchema = z.object({
  prompt: z.string().describe('The fragment in the xml layout, ready to append to a system message'),
  tokens: z.number().int().describe('Tokens of prompt (o200k_base)'),
  included: z.array(
    z.object({
      name: z.string(),
      namespace: z.string().optional().describe('In a view: the layer (namespace) the skill resolves to'),
      version: z.string(),
      location: z.string().describe('Absolute URL of the skill body (layer 2)'),
      tokens: z.object({
        entry: z.number().int().describe('Tokens this skill adds to the fragment'),
        body: z.number().int().describe('Tokens of its body, once loaded'),
      }),
      scan: scanVerdictSchema,
    }),
  ),
  omitted: z
    .array(omittedSchema)
    .describe(
      `Skills left out, at most ${OMITTED_NAMED} whatever the catalogue's size: names asked for that were not found, then skills dropped for the budget (most loaded first), then skills that disable model invocation. omittedCount counts them all`,
    ),
  omittedCount: z
    .number()
    .int()
    .describe('How many skills were left out, named in omitted or not (omitted names at most 100)'),
  searchFirst: z
    .boolean()
    .describe(
      'true when the instructions send the model to the search_skills tool for skills not listed: mode=search, or a budget that could not hold every selected skill',
    ),
});

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
