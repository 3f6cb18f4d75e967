import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArchive } from '../../src/bundle/archive-read.js';
import { writeZip } from '../../src/bundle/archive-write.js';
import { bundleDigest } from '../../src/bundle/digest.js';
import { DEFAULT_LIMITS } from '../../src/bundle/types.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/context.js';
import { listening } from '../helpers/http.js';

// The official openai SDK against /openai/v1: the whole client.skills cycle, paging, typed errors,
// and one model under both vendor faces and the native API.

let ctx: TestApp;
let base: string;
let client: OpenAI;

beforeAll(async () => {
  ctx = await createTestApp();
  base = await listening(ctx.app);
  client = new OpenAI({ baseURL: `${base}/openai/v1`, apiKey: ADMIN_TOKEN, maxRetries: 0 });
});
afterAll(async () => ctx?.close());

const skillText = (name: string, description: string) =>
  skillMd({ name, description, body: `# ${name}\n\nDo the thing.\n` });

describe('client.skills against the registry', () => {
  it('creates from a zip (folders kept) and from flat files, versions, sets the default, downloads, deletes', async () => {
    const name = uniqueName('oai-cycle');
    const bundle = files({
      'SKILL.md': skillText(name, 'Summarises incident reports.'),
      'references/template.md': '# Template\n',
    });
    const created = await client.skills.create({
      files: await toFile(Buffer.from(await writeZip(bundle)), `${name}.zip`, { type: 'application/zip' }),
    });
    expect(created).toMatchObject({
      object: 'skill',
      name,
      description: 'Summarises incident reports.',
      default_version: '1',
      latest_version: '1',
    });
    expect(created.id).toMatch(/^skill_[0-9a-f]{32}$/);
    expect(Number.isInteger(created.created_at)).toBe(true);
    const native = (await ctx.app.inject({ url: `/skills/${name}` })).json();
    expect(native.files.map((f: { path: string }) => f.path).sort()).toEqual([
      'SKILL.md',
      'references/template.md',
    ]);

    // A new version without default: the default stays put, natively too.
    const v2 = await client.skills.versions.create(created.id, {
      files: [await toFile(Buffer.from(skillText(name, 'Summarises incident reports, v2.')), 'SKILL.md')],
    });
    expect(v2).toMatchObject({ object: 'skill.version', skill_id: created.id, version: '2' });
    expect(v2.id).toMatch(/^skillver_[0-9a-f]{32}$/);
    let skill = await client.skills.retrieve(created.id);
    expect(skill).toMatchObject({ default_version: '1', latest_version: '2' });
    expect((await ctx.app.inject({ url: `/skills/${name}` })).json().version).toBe('1.0.0');

    // With default: true, it becomes the default; update moves it back.
    const v3 = await client.skills.versions.create(created.id, {
      default: true,
      files: [await toFile(Buffer.from(skillText(name, 'Summarises incident reports, v3.')), 'SKILL.md')],
    });
    expect(v3.version).toBe('3');
    expect((await client.skills.retrieve(created.id)).default_version).toBe('3');
    expect((await ctx.app.inject({ url: `/skills/${name}` })).json().version).toBe('1.0.2');
    skill = await client.skills.update(created.id, { default_version: '2' });
    expect(skill.default_version).toBe('2');
    expect((await ctx.app.inject({ url: `/skills/${name}` })).json().version).toBe('1.0.1');

    const listed = [];
    for await (const version of client.skills.versions.list(created.id, { order: 'asc' }))
      listed.push(version.version);
    expect(listed).toEqual(['1', '2', '3']);
    expect((await client.skills.versions.retrieve('2', { skill_id: created.id })).description).toBe(
      'Summarises incident reports, v2.',
    );

    // Downloads are the versions as published: the same digests natively.
    const content = Buffer.from(await (await client.skills.content.retrieve(created.id)).arrayBuffer());
    expect(bundleDigest(await readArchive(content, 'zip', DEFAULT_LIMITS))).toBe(
      (await ctx.app.inject({ url: `/skills/${name}` })).json().digest,
    );
    const first = Buffer.from(
      await (await client.skills.versions.content.retrieve('1', { skill_id: created.id })).arrayBuffer(),
    );
    expect(bundleDigest(await readArchive(first, 'zip', DEFAULT_LIMITS))).toBe(native.digest);
    // Both downloads are counted, as any bundle download.
    const usage = (await ctx.app.inject({ url: `/skills/${name}/usage?days=1` })).json();
    expect(usage.totals.downloads).toBe(2);

    const deleted = await client.skills.versions.delete('3', { skill_id: created.id });
    expect(deleted).toMatchObject({ deleted: true, object: 'skill.version.deleted', version: '3' });
    await expect(client.skills.versions.retrieve('3', { skill_id: created.id })).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    expect(await client.skills.delete(created.id)).toEqual({
      id: created.id,
      deleted: true,
      object: 'skill.deleted',
    });
    await expect(client.skills.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await ctx.app.inject({ url: `/skills/${name}` })).statusCode).toBe(404);
  });

  it('one model: a skill created natively or through Anthropic is the same skill, id and digest through OpenAI', async () => {
    const name = uniqueName('oai-cross');
    expect((await publish(ctx.app, files({ 'SKILL.md': skillText(name, 'Native first.') }))).statusCode).toBe(
      201,
    );
    const anthropic = new Anthropic({ baseURL: `${base}/anthropic`, apiKey: ADMIN_TOKEN, maxRetries: 0 });
    const byName = async () => {
      for await (const skill of client.skills.list()) if (skill.name === name) return skill;
      return undefined;
    };
    const viaOpenAi = (await byName())!;
    expect(viaOpenAi).toBeDefined();
    const viaAnthropic = await anthropic.beta.skills.retrieve(viaOpenAi.id);
    expect(viaAnthropic.latest_version_id).toBe('1.0.0');
    // A version added through Anthropic is version 2 on OpenAI (made default: Anthropic's latest follows).
    await anthropic.beta.skills.versions.create(viaOpenAi.id, {
      files: [await toFile(Buffer.from(skillText(name, 'Through Anthropic.')), `${name}/SKILL.md`)],
    });
    const after = await client.skills.retrieve(viaOpenAi.id);
    expect(after).toMatchObject({
      default_version: '2',
      latest_version: '2',
      description: 'Through Anthropic.',
    });
    const zip = Buffer.from(await (await client.skills.content.retrieve(viaOpenAi.id)).arrayBuffer());
    const nativeDigest = (await ctx.app.inject({ url: `/skills/${name}` })).json().digest;
    expect(bundleDigest(await readArchive(zip, 'zip', DEFAULT_LIMITS))).toBe(nativeDigest);
    // Every other face serves it: the discovery index and MCP's catalogue list it.
    const index = (await ctx.app.inject({ url: '/.well-known/agent-skills/index.json' })).json();
    expect(index.skills.find((entry: { name: string }) => entry.name === name)?.version).toBe('1.0.1');
    const prompt = (await ctx.app.inject({ url: `/prompt?format=json&q=${name}` })).json();
    expect(JSON.stringify(prompt)).toContain(name);
    const body = (await ctx.app.inject({ url: `/skills/${name}/content` })).body;
    expect(body).toContain(`# ${name}`);
  });

  it('pages with after and has_more, and answers typed errors in OpenAI shape', async () => {
    const prefix = uniqueName('oai-page');
    for (let i = 0; i < 5; i++) {
      expect(
        (await publish(ctx.app, files({ 'SKILL.md': skillText(`${prefix}-${i}`, `Number ${i}.`) })))
          .statusCode,
      ).toBe(201);
    }
    let page = await client.skills.list({ limit: 2 });
    const seen = [...page.data.map((s) => s.name)];
    let pages = 1;
    while (page.hasNextPage()) {
      page = await page.getNextPage();
      seen.push(...page.data.map((s) => s.name));
      pages++;
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    for (let i = 0; i < 5; i++) expect(seen).toContain(`${prefix}-${i}`);
    expect(new Set(seen).size).toBe(seen.length);

    const bad = new OpenAI({ baseURL: `${base}/openai/v1`, apiKey: 'nope', maxRetries: 0 });
    const unauthorized = await bad.skills.list().catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((unauthorized as InstanceType<typeof OpenAI.APIError>).type).toBe('authentication_error');

    const missing = await client.skills
      .retrieve('skill_ffffffffffffffffffffffffffffffff')
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);

    const name = uniqueName('oai-dup');
    await client.skills.create({ files: [await toFile(Buffer.from(skillText(name, 'Once.')), 'SKILL.md')] });
    const twice = await client.skills
      .create({ files: [await toFile(Buffer.from(skillText(name, 'Once.')), 'SKILL.md')] })
      .catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(OpenAI.ConflictError);

    const badDefault = await client.skills
      .update((await client.skills.list({ limit: 1 })).data[0]!.id, { default_version: '99' })
      .catch((e: unknown) => e);
    expect(badDefault).toBeInstanceOf(OpenAI.NotFoundError);

    const raw = await fetch(`${base}/openai/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(raw.status).toBe(400);
    const body = await raw.json();
    expect(body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(body.error.message).toContain('multipart/form-data');
  });
});

describe('the vendor faces over one namespace', () => {
  it('serve /namespaces/{ns}/openai/v1 and /namespaces/{ns}/anthropic under a token limited to that namespace', async () => {
    const ns = uniqueName('vendor-ns');
    const tokenRes = await ctx.app.inject({
      method: 'POST',
      url: '/tokens',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { name: uniqueName('team-publisher'), scopes: ['read', 'publish'], namespaces: [ns] },
    });
    expect(tokenRes.statusCode, tokenRes.body).toBe(201);
    const secret = tokenRes.json().secret as string;
    const team = new OpenAI({ baseURL: `${base}/namespaces/${ns}/openai/v1`, apiKey: secret, maxRetries: 0 });
    const name = uniqueName('team-skill');
    const created = await team.skills.create({
      files: [await toFile(Buffer.from(skillText(name, 'A team skill.')), 'SKILL.md')],
    });
    expect(created.name).toBe(name);
    // Published into the namespace, natively.
    expect((await ctx.app.inject({ url: `/namespaces/${ns}/skills/${name}` })).json().namespace).toBe(ns);
    expect((await ctx.app.inject({ url: `/skills/${name}` })).statusCode).toBe(404);
    const anthropic = new Anthropic({
      baseURL: `${base}/namespaces/${ns}/anthropic`,
      apiKey: secret,
      maxRetries: 0,
    });
    expect((await anthropic.beta.skills.retrieve(created.id)).latest_version_id).toBe('1.0.0');
    // The same token may not write to the default namespace's face.
    const root = new OpenAI({ baseURL: `${base}/openai/v1`, apiKey: secret, maxRetries: 0 });
    const outside = await root.skills
      .create({ files: [await toFile(Buffer.from(skillText(uniqueName('outside'), 'No.')), 'SKILL.md')] })
      .catch((e: unknown) => e);
    expect(outside).toBeInstanceOf(OpenAI.PermissionDeniedError);
    // Ids are per namespace: the root face does not serve the team's skill.
    await expect(client.skills.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
