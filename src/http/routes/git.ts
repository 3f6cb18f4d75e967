import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../domain/app-errors.js';
import type { GitHttpAnswer } from '../../git/http-backend.js';
import type { Registry } from '../../services/registry.js';
import { problemResponses } from '../problem.js';
import { mounted, mountParams, mountProblems, type ReadMount, readAccess, useScope } from '../read-mounts.js';
import { withoutNul } from '../schemas.js';

/**
 * The git faces (`{scope}/git/...`): read-only repositories over git's smart HTTP protocol, for hosts
 * that install skills from git (src/services/git-repositories.ts). Git's own http-backend answers;
 * these routes pick the repository, check the reader and refuse pushes.
 */

const UPLOAD_PACK_REQUEST = 'application/x-git-upload-pack-request';
const RECEIVE_PACK_REQUEST = 'application/x-git-receive-pack-request';

const repositoryParam = withoutNul(z.string().min(1).max(210)).describe(
  'The skill name, with or without `.git` (git clone <registry>/git/skills/<name>.git)',
);

const gitAnswer = z.unknown().describe("git's own answer (pkt-lines), as git http-backend gives it");

/** `name.git` or `name`: the skill's name. */
function skillOf(repository: string): string {
  return repository.endsWith('.git') ? repository.slice(0, -'.git'.length) : repository;
}

class ReadOnlyError extends AppError {
  constructor() {
    super(
      403,
      'Forbidden',
      "the registry's git repositories are read-only: publish a new version with `skillreg publish` (or POST /skills) and the repository follows",
      { reason: 'read-only' },
    );
  }
}

async function sendGit(reply: FastifyReply, answer: GitHttpAnswer) {
  reply.code(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
  return reply.send(answer.body);
}

const gitRoutes: FastifyPluginAsyncZod<{ registry: Registry; mount: ReadMount }> = async (
  app,
  { registry, mount },
) => {
  const readable = app.authorize('read', { ...readAccess(mount), challenge: 'basic' });
  useScope(app, registry, mount);
  // Negotiation bodies go to git as they come (git inflates gzip ones itself), whatever their size.
  app.addContentTypeParser(UPLOAD_PACK_REQUEST, (_request, payload, done) => done(null, payload));
  app.addContentTypeParser(RECEIVE_PACK_REQUEST, (_request, payload, done) => done(null, payload));

  const params = mountParams(mount).extend({ repository: repositoryParam });

  app.get(
    '/git/skills/:repository/info/refs',
    {
      preHandler: readable,
      schema: {
        tags: ['git'],
        summary: "A skill's git repository: ref advertisement",
        description:
          'The first request of `git clone`, `git fetch` and `git ls-remote` (smart HTTP, protocol v0 and v2). Refs: a tag `v<version>` on every servable version (yanked versions keep theirs), a branch per dist-tag, HEAD the `latest` branch; each version one parentless commit whose id depends only on the version, the same on every replica. Quarantined and rejected versions have no ref. Pushing (`service=git-receive-pack`) is refused with a 403.',
        ...mounted(mount, 'getSkillGitRefs'),
        params,
        querystring: z.object({
          service: z
            .enum(['git-upload-pack', 'git-receive-pack'])
            .optional()
            .describe('git-upload-pack to fetch; git-receive-pack (push) is refused'),
        }),
        response: {
          200: gitAnswer,
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request, reply) => {
      if (request.query.service === 'git-receive-pack') throw new ReadOnlyError();
      if (request.query.service !== 'git-upload-pack') {
        throw new AppError(
          400,
          'Bad Request',
          "this registry speaks git's smart HTTP protocol only: ask for info/refs?service=git-upload-pack (any git since 1.6.6 does)",
        );
      }
      const repository = await registry.git.skillRepository(
        request.scope,
        skillOf(request.params.repository),
      );
      return sendGit(reply, await registry.git.serveSkill(repository, gitRequest(request, '/info/refs')));
    },
  );

  app.post(
    '/git/skills/:repository/git-upload-pack',
    {
      preHandler: readable,
      schema: {
        tags: ['git'],
        summary: "A skill's git repository: fetch",
        description:
          'The negotiation and pack of `git clone` and `git fetch` (shallow fetches too), after the ref advertisement.',
        ...mounted(mount, 'fetchSkillGitPack'),
        params,
        response: {
          200: gitAnswer,
          ...problemResponses(...mountProblems(mount, 401, 403, 404, 415)),
        },
      },
    },
    async (request, reply) => {
      const repository = await registry.git.skillRepository(
        request.scope,
        skillOf(request.params.repository),
      );
      return sendGit(
        reply,
        await registry.git.serveSkill(repository, gitRequest(request, '/git-upload-pack')),
      );
    },
  );

  app.post(
    '/git/skills/:repository/git-receive-pack',
    {
      // A reader who may not read is told so first (git then asks for credentials); a reader learns it is read-only.
      preHandler: readable,
      schema: {
        tags: ['git'],
        summary: "A skill's git repository: push (refused)",
        description: 'Always a 403: the repositories are generated from the versions the registry stores.',
        ...mounted(mount, 'pushSkillGit'),
        params,
        response: problemResponses(...mountProblems(mount, 401, 403)),
      },
    },
    async (request) => {
      (request.body as Readable | undefined)?.resume?.();
      throw new ReadOnlyError();
    },
  );
};

function gitRequest(request: FastifyRequest, service: '/info/refs' | '/git-upload-pack') {
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  return {
    service,
    method: request.method as 'GET' | 'POST',
    query,
    contentType: header('content-type'),
    contentEncoding: header('content-encoding'),
    gitProtocol: header('git-protocol'),
    body: service === '/git-upload-pack' ? (request.body as Readable) : undefined,
  };
}

export default gitRoutes;
