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
  openAiErrorSchema,
  openAiSkillDeletedSchema,
  openAiSkillListSchema,
  openAiSkillSchema,
  openAiUpdateSkillBodySchema,
  openAiVersionDeletedSchema,
  openAiVersionListSchema,
  openAiVersionSchema,
} from '../../wire/index.js';
import { readableNamespaces } from '../read-mounts.js';
import { requestNamespace } from '../schemas.js';
import { useVendorErrors, vendorErrorResponses, vendorParams, vendorUpload } from '../vendor-faces.js';

const errors = vendorErrorResponses(openAiErrorSchema);

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().max(100).optional().describe('id of the last object of the page before'),
  order: z.enum(['asc', 'desc']).default('asc').describe('By name for skills, by publish order for versions'),
});
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
const versionIdOf = (rowId: string) => `skillver_${rowId.replace(/-/g, '')}`;

function listOf<T extends { id: string }>(data: T[], more: boolean) {
  return {
    object: 'list' as const,
    data,
    has_more: more,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
  };
}

/**
 * OpenAI's Skills API (`client.skills` of the openai SDK, baseURL `<registry>/openai/v1`) over the
 * registry's skills in the `default` namespace. Versions are numbered in publish order ("1", "2", ...);
 * the default version is the registry's `latest` tag.
 */
