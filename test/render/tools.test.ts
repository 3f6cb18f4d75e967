import type Anthropic from '@anthropic-ai/sdk';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  anthropicTools,
  LOAD_SKILL_DESCRIPTION,
  MAX_ENUM_NAMES,
  openAiTools,
  READ_SKILL_FILE_DESCRIPTION,
  skillTools,
} from '../../src/render/tools.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

type Schema = {
  type: string;
  properties: Record<string, { type: string | string[]; enum?: string[]; description?: string }>;
  required: string[];
  additionalProperties: boolean;
};
interface AnthropicToolJson {
  name: string;
  description: string;
  input_schema: Schema;
}
interface OpenAiToolJson {
  type: 'function';
  function: { name: string; description: string; parameters: Schema; strict?: boolean };
}

let ctx: TestApp;
const alpha = uniqueName('alpha');
const beta = uniqueName('beta');
const hidden = uniqueName('hidden');

async function publishSkill(name: string, description: string, extra?: string, query?: string) {
  const res = await publish(ctx.app, files({ 'SKILL.md': skillMd({ name, description, extra }) }), { query });
  expect([200, 201], res.body).toContain(res.statusCode);
}

/** Compiles a schema as JSON Schema 2020-12 (strict: unknown keywords fail) and returns its validator. */
function validatorFor(schema: Schema) {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
  return ajv.compile(schema);
}

beforeAll(async () => {
  ctx = await createTestApp();
  await publishSkill(alpha, 'Alpha: converts zebra spreadsheets.');
  await publishSkill(beta, 'Beta: drafts release notes.');
  await publishSkill(hidden, 'Only people start this.', 'disable-model-invocation: true');
});
afterAll(async () => ctx?.close());

