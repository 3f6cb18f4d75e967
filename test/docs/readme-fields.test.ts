import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as wire from '../../src/wire/index.js';

/**
 * The README's API table says what each route answers or takes as field lists in backticks, e.g.
 * `{items:[{name, description, ...}], nextCursor}`. They are checked against the src/wire schemas, so a
 * field added to a schema without the README (or the other way round) fails here.
 *
 * The notation: `key` a field, `key?` one that may be absent, `key:[{...}]` a list of objects and
 * `key:{...}` an object whose fields are listed too, `key:[...]` a list described elsewhere, and
 * `key: "a" \| "b"` or `key: ["x"]` an example value (not checked).
 */

const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

/** Each field list of the API table, by the row's first route and its place in the row, with its schema. */
const DOCUMENTED: Record<string, { schema: z.ZodType; io?: 'input' }> = {
  'POST /skills #0': { schema: wire.publishResultSchema },
  'GET /skills #0': { schema: wire.catalogueResponseSchema },
  'GET /search #0': { schema: wire.searchResponseSchema },
  'GET /api/search #0': { schema: wire.skillsCliSearchResponseSchema },
  'GET /skills/{name} #0': { schema: wire.skillDetailSchema },
  'GET /skills/{name}/versions #0': { schema: wire.versionsResponseSchema },
  'PUT /skills/{name}/tags/{tag} #0': { schema: wire.tagMoveBodySchema, io: 'input' },
  'PUT /skills/{name}/tags/{tag} #1': { schema: wire.tagMoveResultSchema },
  'DELETE /skills/{name}/versions/{version} #0': { schema: wire.yankResultSchema },
  'GET /namespaces #0': { schema: wire.namespacesResponseSchema },
  'DELETE /namespaces/{ns} #0': { schema: wire.namespaceDeletedSchema },
  'GET /namespaces/{ns}/digests #0': { schema: wire.namespaceDigestsSchema },
  'GET /views #0': { schema: wire.viewsResponseSchema },
  'PUT /views/{view} #0': { schema: wire.viewBodySchema, io: 'input' },
  'GET /quarantine #0': { schema: wire.quarantineListSchema },
  'POST /skills/{name}/versions/{version}/review #0': { schema: wire.reviewBodySchema, io: 'input' },
  'POST /admin/rescan #0': { schema: wire.rescanReportSchema },
  'POST /tokens #0': { schema: wire.createTokenBodySchema, io: 'input' },
  'POST /tokens #1': { schema: wire.whoAmISchema },
  'GET /skills/{name}/usage #0': { schema: wire.skillUsageSchema },
  'GET /usage #0': { schema: wire.scopeUsageSchema },
  'GET /audit #0': { schema: wire.auditPageSchema },
  'PUT /namespaces/{ns}/trusted-publishers/{id} #0': { schema: wire.trustedPublisherBodySchema, io: 'input' },
  'PUT /namespaces/{ns}/trusted-publishers/{id} #1': { schema: wire.trustedPublishersResponseSchema },
  'POST /oidc/exchange #0': { schema: wire.oidcExchangeBodySchema, io: 'input' },
  'POST /oidc/exchange #1': { schema: wire.oidcExchangeResultSchema },
};

/** A field list as written: its fields in order, each optional or not, with the fields of its value. */
interface Fields {
  list: boolean;
  fields: { key: string; optional: boolean; value?: Fields }[];
}

/** Parses `{a, b?, c:[{d}], e:[...], f: "x" \| "y"}` (or `[{...}]`) from `text` at `start`. */
function parseFields(text: string, start = 0): { fields: Fields; end: number } {
  let at = start;
  const list = text[at] === '[';
  if (list) at++;
  if (text[at] !== '{') throw new Error(`expected { at ${at} of ${text}`);
  at++;
  const fields: Fields['fields'] = [];
  const skipSpaces = () => {
    while (text[at] === ' ') at++;
  };
  for (;;) {
    skipSpaces();
    if (text[at] === '}') break;
    const key = /^[\w$]+/.exec(text.slice(at))?.[0];
    if (!key) throw new Error(`expected a field name at ${at} of ${text}`);
    at += key.length;
    const optional = text[at] === '?';
    if (optional) at++;
    let value: Fields | undefined;
    if (text[at] === ':') {
      at++;
      skipSpaces();
      if (text.startsWith('[{', at) || text[at] === '{') {
        const nested = parseFields(text, at);
        value = nested.fields;
        at = nested.end;
      } else {
        // An example value or [...]: skipped to the next field.
        let depth = 0;
        while (at < text.length && !(depth === 0 && (text[at] === ',' || text[at] === '}'))) {
          if (text[at] === '[' || text[at] === '{') depth++;
          if (text[at] === ']' || text[at] === '}') depth--;
          at++;
        }
      }
    }
    fields.push({ key, optional, ...(value ? { value } : {}) });
    skipSpaces();
    if (text[at] === ',') at++;
  }
  at++;
  if (list) {
    if (text[at] !== ']') throw new Error(`expected ] at ${at} of ${text}`);
    at++;
  }
  return { fields: { list, fields }, end: at };
}

