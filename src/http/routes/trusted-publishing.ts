import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../services/registry.js';
import {
  oidcExchangeBodySchema,
  oidcExchangeResultSchema,
  trustedPublisherBodySchema,
  trustedPublisherSchema,
  trustedPublishersResponseSchema,
  withoutNul,
} from '../../wire/index.js';
import { problemResponses } from '../problem.js';
import { publicBaseUrl } from '../public-url.js';
import { namespaceParam } from '../schemas.js';

const publisherParams = namespaceParam.extend({
  id: withoutNul(z.string().min(1).max(200)).describe('Binding id, e.g. github-main'),
});

/**
 * Trusted publishing from CI: admins bind namespaces to CI identities, and a CI job exchanges its OIDC
 * ID token for a publish token (CONTRACT.md "Trusted publishing and shadowing").
 */
const trustedPublishingRoutes: FastifyPluginAsyncZod<{ registry: Registry }> = async (app, { registry }) => {
  const { trustedPublishing } = registry;
  // A binding lets a CI identity publish: only an admin token not limited to namespaces makes one.
  const admin = app.authorize('admin');

  app.get(
    '/namespaces/:namespace/trusted-publishers',
    {
      preHandler: admin,
      schema: {
        tags: ['trust'],
        summary: "List a namespace's trusted publishers",
        description: 'The CI identities whose OIDC ID tokens may be exchanged for a publish token here.',
        operationId: 'listTrustedPublishers',
        params: namespaceParam,
        response: { 200: trustedPublishersResponseSchema, ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => ({
      namespace: request.params.namespace,
      items: await trustedPublishing.list(request.params.namespace),
    }),
  );

  app.get(
    '/namespaces/:namespace/trusted-publishers/:id',
    {
      preHandler: admin,
      schema: {
        tags: ['trust'],
        summary: 'One trusted publisher',
        operationId: 'getTrustedPublisher',
        params: publisherParams,
        response: { 200: trustedPublisherSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => trustedPublishing.get(request.params.namespace, request.params.id),
  );

  app.put(
    '/namespaces/:namespace/trusted-publishers/:id',
    {
      preHandler: admin,
      schema: {
        tags: ['trust'],
        summary: 'Bind a namespace to a CI identity',
        description:
          "`issuer` must be one of SKILLREG_OIDC_ISSUERS. Every claim given (`repository` always; `workflow_ref`, `ref`, `environment` optionally) must equal the ID token's claim exactly for POST /oidc/exchange to grant a publish token for this namespace. The namespace need not exist yet: the first trusted publish creates it. Audited.",
        operationId: 'putTrustedPublisher',
        params: publisherParams,
        body: trustedPublisherBodySchema,
        response: {
          200: trustedPublisherSchema.describe('The binding was replaced'),
          201: trustedPublisherSchema.describe('The binding was created'),
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const { namespace, id } = request.params;
      const { publisher, created } = await trustedPublishing.put(
        namespace,
        id,
        request.body,
        request.principal!.actor,
      );
      request.log.info({ event: 'trusted-publisher.put', namespace, id }, 'trusted publisher bound');
      return reply.code(created ? 201 : 200).send(publisher);
    },
  );

  app.delete(
    '/namespaces/:namespace/trusted-publishers/:id',
    {
      preHandler: admin,
      schema: {
        tags: ['trust'],
        summary: 'Remove a trusted publisher',
        description: 'Tokens already exchanged live out their few minutes. Audited.',
        operationId: 'deleteTrustedPublisher',
        params: publisherParams,
        response: { 204: z.null().describe('Removed'), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { namespace, id } = request.params;
      await trustedPublishing.remove(namespace, id, request.principal!.actor);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/oidc/exchange',
    {
      schema: {
        tags: ['trust'],
        summary: 'Exchange a CI OIDC ID token for a publish token',
        description:
          "No bearer token: the body's ID token is the credential. It must be signed by one of SKILLREG_OIDC_ISSUERS (keys from the issuer's discovery document), name this registry as its audience (SKILLREG_OIDC_AUDIENCE, else the public URL), be within its validity, and match a trusted publisher. The answer is a bearer token with scope publish for exactly the bound namespaces, valid 15 minutes; versions published with it carry the CI identity in their attestation. Refusals (401, or 403 when no binding matches) say which check failed in `reason`, and are audited.",
        operationId: 'exchangeOidcToken',
        body: oidcExchangeBodySchema,
        response: {
          201: oidcExchangeResultSchema,
          ...problemResponses(400, 401, 403, 503),
        },
      },
    },
    async (request, reply) => {
      const configured = app.config.oidc.audience;
      const audiences = configured ? [configured] : audiencesOf(publicBaseUrl(request));
      const result = await trustedPublishing.exchange(request.body.token, audiences, request.log);
      return reply.code(201).header('cache-control', 'no-store').send(result);
    },
  );
};

/** The public URL as an audience, with and without a trailing slash (CI configurations write both). */
function audiencesOf(base: string): string[] {
  const bare = base.replace(/\/+$/, '');
  return [bare, `${bare}/`];
}

export default trustedPublishingRoutes;
