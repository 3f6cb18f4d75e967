import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config.js';
import type { Database } from '../../db/client.js';
import { SkillsRepository } from '../../storage/skills-repository.js';
import { TokensRepository } from '../../storage/tokens-repository.js';

export interface Repositories {
  skills: SkillsRepository;
  tokens: TokensRepository;
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
  app.decorate('repositories', {
    skills: new SkillsRepository(options.database.db),
    tokens: new TokensRepository(options.database.db),
  });
}

export default fp(registryContext, { name: 'registry-context' });
