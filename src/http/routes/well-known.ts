import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { NotFoundError } from '../../domain/app-errors.js';
import { INDEX_ARCHIVE_FORMAT } from '../../services/discovery.js';
import type { Registry } from '../../services/registry.js';
import { DISCOVERY_SCHEMA, discoveryIndexSchema } from '../../wire/index.js';
import { sendAnswer } from '../answer.js';
import { problemResponses } from '../problem.js';
import { publicBaseUrl } from '../public-url.js';
import { mounted, mountParams, mountProblems, type ReadMount, readAccess, useScope } from '../read-mounts.js';
import { withoutNul } from '../schemas.js';

/** The Agent Skills discovery index, whole and per skill, so `npx skills add <registry-url>` installs. */
const wellKnownRoutes: FastifyPluginAsyncZod<{ registry: Registry; mount: ReadMount }> = async (
  app,
  { registry, mount },
) => {
  const { discovery } = registry;
  const readable = app.authorize('read', readAccess(mount));
  useScope(app, registry, mount);

  app.get(
    '/.well-known/agent-skills/index.json',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'Agent Skills discovery index',
        description: `Every current skill (its \`latest\` version; yanked versions never appear) as an archive entry of the [discovery index 0.2.0](${DISCOVERY_SCHEMA}), so \`npx skills add <registry-url>\` can install from this registry. Each \`url\` is the absolute, version-pinned, installable ${INDEX_ARCHIVE_FORMAT} bundle (files at the archive root; a SKILL.md published without name or description in its frontmatter has them written in) and \`digest\` is the sha256 of exactly the bytes served there. Links use SKILLREG_PUBLIC_URL when set, else the request origin.`,
        ...mounted(mount, 'getAgentSkillsIndex'),
        ...(mount === 'root' ? {} : { params: mountParams(mount) }),
        response: { 200: discoveryIndexSchema, ...problemResponses(...mountProblems(mount, 401, 403)) },
      },
    },
    async (request, reply) => {
      return sendAnswer(request, reply, await discovery.index(request.scope, publicBaseUrl(request)));
    },
  );

  app.get(
    '/skills/:name/.well-known/agent-skills/index.json',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'Discovery index of one skill',
        description:
          'The discovery index restricted to one skill, for installers that look for an index under the URL they are given: `npx skills add <registry-url>/skills/<name>` then downloads only that skill, where `npx skills add <registry-url>` downloads every listed archive before picking.',
        ...mounted(mount, 'getSkillAgentSkillsIndex'),
        params: mountParams(mount).extend({
          name: withoutNul(z.string().min(1).max(200)).describe(
            'Skill name; `name@name` too, which is how `npx skills find` prints an install source',
          ),
        }),
        response: {
          200: discoveryIndexSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request, reply) => {
      const name = sourceSkillName(request.params.name);
      return sendAnswer(
        request,
        reply,
        await discovery.skillIndex(request.scope, name, publicBaseUrl(request)),
      );
    },
  );
};

/**
 * `npx skills find` prints `<source>@<skill>`, and `npx skills add` looks for the index under that
 * whole URL: `<base>/skills/<name>@<name>` is the same one-skill index as `<base>/skills/<name>`.
 */
function sourceSkillName(raw: string): string {
  const at = raw.indexOf('@');
  if (at === -1) return raw;
  const name = raw.slice(0, at);
  const picked = raw.slice(at + 1);
  if (picked !== name) {
    throw new NotFoundError(
      `'${raw}' names skill '${picked}' at the source of skill '${name}'; each source holds one skill: install ${name} from <registry>/skills/${name}, or ${picked} from <registry>/skills/${picked}`,
    );
  }
  return name;
}

export default wellKnownRoutes;
