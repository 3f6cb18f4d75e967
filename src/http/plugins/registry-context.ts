import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config.js';
import type { Scope } from '../../domain/scope.js';
import type { Registry } from '../../services/registry.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    /**
     * The services this app serves (src/services/registry.ts), for whoever holds the app: the start-up
     * tasks and the tests. Route plugins and the MCP server are handed it as an option instead.
     */
    registry: Registry;
  }
}

/** Root decorators: the configuration and the registry; the registry's caches close with the app. */
async function registryContext(app: FastifyInstance, options: { registry: Registry }) {
  app.decorate('config', options.registry.config);
  app.decorate('registry', options.registry);
  // What a read is about (src/http/read-mounts.ts sets it per mount); the root API reads `default`.
  // Decorated with null (Fastify allows no shared object here); every mount sets it before handlers run.
  app.decorateRequest('scope', null as unknown as { getter(): Scope });
  app.addHook('onClose', async () => {
    await options.registry.close();
  });
}

export default fp(registryContext, { name: 'registry-context' });
