import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../services/registry.js';
import {
  QUARANTINE_STATES,
  type QuarantinedVersion,
  quarantineListSchema,
  rescanReportSchema,
  type ScanResult,
  signingKeysSchema,
} from '../../wire/index.js';
import { problemResponses } from '../problem.js';
import { namespaceName } from '../schemas.js';

/** The security scan's admin routes: the quarantine and rescans. */
const trustRoutes: FastifyPluginAsyncZod<{ registry: Registry }> = async (app, { registry }) => {
  app.get(
    '/quarantine',
    {
      preHandler: app.authorize('admin'),
      schema: {
        tags: ['trust'],
        summary: 'Versions in quarantine',
        description:
          'Versions the security scan blocked at publish: stored for review, never served or listed anywhere else, and no tag may point at them. `state=held` (default) lists those awaiting review; `state=rejected` those an admin rejected. Review one with `POST /skills/{name}/versions/{version}/review`.',
        operationId: 'listQuarantine',
        querystring: z.object({
          state: z.enum(QUARANTINE_STATES).default('held'),
          limit: z.coerce.number().int().min(1).max(500).default(100),
        }),
        response: {
          200: quarantineListSchema,
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const rows = await registry.adminLists.quarantined(request.query.state, request.query.limit);
      return {
        items: rows.map((row) => ({
          ...row,
          state: row.state as QuarantinedVersion['state'],
          createdAt: row.createdAt.toISOString(),
          scan: row.scan as ScanResult | null,
        })),
      };
    },
  );

  app.post(
    '/admin/rescan',
    {
      preHandler: app.authorize('admin'),
      schema: {
        tags: ['trust'],
        summary: 'Scan every servable version again',
        description:
          'Scans every version that may be served (yanked ones included) with the present rules and SKILLREG_SCANNER_CMD, and stores the new verdicts. A version that now blocks leaves serving at once on every replica: it goes into quarantine (GET /quarantine), its tags are removed and `latest` falls back as on a yank. `namespace=` narrows the rescan to one namespace. Answers when done; a large catalogue takes a while (about 4 ms per skill on one core).',
        operationId: 'rescan',
        querystring: z.object({
          namespace: namespaceName.optional().describe('Rescan only this namespace'),
        }),
        response: {
          200: rescanReportSchema,
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request) =>
      registry.rescan.rescan({
        actor: request.principal!.actor,
        namespace: request.query.namespace,
        log: request.log,
      }),
  );

  app.get(
    '/.well-known/skillreg/keys.json',
    {
      // Public keys are no secret, but a registry whose reads need a token keeps its surface closed.
      preHandler: app.authorize('read', { anyNamespace: true }),
      schema: {
        tags: ['trust'],
        summary: "The registry's signing keys (JWKS)",
        description:
          'Every Ed25519 public key the registry signs or signed attestations with (old keys stay listed after a rotation), as a JSON Web Key Set; `kid` matches the `keyid` of an attestation signature. Public unless SKILLREG_READ_AUTH is on.',
        operationId: 'getSigningKeys',
        response: {
          200: signingKeysSchema,
          ...problemResponses(401, 403),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return registry.signing.jwks();
    },
  );
};

export default trustRoutes;
