import type Anthropic from '@anthropic-ai/sdk';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  anthropicTools,
  LOAD_SKILL_DESCRIPTION,
  LOAD_SKILL_SEARCH_NOTE,
  MAX_ENUM_NAMES,
  openAiTools,
  READ_SKILL_FILE_DESCRIPTION,
  SEARCH_SKILLS_DESCRIPTION,
  SKILL_NAME_DESCRIPTION,
  SKILL_NAME_SEARCH_DESCRIPTION,
  skillTools,
} from '../../src/render/tool-definitions.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';

type Schema = {
  type: string;
  properties: Record<
    string,
    { type: string | string[]; enum?: string[]; description?: string; minimum?: number; maximum?: number }
  >;
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
    expect(tools.map((tool) => tool.name)).toEqual(['load_skill', 'read_skill_file', 'search_skills']);
    const [load, read] = tools;
    expect(Object.keys(load!).sort()).toEqual(['description', 'input_schema', 'name']);
    expect(load!.description).toBe(`${LOAD_SKILL_DESCRIPTION} ${LOAD_SKILL_SEARCH_NOTE}`);
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
      ['function', 'search_skills', true],
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
    expect(none[0]!.input_schema.properties.name!.description).toContain('no skills are available');
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

describe('GET /tools search_skills', () => {
  const searchTool = <T extends { name?: string; function?: { name: string } }>(tools: T[]) =>
    tools.find((tool) => (tool.name ?? tool.function?.name) === 'search_skills');

  it('is offered to Anthropic with {query, limit?}, the limit bounded', async () => {
    const tools: AnthropicToolJson[] = (await ctx.app.inject('/tools?provider=anthropic')).json();
    const search = searchTool(tools)!;
    expect(search.description).toBe(SEARCH_SKILLS_DESCRIPTION);
    expect(search.description).toMatch(/own words/);
    expect(search.description).toMatch(/any language/);
    expect(search.description).toMatch(/why it matched/);
    expect(search.description).toMatch(/call load_skill with the name/);
    expect(search.input_schema).toMatchObject({
      type: 'object',
      required: ['query'],
      additionalProperties: false,
      properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 50 } },
    });
    const validate = validatorFor(search.input_schema);
    expect(validate({ query: 'turn these CSV files into a slide deck' })).toBe(true);
    expect(validate({ query: 'x', limit: 50 })).toBe(true);
    expect(validate({ query: 'x', limit: 0 })).toBe(false);
    expect(validate({ query: 'x', limit: 51 })).toBe(false);
    expect(validate({ query: 'x', limit: 2.5 })).toBe(false);
    expect(validate({ limit: 5 })).toBe(false);
    expect(validate({ query: 'x', tag: 'beta' })).toBe(false);
  });

  it('is offered to OpenAI strict, every property required and limit nullable', async () => {
    const tools: OpenAiToolJson[] = (await ctx.app.inject('/tools?provider=openai')).json();
    const search = searchTool(tools)!;
    expect(search.function.strict).toBe(true);
    expect(search.function.description).toBe(SEARCH_SKILLS_DESCRIPTION);
    const { parameters } = search.function;
    expect([...parameters.required].sort()).toEqual(['limit', 'query']);
    expect(parameters.properties.limit!.type).toEqual(['integer', 'null']);
    // Numeric bounds are outside the subset strict mode is sure to accept: the description says them.
    expect(parameters.properties.limit!.minimum).toBeUndefined();
    expect(parameters.properties.limit!.description).toMatch(/1 to 50/);
    const validate = validatorFor(parameters);
    expect(validate({ query: 'x', limit: null })).toBe(true);
    expect(validate({ query: 'x', limit: 3 })).toBe(true);
    expect(validate({ query: 'x' })).toBe(false);

    const loose: OpenAiToolJson[] = (await ctx.app.inject('/tools?provider=openai&strict=false')).json();
    const looseSearch = searchTool(loose)!.function;
    expect(looseSearch.strict).toBeUndefined();
    expect(looseSearch.parameters.required).toEqual(['query']);
    expect(looseSearch.parameters.properties.limit).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 50,
    });
  });

  it('is left out for a selection that names its skills, unless mode=search asks for it', async () => {
    const names = async (query: string) =>
      ((await ctx.app.inject(`/tools?${query}`)).json() as AnthropicToolJson[]).map((tool) => tool.name);
    expect(await names(`name=${alpha}`)).toEqual(['load_skill', 'read_skill_file']);
    expect(await names('q=zebra')).toEqual(['load_skill', 'read_skill_file']);
    expect(await names('tag=canary')).toContain('search_skills');
    const narrowed = (await ctx.app.inject(`/tools?name=${alpha}`)).json() as AnthropicToolJson[];
    expect(narrowed[0]!.description).toBe(LOAD_SKILL_DESCRIPTION);
    expect(await names(`name=${alpha}&mode=search`)).toEqual([
      'load_skill',
      'read_skill_file',
      'search_skills',
    ]);
  });

  it('mode=search leaves the enum out whatever the catalogue size, for both providers', async () => {
    const anthropic: AnthropicToolJson[] = (await ctx.app.inject('/tools?mode=search')).json();
    const name = anthropic[0]!.input_schema.properties.name!;
    expect(name.enum).toBeUndefined();
    expect(name.description).toBe(SKILL_NAME_SEARCH_DESCRIPTION);
    expect(name.description).toMatch(/<available_skills>/);
    expect(name.description).toMatch(/search_skills/);
    // Any name validates: load_skill accepts whatever search_skills returns.
    expect(validatorFor(anthropic[0]!.input_schema)({ name: 'not-listed-anywhere' })).toBe(true);
    expect(anthropic.map((tool) => tool.name)).toEqual(['load_skill', 'read_skill_file', 'search_skills']);
    // The auto mode of the same catalogue keeps the enum: the difference is the mode alone.
    const auto: AnthropicToolJson[] = (await ctx.app.inject('/tools')).json();
    expect(auto[0]!.input_schema.properties.name!.enum).toContain(alpha);

    const openai: OpenAiToolJson[] = (await ctx.app.inject('/tools?provider=openai&mode=search')).json();
    expect(openai[0]!.function.parameters.properties.name!.enum).toBeUndefined();
    expect(openai[0]!.function.parameters.properties.name!.description).toBe(SKILL_NAME_SEARCH_DESCRIPTION);
    expect(openai.map((tool) => tool.function.name)).toContain('search_skills');
  });

  it('names the mode in the ETag and refuses an unknown mode', async () => {
    const auto = await ctx.app.inject('/tools');
    const search = await ctx.app.inject({
      url: '/tools?mode=search',
      headers: { 'if-none-match': String(auto.headers.etag) },
    });
    expect(search.statusCode).toBe(200);
    const again = await ctx.app.inject({
      url: '/tools?mode=search',
      headers: { 'if-none-match': String(search.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    const bad = await ctx.app.inject('/tools?mode=everything');
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('tool renderings', () => {
  it('type-check against the providers’ SDK types', () => {
    const anthropic: Anthropic.Messages.Tool[] = anthropicTools(['a-skill']);
    const openai: OpenAI.Chat.Completions.ChatCompletionTool[] = openAiTools(['a-skill']);
    expect(anthropic).toHaveLength(3);
    expect(openai).toHaveLength(3);
  });

  it('leaves the enum out above the limit, the name then coming from the prompt or search_skills', () => {
    const names = Array.from({ length: MAX_ENUM_NAMES + 1 }, (_, i) => `skill-${i}`);
    const large = skillTools(names)[0]!.inputSchema.properties.name!;
    expect(large.enum).toBeUndefined();
    expect(large.description).toBe(SKILL_NAME_SEARCH_DESCRIPTION);
    expect(skillTools(names.slice(1))[0]!.inputSchema.properties.name!.enum).toHaveLength(MAX_ENUM_NAMES);
    // Without search_skills beside it, the name can only come from the prompt.
    expect(skillTools(names, { search: false })[0]!.inputSchema.properties.name!.description).toBe(
      SKILL_NAME_DESCRIPTION,
    );
    expect(skillTools(names, { search: false }).map((tool) => tool.name)).not.toContain('search_skills');
    expect(
      skillTools(['a-skill'], { nameEnum: false })[0]!.inputSchema.properties.name!.enum,
    ).toBeUndefined();
  });
});