/** Every field list of the API table, by `<first route of the row> #<place in the row>`. */
function documentedFields(): Map<string, Fields> {
  const section = README.slice(
    README.indexOf('\n## API\n'),
    README.indexOf('\n### Skills, versions and digests'),
  );
  const found = new Map<string, Fields>();
  for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
    const [, routes, what] = row.split(/(?<!\\)\|/);
    const route = /`([^`]+)`/.exec(routes!)![1]!;
    const spans = [...what!.matchAll(/`([^`]*)`/g)].map((match) => match[1]!);
    // A span holding a field list: it starts with one, or names a route first (`POST /tokens {...}`).
    const lists = spans.filter((span) => /^(?:[A-Z]+ \S+ )?\[?\{/.test(span));
    lists.forEach((span, index) => {
      found.set(`${route} #${index}`, parseFields(span, span.search(/\[?\{/)).fields);
    });
  }
  return found;
}

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

/** The object (or list of objects) a JSON Schema describes, looking through nullable alternatives. */
function objectOf(schema: JsonSchema | undefined): JsonSchema | undefined {
  if (!schema) return undefined;
  if (schema.properties) return schema;
  if (schema.items) return objectOf(schema.items);
  for (const alternative of schema.anyOf ?? []) {
    const found = objectOf(alternative);
    if (found) return found;
  }
  return undefined;
}

/** How the README's fields differ from the schema's, one line each. */
function differences(where: string, documented: Fields, schema: JsonSchema | undefined): string[] {
  const object = objectOf(schema);
  if (!object?.properties) return [`${where}: the schema is no object`];
  const required = new Set(object.required ?? []);
  const written = new Map(documented.fields.map((field) => [field.key, field]));
  const problems: string[] = [];
  for (const key of Object.keys(object.properties)) {
    const field = written.get(key);
    if (!field) {
      problems.push(`${where}: README lacks ${key}${required.has(key) ? '' : '?'}`);
      continue;
    }
    if (field.optional === required.has(key)) {
      problems.push(
        `${where}: ${key} is ${required.has(key) ? 'always there: no ?' : `optional: write ${key}?`}`,
      );
    }
    if (field.value) problems.push(...differences(`${where}.${key}`, field.value, object.properties[key]));
  }
  for (const key of written.keys()) {
    if (!(key in object.properties)) problems.push(`${where}: README names ${key}, which the schema lacks`);
  }
  return problems;
}

describe("README's field lists", () => {
  const documented = documentedFields();

  it('reads every field list of the API table, each mapped to a wire schema', () => {
    expect(documented.size).toBeGreaterThanOrEqual(Object.keys(DOCUMENTED).length);
    expect([...documented.keys()].filter((key) => !(key in DOCUMENTED))).toEqual([]);
    expect(Object.keys(DOCUMENTED).filter((key) => !documented.has(key))).toEqual([]);
  });

  it('match the schemas: every field, which ones may be absent, nested lists too', () => {
    const problems = Object.entries(DOCUMENTED).flatMap(([where, { schema, io }]) => {
      const fields = documented.get(where);
      if (!fields) return [];
      const json = z.toJSONSchema(schema, { unrepresentable: 'any', io: io ?? 'output' }) as JsonSchema;
      return differences(where, fields, json);
    });
    expect(problems).toEqual([]);
  });

  it('notices a field the README lacks', () => {
    const withExtra = wire.catalogueItemSchema.extend({ added: z.string() });
    const fields = documented.get('GET /skills #0')!.fields[0]!.value!;
    expect(differences('item', fields, z.toJSONSchema(withExtra) as JsonSchema)).toContain(
      'item: README lacks added',
    );
  });
});
