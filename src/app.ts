import { createServer } from 'node:http';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerFactory,
  type FastifyServerOptions,
} from 'fastify';
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Config } from './config.js';
import { type Database, openDatabase } from './db/client.js';
import { finishOpenApi } from './http/openapi.js';
import authPlugin from './http/plugins/auth.js';
import errorsPlugin from './http/plugins/error-answers.js';
import metricsPlugin from './http/plugins/metrics.js';
import rateLimitPlugin from './http/plugins/rate-limit.js';
import registryContext from './http/plugins/registry-context.js';
import responseCachePlugin from './http/plugins/response-cache.js';
import securityLogPlugin from './http/plugins/security-log.js';
import { sendProblem } from './http/problem.js';
import { MOUNT_PREFIXES } from './http/read-mounts.js';
import { lazyChildLogger } from './http/request-logger.js';
import agentRoutes from './http/routes/agent.js';
import anthropicRoutes from './http/routes/anthropic.js';
import auditRoutes from './http/routes/audit.js';
import clawhubRoutes from './http/routes/clawhub.js';
import cliRoutes from './http/routes/cli.js';
import consoleRoutes from './http/routes/console.js';
import docsRoutes from './http/routes/docs.js';
import gitRoutes from './http/routes/git.js';
import healthRoutes from './http/routes/health.js';
import homeRoutes from './http/routes/home.js';
import mcpRoutes from './http/routes/mcp.js';
import metricsRoutes from './http/routes/metrics.js';
import namespacesRoutes from './http/routes/namespaces.js';
import openAiRoutes from './http/routes/openai.js';
import searchRoutes from './http/routes/search.js';
import skillsReadRoutes from './http/routes/skills-read.js';
import skillsWriteRoutes from './http/routes/skills-write.js';
import tokensRoutes from './http/routes/tokens.js';
import trustRoutes from './http/routes/trust.js';
import trustedPublishingRoutes from './http/routes/trusted-publishing.js';
import usageRoutes from './http/routes/usage.js';
import viewsRoutes from './http/routes/views.js';
import wellKnownRoutes from './http/routes/well-known.js';
import { packageVersion } from './process/package-version.js';
import { requestIdFrom } from './requests/request-id.js';
import { openRegistry, type Registry } from './services/registry.js';
import { loadSeeds } from './services/seed.js';

export interface BuildAppOptions {
  config: Config;
  /** An open database; when absent one is opened from the config and closed with the app. */
  database?: Database;
  /** Overrides the pino logger options (tests pass false). */
  logger?: FastifyServerOptions['logger'];
}

/** Pino options: JSON for machines, pretty lines when a person runs it in a terminal. */
export function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'],
      censor: '[redacted]',
    },
    ...(process.stdout.isTTY && process.env.NODE_ENV !== 'production'
      ? {
          transport: {
            target: 'pino-pretty',
            options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' },
          },
        }
      : {}),
  };
}