const openAiRoutes: FastifyPluginAsyncZod<{ registry: Registry; prefixed?: boolean }> = async (
  app,
  { registry, prefixed = false },
) => {
  const { where, idParams, versionParams } = vendorParams(
    prefixed,
    "The version's number in publish order, or its semver, or latest",
  );
  const op = (id: string) => (prefixed ? `${id}InNamespace` : id);
  const vendor = registry.vendorSkills;
  const { limits } = app.config;
  const inNamespace = { namespace: requestNamespace };
  const namespaceOf = (request: FastifyRequest) => requestNamespace(request);
  const tags = ['openai'];

  useVendorErrors(app, 'openai', '/openai/v1/skills...');

  async function skillDocument(
    namespace: string,
    row: VendorSkillRow,
  ): Promise<z.infer<typeof openAiSkillSchema>> {
    const versions = await vendor.versions(namespace, VendorSkillService.idOf(row.id));
    const numberOf = (version: string) =>
      String(versions.find((v) => v.version === version)?.ordinal ?? version);
    return {
      id: VendorSkillService.idOf(row.id),
      object: 'skill',
      name: row.name,
      description: row.description,
      default_version: numberOf(row.latestVersion),
      latest_version: String(Math.max(...versions.map((v) => v.ordinal))),
      created_at: seconds(row.createdAt),
    };
  }

  function versionDocument(skillId: string, row: VendorVersionRow): z.infer<typeof openAiVersionSchema> {
    return {
      id: versionIdOf(row.id),
      object: 'skill.version',
      skill_id: skillId,
      version: String(row.ordinal),
      name: row.name,
      description: row.description,
      created_at: seconds(row.createdAt),
    };
  }

  app.post(
    '/skills',
    {
      onRequest: app.authorize('publish', inNamespace),
      schema: {
        tags,
        summary: 'Create a skill (client.skills.create)',
        description:
          'multipart/form-data: `files[]` parts (the SDK sends base names, so folders are lost) or one zip part named `files` (folders kept). Publishes the first version like POST /skills; a live skill of the same name is a 409.',
        operationId: op('openaiCreateSkill'),
        ...(prefixed ? { params: where } : {}),
        response: { 200: openAiSkillSchema, ...errors },
      },
    },
    async (request) => {
      const { upload } = await vendorUpload(request, limits);
      const row = await vendor.create(namespaceOf(request), upload, {
        actor: request.principal!.actor,
        readable: readableNamespaces(request),
      });
      return skillDocument(namespaceOf(request), row);
    },
  );

  app.get(
    '/skills',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'List skills (client.skills.list)',
        operationId: op('openaiListSkills'),
        ...(prefixed ? { params: where } : {}),
        querystring: listQuery,
        response: {
          200: openAiSkillListSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const namespace = namespaceOf(request);
      const { limit, after, order } = request.query;
      const afterName = after === undefined ? undefined : (await vendor.skill(namespace, after)).name;
      // Names descending are listed by reading every live name once: catalogues of a few thousand.
      if (order === 'desc') {
        const all = (await vendor.list(namespace, 100_000)).skills.reverse();
        const start = afterName === undefined ? 0 : all.findIndex((row) => row.name === afterName) + 1;
        const page = all.slice(start, start + limit);
        return listOf(
          await Promise.all(page.map((row) => skillDocument(namespace, row))),
          start + limit < all.length,
        );
      }
      const { skills, more } = await vendor.list(namespace, limit, afterName);
      return listOf(await Promise.all(skills.map((row) => skillDocument(namespace, row))), more);
    },
  );

  app.get(
    '/skills/:skill_id',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'Retrieve a skill (client.skills.retrieve)',
        operationId: op('openaiRetrieveSkill'),
        params: idParams,
        response: { 200: openAiSkillSchema, ...errors },
      },
    },
    async (request) =>
      skillDocument(namespaceOf(request), await vendor.skill(namespaceOf(request), request.params.skill_id)),
  );

  app.post(
    '/skills/:skill_id',
    {
      preHandler: app.authorize('admin', inNamespace),
      schema: {
        tags,
        summary: 'Set the default version (client.skills.update)',
        description:
          "Moves the registry's `latest` tag to the version (pinned, as a tag moved by hand), so every face serves it.",
        operationId: op('openaiUpdateSkill'),
        params: idParams,
        body: openAiUpdateSkillBodySchema,
        response: { 200: openAiSkillSchema, ...errors },
      },
    },
    async (request) => {
      const namespace = namespaceOf(request);
      const row = await vendor.setDefault(
        namespace,
        request.params.skill_id,
        request.body.default_version,
        request.principal!.actor,
      );
      return skillDocument(namespace, row);
    },
  );

  app.delete(
    '/skills/:skill_id',
    {
      preHandler: app.authorize('admin', inNamespace),
      schema: {
        tags,
        summary: 'Delete a skill (client.skills.delete)',
        description: 'Yanks every version: the skill leaves every list and answers 404 here.',
        operationId: op('openaiDeleteSkill'),
        params: idParams,
        response: {
          200: openAiSkillDeletedSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      await vendor.deleteSkill(namespaceOf(request), request.params.skill_id, request.principal!.actor);
      return { id: request.params.skill_id, deleted: true, object: 'skill.deleted' as const };
    },
  );

  const zipReply = async (request: FastifyRequest, id: string, version: string) =>
    vendor.download(namespaceOf(request), id, version);

  app.get(
    '/skills/:skill_id/content',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'Download the default version (client.skills.content.retrieve)',
        operationId: op('openaiSkillContent'),
        params: idParams,
        response: { 200: z.any().describe('zip bytes'), ...errors },
      },
    },
    async (request, reply) => {
      const zip = await zipReply(request, request.params.skill_id, 'latest');
      return reply.type('application/zip').send(zip.bytes);
    },
  );

  app.post(
    '/skills/:skill_id/versions',
    {
      onRequest: app.authorize('publish', inNamespace),
      schema: {
        tags,
        summary: 'Create a version (client.skills.versions.create)',
        description:
          'As create. The default version stays put unless the `default` field is true (then `latest` points at the new version).',
        operationId: op('openaiCreateSkillVersion'),
        params: idParams,
        response: { 200: openAiVersionSchema, ...errors },
      },
    },
    async (request) => {
      const { upload, fields } = await vendorUpload(request, limits);
      const id = request.params.skill_id;
      const row = await vendor.createVersion(namespaceOf(request), id, upload, {
        actor: request.principal!.actor,
        readable: readableNamespaces(request),
        latest: fields.default === 'true' ? 'new' : 'keep',
      });
      return versionDocument(id, row);
    },
  );

  app.get(
    '/skills/:skill_id/versions',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'List versions (client.skills.versions.list)',
        operationId: op('openaiListSkillVersions'),
        params: idParams,
        querystring: listQuery,
        response: {
          200: openAiVersionListSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const id = request.params.skill_id;
      const { limit, after, order } = request.query;
      const all = (await vendor.versions(namespaceOf(request), id)).map((row) => versionDocument(id, row));
      all.sort((a, b) =>
        order === 'asc' ? Number(a.version) - Number(b.version) : Number(b.version) - Number(a.version),
      );
      const start = after === undefined ? 0 : all.findIndex((row) => row.id === after) + 1;
      return listOf(all.slice(start, start + limit), start + limit < all.length);
    },
  );

  app.get(
    '/skills/:skill_id/versions/:version',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'Retrieve a version (client.skills.versions.retrieve)',
        operationId: op('openaiRetrieveSkillVersion'),
        params: versionParams,
        response: { 200: openAiVersionSchema, ...errors },
      },
    },
    async (request) => {
      const { skill_id: id, version } = request.params;
      return versionDocument(id, await vendor.version(namespaceOf(request), id, version));
    },
  );

  app.delete(
    '/skills/:skill_id/versions/:version',
    {
      preHandler: app.authorize('admin', inNamespace),
      schema: {
        tags,
        summary: 'Delete a version (client.skills.versions.delete)',
        description:
          'Yanks the version; `latest` (the default) moves to the highest version left when it pointed there.',
        operationId: op('openaiDeleteSkillVersion'),
        params: versionParams,
        response: {
          200: openAiVersionDeletedSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { skill_id: id, version } = request.params;
      const row = await vendor.deleteVersion(namespaceOf(request), id, version, request.principal!.actor);
      return {
        id: versionIdOf(row.id),
        deleted: true,
        object: 'skill.version.deleted' as const,
        version: String(row.ordinal),
      };
    },
  );

  app.get(
    '/skills/:skill_id/versions/:version/content',
    {
      preHandler: app.authorize('read', inNamespace),
      schema: {
        tags,
        summary: 'Download a version (client.skills.versions.content.retrieve)',
        operationId: op('openaiSkillVersionContent'),
        params: versionParams,
        response: { 200: z.any().describe('zip bytes'), ...errors },
      },
    },
    async (request, reply) => {
      const zip = await zipReply(request, request.params.skill_id, request.params.version);
      return reply.type('application/zip').send(zip.bytes);
    },
  );
};

export default openAiRoutes;
