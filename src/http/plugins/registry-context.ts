import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ReadCache } from '../../cache/read-cache.js';
import type { Config } from '../../config.js';
import type { Database } from '../../db/client.js';
import { LoadRecorder } from '../../storage/load-recorder.js';
import { SkillsRepository } from '../../storage/skills-repository.js';
import { TokensRepository } from '../../storage/tokens-repository.js';
import { RESPONSE_CACHE_SHARE } from '../response-cache.js';

export interface Repositories {
  skills: SkillsRepository;
  tokens: TokensRepository;
  /** Layer-2 loads per skill (for budgets that drop the least recently loaded, and metrics). */
  loads: LoadRecorder;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    repositories: Repositories;
    /** Hot reads kept in memory, invalidated by revision across replicas (src/cache). */
    readCache: ReadCache;
  }
}

/** Root decorators every route plugin reads: configuration, the database and its repositories. */
async function registryContext(app: FastifyInstance, options: { config: Config; database: Database }) {
  app.decorate('config', options.config);
  app.decorate('database', options.database);
  const loads = new LoadRecorder(options.database.db);
  const skills = new SkillsRepository(options.database.db);
  app.decorate('repositories', {
    skills,
    tokens: new TokensRepository(options.database.db),
    loads,
  });
  const readCache = await ReadCache.open({
    database: options.database,
    skills,
    loads,
    // The response cache (plugins/response-cache.ts) takes its share of SKILLREG_CACHE_MB.
    options: {
      maxBytes: options.config.cacheBytes - Math.floor(options.config.cacheBytes * RESPONSE_CACHE_SHARE),
    },
    log: app.log,
  });
  app.decorate('readCache', readCache);
  app.addHook('onClose', async () => {
    await loads.flush();
    await readCache.close();
  });
}

export default fp(registryContext, { name: 'registry-context' });