/**
 * Builds the whole service: migrations applied, seeds loaded, every route registered.
 * server.ts, the CLI and the tests all start the service through this one function.
 */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const ownsDatabase = options.database === undefined;
  const database =
    options.database ??
    (await openDatabase({
      url: config.databaseUrl,
      readUrl: config.databaseReadUrl,
      readMaxLagMs: config.databaseReadMaxLagMs,
      dataDir: config.dataDir,
    }));

  // The HTTP server's listener asks the response cache first (src/cache/response-cache.ts); `app` is
  // assigned before the server can receive a request.
  let app: FastifyInstance | undefined;
  const serverFactory: FastifyServerFactory = (handler, opts) => {
    const server = createServer(opts.http ?? {}, (req, res) => {
      if (app?.responseCache?.serve(req, res) !== true) handler(req, res);
    });
    // What Fastify sets on the server it would have created itself (its options carry the defaults).
    const timeouts = opts as {
      keepAliveTimeout?: number;
      requestTimeout?: number;
      connectionTimeout?: number;
      maxRequestsPerSocket?: number;
    };
    if (timeouts.keepAliveTimeout !== undefined) server.keepAliveTimeout = timeouts.keepAliveTimeout;
    if (timeouts.requestTimeout !== undefined) server.requestTimeout = timeouts.requestTimeout;
    if (timeouts.connectionTimeout !== undefined) server.setTimeout(timeouts.connectionTimeout);
    if (timeouts.maxRequestsPerSocket) server.maxRequestsPerSocket = timeouts.maxRequestsPerSocket;
    return server;
  };

  const fastify = Fastify({
    logger: options.logger ?? loggerOptions(config),
    childLoggerFactory: lazyChildLogger,
    serverFactory,
    bodyLimit: config.bodyLimit,
    // Honour a caller's request id so one id follows a request through proxies and logs.
    genReqId: (request) => requestIdFrom(request.headers['x-request-id']),
    trustProxy:
      typeof config.trustProxy === 'number'
        ? (_address: string, hop: number) => hop < (config.trustProxy as number)
        : config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    // Errors raised before routing (an undecodable URL) still answer problem+json, like every other error.
    frameworkErrors: (_error, request, reply) =>
      sendProblem(
        reply as unknown as FastifyReply,
        400,
        'Bad Request',
        `the URL '${request.url.slice(0, 200)}' is not valid percent-encoded UTF-8; encode paths and query values with encodeURIComponent`,
      ),
  }).withTypeProvider<ZodTypeProvider>();
  app = fastify;

  fastify.setValidatorCompiler(validatorCompiler);
  fastify.setSerializerCompiler(serializerCompiler);
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  if (ownsDatabase) fastify.addHook('onClose', async () => database.close());

  let registry: Registry | undefined;
  try {
    await database.migrate();
    registry = await openRegistry({ config, database, log: fastify.log });
    const routes = { registry };
    await fastify.register(registryContext, routes);
    await fastify.register(metricsPlugin, routes);
    await fastify.register(responseCachePlugin, { state: registry.cache.state });
    await fastify.register(errorsPlugin);
    await fastify.register(securityLogPlugin);
    await fastify.register(authPlugin, { tokens: registry.tokens });
    // After auth (limits are keyed by the authenticated token) and before swagger and the routes.
    await fastify.register(rateLimitPlugin);
    await fastify.register(multipart, {
      preservePath: true,
      limits: {
        fileSize: config.limits.maxUncompressedBytes,
        files: config.limits.maxFiles,
        parts: config.limits.maxFiles + 100,
        fieldSize: 64 * 1024,
      },
    });
    await fastify.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'skill-registry',
          description:
            'A registry for Agent Skills: CI publishes bundles, agents read the catalogue (layer 1), bodies (layer 2) and bundled files (layer 3). Errors are RFC 9457 problem+json.',
          version: packageVersion(),
        },
        components: {
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer', description: 'Token from POST /tokens' },
          },
        },
        security: [{ bearer: [] }],
        tags: [
          { name: 'skills', description: 'Reading skills: catalogue, bodies, files, bundles' },
          { name: 'publish', description: 'Publishing bundles' },
          { name: 'versions', description: 'Versions, dist-tags and yanks' },
          { name: 'tokens', description: 'Tokens and the audit log (admin)' },
          { name: 'namespaces', description: 'Namespaces: where teams publish' },
          {
            name: 'agents',
            description: 'What agents consume: prompt fragment, tool definitions, discovery',
          },
          { name: 'usage', description: 'Which skills agents load, read and download' },
          {
            name: 'openai',
            description: "OpenAI's Skills API (client.skills), baseURL <registry>/openai/v1",
          },
          {
            name: 'anthropic',
            description: "Anthropic's Skills API (client.beta.skills), baseURL <registry>/anthropic",
          },
          { name: 'operations', description: 'Health and documentation' },
          { name: 'cli', description: 'The skillreg CLI, served by the registry itself' },
        ],
      },
      transform: jsonSchemaTransform,
      transformObject: finishOpenApi,
    });
    await fastify.register(swaggerUi, { routePrefix: '/docs' });
    await fastify.register(healthRoutes, routes);
    await fastify.register(metricsRoutes);
    await fastify.register(docsRoutes);
    await fastify.register(consoleRoutes);
    await fastify.register(homeRoutes);
    await fastify.register(cliRoutes);
    // The read and agent-facing surface, mounted once per scope: the root (`default`), every namespace
    // and every view (src/http/read-mounts.ts); writes at the root and under a namespace.
    for (const mount of ['root', 'namespace', 'view'] as const) {
      const mounted = { ...routes, mount, prefix: MOUNT_PREFIXES[mount] };
      await fastify.register(skillsReadRoutes, mounted);
      await fastify.register(agentRoutes, mounted);
      await fastify.register(searchRoutes, mounted);
      await fastify.register(mcpRoutes, mounted);
      await fastify.register(wellKnownRoutes, mounted);
      await fastify.register(gitRoutes, mounted);
      await fastify.register(clawhubRoutes, mounted);
      await fastify.register(usageRoutes, mounted);
    }
    await fastify.register(skillsWriteRoutes, { ...routes, mount: 'root' });
    await fastify.register(skillsWriteRoutes, {
      ...routes,
      mount: 'prefix',
      prefix: MOUNT_PREFIXES.namespace,
    });
    await fastify.register(namespacesRoutes, routes);
    await fastify.register(viewsRoutes, routes);
    await fastify.register(trustRoutes, routes);
    await fastify.register(trustedPublishingRoutes, routes);
    await fastify.register(tokensRoutes, routes);
    await fastify.register(auditRoutes, routes);
    await fastify.register(anthropicRoutes, { ...routes, prefix: '/anthropic' });
    await fastify.register(openAiRoutes, { ...routes, prefix: '/openai/v1' });
    // The same faces over one namespace: baseURL <registry>/namespaces/<ns>/anthropic (or /openai/v1).
    await fastify.register(anthropicRoutes, {
      ...routes,
      prefixed: true,
      prefix: '/namespaces/:namespace/anthropic',
    });
    await fastify.register(openAiRoutes, {
      ...routes,
      prefixed: true,
      prefix: '/namespaces/:namespace/openai/v1',
    });
    await fastify.ready();
    if (config.seedDir) {
      await loadSeeds(registry, config.seedDir, config.limits, fastify.log, config.seedNamespace);
    }
  } catch (error) {
    await fastify.close().catch(() => {});
    // Closing the app closes the registry once its context plugin is registered; before, it is ours.
    if (!fastify.hasDecorator('registry')) await registry?.close().catch(() => {});
    if (ownsDatabase) await database.close().catch(() => {});
    throw error;
  }
  return fastify;
}
