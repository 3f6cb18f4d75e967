import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../services/registry.js';
import {
  type VendorSkillRow,
  VendorSkillService,
  type VendorVersionRow,
} from '../../services/vendor-skills.js';
import {
  anthropicAnySkillSchema,
  anthropicErrorSchema,
  anthropicSkillDeletedSchema,
  anthropicSkillListSchema,
  anthropicVersionDeletedSchema,
  anthropicVersionListSchema,
  anthropicVersionSchema,
} from '../../wire/index.js';
import { readableNamespaces } from '../read-mounts.js';
import { requestNamespace } from '../schemas.js';
import { useVendorErrors, vendorErrorResponses, vendorParams, vendorUpload } from '../vendor-faces.js';

/** Whether the request asks for the 2025-10-02 beta's shapes. */
function legacyBeta(request: FastifyRequest): boolean {
  const beta = request.headers['anthropic-beta'];
  return (Array.isArray(beta) ? beta.join(',') : (beta ?? '')).includes('skills-2025-10-02');
}

const errors = vendorErrorResponses(anthropicErrorSchema);

const betaQuery = {
  beta: z.string().optional().describe('The SDK sends beta=true; ignored'),
};
const pageQuery = z.object({
  ...betaQuery,
  limit: z.coerce.number().int().min(1).max(100).default(20),
  page: z.string().max(400).optional().describe('next_page of the page before'),
  source: z.string().max(40).optional().describe('custom lists every skill; anthropic lists none'),
});
function skillDocument(row: VendorSkillRow, legacy = false): z.infer<typeof anthropicAnySkillSchema> {
  if (legacy) {
    return {
      id: VendorSkillService.idOf(row.id),
      type: 'skill',
      display_title: row.displayName ?? row.name,
      latest_version: row.latestVersion,
      source: 'custom',
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
  return {
    id: VendorSkillService.idOf(row.id),
    type: 'skill',
    display_name: row.displayName ?? row.name,
    latest_version_id: row.latestVersion,
    source: { type: 'custom' },
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function versionDocument(skillId: string, row: VendorVersionRow): z.infer<typeof anthropicVersionSchema> {
  return {
    id: row.version,
    type: 'skill_version',
    skill_id: skillId,
    version: row.version,
    name: row.name,
    description: row.description,
    created_at: row.createdAt.toISOString(),
  };
}

const encodePage = (value: string) => Buffer.from(value, 'utf8').toString('base64url');
const decodePage = (page: string | undefined) =>
  page ? Buffer.from(page, 'base64url').toString('utf8') : undefined;

/**
 * Anthropic's Skills API (`client.beta.skills` of @anthropic-ai/sdk, baseURL `<registry>/anthropic`)
 * over the registry's skills in the `default` namespace: the key comes in X-Api-Key, errors go out in
 * Anthropic's shape, and every call is a registry read or write under the same scopes and audit.
 */
const anthropicRoutes: FastifyPluginAsyncZod<{ registry: Registry; prefixed?: boolean }> = async (
  app,
  { registry, prefixed = false },
) => {
  const { where, idParams, versionParams } = vendorParams(prefixed, 'A version, or latest');
  const op = (id: string) => (prefixed ? `${id}InNamespace` : id);
  const vendor = registry.vendorSkills;
  const { limits } = app.config;
  const inNamespace = { namespace: requestNamespace };
  const namespaceOf = (request: FastifyRequest) => requestNamespace(request);

  // The SDK sends the key as X-Api-Key; the registry's auth reads a bearer token.
  app.addHook('onRequest', async (request) => {
    const key = request.headers['x-api-key'];
    if (request.headers.authorization === undefined && typeof key === 'string' && key !== '') {
      request.headers.authorization = `Bearer ${key}`;
    }
  });
  useVendorErrors(app, 'anthropic', '/anthropic/v1/skills...');

  const tags = ['anthropic'];

  app.post(
    '/v1/skills',
    {
      onRequest: app.authorize('publish', inNamespace),
      schema: {
        tags,
        summary: 'Create a skill (client.beta.skills.create)',
        description:
          'multipart/form-data: one `files[]` part per file, the filename its path (one top folder, as the SDK sends, or none), and an optional `display_name`. Publishes the first version like POST /skills (scanned, signed, audited); a live skill of the same name is a 409.',
        operationId: op('anthropicCreateSkill'),
        ...(prefixed ? { params: where } : {}),
        querystring: z.object(betaQuery),
        response: { 200: anthropicAnySkillSchema, ...errors },
      },
    },
    async (request) => {
      const { upload, fields } = await vendorUpload(request, limits);
      const row = await vendor.create(namespaceOf(request), upload, {
        displayName: fields.display_name ?? fields.display_title,
        actor: request.principal!.actor,
        readable: readableNamespaces(request),
      });
      return skillDocument(row, legacyBeta(request));
    },
  );

  app.get(
    '/v1/skills',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'List skills (client.beta.skills.list)',
        description:
          'Live skills by name, `limit` a page (default 20, at most 100); `next_page` is null on the last page.',
        operationId: op('anthropicListSkills'),
        ...(prefixed ? { params: where } : {}),
        querystring: pageQuery,
        response: {
          200: anthropicSkillListSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { limit, page, source } = request.query;
      if (source !== undefined && source !== 'custom') return { data: [], next_page: null };
      const { skills, more } = await vendor.list(namespaceOf(request), limit, decodePage(page));
      return {
        data: skills.map((row) => skillDocument(row, legacyBeta(request))),
        next_page: more ? encodePage(skills.at(-1)!.name) : null,
      };
    },
  );

  app.get(
    '/v1/skills/:skill_id',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'Retrieve a skill (client.beta.skills.retrieve)',
        operationId: op('anthropicRetrieveSkill'),
        params: idParams,
        querystring: z.object(betaQuery),
        response: { 200: anthropicAnySkillSchema, ...errors },
      },
    },
    async (request) =>
      skillDocument(await vendor.skill(namespaceOf(request), request.params.skill_id), legacyBeta(request)),
  );

  app.delete(
    '/v1/skills/:skill_id',
    {
      preHandler: app.authorize('admin', inNamespace),
      schema: {
        tags,
        summary: 'Delete a skill (client.beta.skills.delete)',
        description:
          'Yanks every version: the skill leaves every list and answers 404 here; exact-version reads of the native API keep working, as after any yank.',
        operationId: op('anthropicDeleteSkill'),
        params: idParams,
        querystring: z.object(betaQuery),
        response: { 200: anthropicSkillDeletedSchema, ...errors },
      },
    },
    async (request) => {
      await vendor.deleteSkill(namespaceOf(request), request.params.skill_id, request.principal!.actor);
      return { id: request.params.skill_id, type: 'skill_deleted' as const };
    },
  );

  app.post(
    '/v1/skills/:skill_id/versions',
    {
      onRequest: app.authorize('publish', inNamespace),
      schema: {
        tags,
        summary: 'Create a version (client.beta.skills.versions.create)',
        description:
          'multipart `files[]` as for create; the frontmatter must name the same skill. Identical content answers the existing version.',
        operationId: op('anthropicCreateSkillVersion'),
        params: idParams,
        querystring: z.object(betaQuery),
        response: { 200: anthropicVersionSchema, ...errors },
      },
    },
    async (request) => {
      const { upload } = await vendorUpload(request, limits);
      const id = request.params.skill_id;
      return versionDocument(
        id,
        await vendor.createVersion(namespaceOf(request), id, upload, {
          actor: request.principal!.actor,
          readable: readableNamespaces(request),
        }),
      );
    },
  );

  app.get(
    '/v1/skills/:skill_id/versions',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'List versions (client.beta.skills.versions.list)',
        description: 'Servable versions, newest first.',
        operationId: op('anthropicListSkillVersions'),
        params: idParams,
        querystring: pageQuery,
        response: {
          200: anthropicVersionListSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const id = request.params.skill_id;
      const all = await vendor.versions(namespaceOf(request), id);
      const start = Number(decodePage(request.query.page) ?? 0) || 0;
      const page = all.slice(start, start + request.query.limit);
      const next = start + page.length;
      return {
        data: page.map((row) => versionDocument(id, row)),
        next_page: next < all.length ? encodePage(String(next)) : null,
      };
    },
  );

  app.get(
    '/v1/skills/:skill_id/versions/:version',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'Retrieve a version (client.beta.skills.versions.retrieve)',
        operationId: op('anthropicRetrieveSkillVersion'),
        params: versionParams,
        querystring: z.object(betaQuery),
        response: { 200: anthropicVersionSchema, ...errors },
      },
    },
    async (request) => {
      const { skill_id: id, version } = request.params;
      return versionDocument(id, await vendor.version(namespaceOf(request), id, version));
    },
  );

  app.delete(
    '/v1/skills/:skill_id/versions/:version',
    {
      preHandler: app.authorize('admin', inNamespace),
      schema: {
        tags,
        summary: 'Delete a version (client.beta.skills.versions.delete)',
        description:
          'Yanks the version: it leaves the lists here and the native catalogue; `latest` moves to the highest version left.',
        operationId: op('anthropicDeleteSkillVersion'),
        params: versionParams,
        querystring: z.object(betaQuery),
        response: { 200: anthropicVersionDeletedSchema, ...errors },
      },
    },
    async (request) => {
      const { skill_id: id, version } = request.params;
      const row = await vendor.deleteVersion(namespaceOf(request), id, version, request.principal!.actor);
      return { id: row.version, type: 'skill_version_deleted' as const };
    },
  );

  app.get(
    '/v1/skills/:skill_id/versions/:version/content',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'Download a version (client.beta.skills.versions.download)',
        description:
          'The zip of the version as published, files at the root: published again natively, it gives the same digest.',
        operationId: op('anthropicDownloadSkillVersion'),
        params: versionParams,
        querystring: z.object(betaQuery),
        response: { 200: z.any().describe('zip bytes'), ...errors },
      },
    },
    async (request, reply) => {
      const { skill_id: id, version } = request.params;
      const zip = await vendor.download(namespaceOf(request), id, version);
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="${zip.name}-${zip.version}.zip"`)
        .send(zip.bytes);
    },
  );
};

export default anthropicRoutes;
