import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config.js';
import type { Database } from '../../db/client.js';
import { LoadRecorder } from '../../storage/load-recorder.js';
import { SkillsRepository } from '../../storage/skills-repository.js';
import { TokensRepository } from '../../storage/tokens-repository.js';

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
  }
}

/** Root decorators every route plugin reads: configuration, the database and its repositories. */
async function registryContext(app: FastifyInstance, options: { config: Config; database: Database }) {
  app.decorate('config', options.config);
  app.decorate('database', options.database);
  const loads = new LoadRecorder(options.database.db);
  app.decorate('repositories', {
    skills: new SkillsRepository(options.database.db),
    tokens: new TokensRepository(options.database.db),
    loads,
  });
  app.addHook('onClose', async () => loads.flush());
}

export default fp(registryContext, { name: 'registry-context' });