describe('GET /tools', () => {
  it('gives Anthropic tools by default, with the skill names as an enum', async () => {
    const res = await ctx.app.inject('/tools');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('public, no-cache');
    const tools: AnthropicToolJson[] = res.json();
    expect(res.json()).toEqual((await ctx.app.inject('/tools?provider=anthropic')).json());
    expect(tools.map((tool) => tool.name)).toEqual(['load_skill', 'read_skill_file']);
    const [load, read] = tools;
    expect(Object.keys(load!).sort()).toEqual(['description', 'input_schema', 'name']);
    expect(load!.description).toBe(LOAD_SKILL_DESCRIPTION);
    expect(load!.description).toMatch(/read_skill_file/);
    expect(read!.description).toBe(READ_SKILL_FILE_DESCRIPTION);
    expect(load!.input_schema).toMatchObject({
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: { name: { type: 'string', enum: [alpha, beta].sort() }, version: { type: 'string' } },
    });
    expect(read!.input_schema).toMatchObject({ type: 'object', required: ['name', 'path'] });

    const validate = validatorFor(load!.input_schema);
    expect(validate({ name: alpha })).toBe(true);
    expect(validate({ name: alpha, version: '1.0.0' })).toBe(true);
    expect(validate({ name: hidden })).toBe(false);
    expect(validate({ name: 'no-such-skill' })).toBe(false);
    expect(validate({})).toBe(false);
    expect(validate({ name: alpha, extra: 1 })).toBe(false);
    const validateRead = validatorFor(read!.input_schema);
    expect(validateRead({ name: alpha, path: 'references/a.md' })).toBe(true);
    expect(validateRead({ name: alpha })).toBe(false);
  });

  it('gives OpenAI function tools, strict by default', async () => {
    const tools: OpenAiToolJson[] = (await ctx.app.inject('/tools?provider=openai')).json();
    expect(tools.map((tool) => [tool.type, tool.function.name, tool.function.strict])).toEqual([
      ['function', 'load_skill', true],
      ['function', 'read_skill_file', true],
    ]);
    for (const tool of tools) {
      const { parameters } = tool.function;
      // Strict mode: every property required, no additional properties.
      expect(parameters.additionalProperties).toBe(false);
      expect([...parameters.required].sort()).toEqual(Object.keys(parameters.properties).sort());
    }
    const load = tools[0]!.function.parameters;
    expect(load.properties.name!.enum).toEqual([alpha, beta].sort());
    expect(load.properties.version!.type).toEqual(['string', 'null']);
    const validate = validatorFor(load);
    expect(validate({ name: beta, version: null })).toBe(true);
    expect(validate({ name: hidden, version: null })).toBe(false);

    const loose: OpenAiToolJson[] = (await ctx.app.inject('/tools?provider=openai&strict=false')).json();
    expect(loose[0]!.function.strict).toBeUndefined();
    expect(loose[0]!.function.parameters.required).toEqual(['name']);
    expect(loose[0]!.function.parameters.properties.version!.type).toBe('string');
  });

  it('selects like /prompt: names, tag and q, never skills that disable model invocation', async () => {
    const enumOf = async (query: string) =>
      ((await ctx.app.inject(`/tools?${query}`)).json() as AnthropicToolJson[])[0]!.input_schema.properties
        .name!.enum;
    expect(await enumOf(`name=${beta}&name=${hidden}`)).toEqual([beta]);
    expect(await enumOf(`name=${alpha},${beta}`)).toEqual([alpha, beta].sort());
    expect(await enumOf('q=zebra')).toEqual([alpha]);
    expect(await enumOf('')).not.toContain(hidden);
    const staged = uniqueName('staged');
    await publishSkill(staged, 'Staged.', undefined, 'tag=canary');
    expect(await enumOf('tag=canary')).toEqual([staged]);
    // An empty selection leaves the enum out rather than sending an unsatisfiable `enum: []`.
    const none = (await ctx.app.inject('/tools?q=xyzzy-plugh-qwrtz')).json() as AnthropicToolJson[];
    expect(none[0]!.input_schema.properties.name!.enum).toBeUndefined();
    expect(none[0]!.input_schema.properties.name!.type).toBe('string');
  });

  it('rejects an unknown provider with a problem', async () => {
    const res = await ctx.app.inject('/tools?provider=gemini');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('answers 304 to its own ETag, per provider', async () => {
    const first = await ctx.app.inject('/tools?provider=openai');
    const etag = String(first.headers.etag);
    const again = await ctx.app.inject({ url: '/tools?provider=openai', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const other = await ctx.app.inject({
      url: '/tools?provider=anthropic',
      headers: { 'if-none-match': etag },
    });
    expect(other.statusCode).toBe(200);
  });

  it('reflects a publish, a tag move and a yank on the very next request', async () => {
    const name = uniqueName('fresh');
    const url = '/tools?tag=stable';
    const enumFrom = (body: string) =>
      (JSON.parse(body) as AnthropicToolJson[])[0]!.input_schema.properties.name!.enum ?? [];
    const before = await ctx.app.inject(url);
    expect(enumFrom(before.body)).not.toContain(name);

    await publishSkill(name, 'Fresh.', undefined, 'tag=stable');
    const published = await ctx.app.inject({
      url,
      headers: { 'if-none-match': String(before.headers.etag) },
    });
    expect(published.statusCode).toBe(200);
    expect(enumFrom(published.body)).toContain(name);

    await publishSkill(name, 'Fresh, second version.');
    const moved = await ctx.app.inject({
      method: 'PUT',
      url: `/skills/${name}/tags/stable`,
      headers: adminAuth,
      payload: { version: '1.0.1' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const afterMove = await ctx.app.inject({
      url,
      headers: { 'if-none-match': String(published.headers.etag) },
    });
    expect(afterMove.statusCode).toBe(200);

    const yank = await ctx.app.inject({
      method: 'DELETE',
      url: `/skills/${name}/versions/1.0.1`,
      headers: adminAuth,
    });
    expect(yank.statusCode, yank.body).toBe(200);
    const afterYank = await ctx.app.inject({
      url,
      headers: { 'if-none-match': String(afterMove.headers.etag) },
    });
    expect(afterYank.statusCode).toBe(200);
    // The yank took the stable tag with it: the skill is gone from the stable selection.
    expect(enumFrom(afterYank.body)).not.toContain(name);
  });
});

describe('tool renderings', () => {
  it('type-check against the providers’ SDK types', () => {
    const anthropic: Anthropic.Messages.Tool[] = anthropicTools(['a-skill']);
    const openai: OpenAI.Chat.Completions.ChatCompletionTool[] = openAiTools(['a-skill']);
    expect(anthropic).toHaveLength(2);
    expect(openai).toHaveLength(2);
  });

  it('leaves the enum out above the limit', () => {
    const names = Array.from({ length: MAX_ENUM_NAMES + 1 }, (_, i) => `skill-${i}`);
    expect(skillTools(names)[0]!.inputSchema.properties.name!.enum).toBeUndefined();
    expect(skillTools(names.slice(1))[0]!.inputSchema.properties.name!.enum).toHaveLength(MAX_ENUM_NAMES);
  });
});
