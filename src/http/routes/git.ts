import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../domain/app-errors.js';
import type { GitHttpAnswer } from '../../git/http-backend.js';
import type { Registry } from '../../services/registry.js';
import { claudeMarketplaceSchema } from '../../wire/agents.js';
import { sendAnswer } from '../answer.js';
import { problemResponses } from '../problem.js';
import { publicBaseUrl } from '../public-url.js';
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
  const scopeParams = mount === 'root' ? {} : { params: mountParams(mount) };

  app.get(
    '/marketplace.json',
    {
      preHandler: readable,
      schema: {
        tags: ['git'],
        summary: 'Claude Code plugin marketplace',
        description:
          "The scope's current skills as a Claude Code marketplace (`claude plugin marketplace add <registry>/marketplace.json`, then `claude plugin install <skill>@<marketplace name>`): each plugin a git source, the skill's own repository pinned by its version's tag (`ref`) and commit (`sha`). An ETag per catalogue revision: an unchanged scope answers 304.",
        ...mounted(mount, 'getMarketplace'),
        ...scopeParams,
        response: { 200: claudeMarketplaceSchema, ...problemResponses(...mountProblems(mount, 401, 403)) },
      },
    },
    async (request, reply) =>
      sendAnswer(request, reply, await registry.git.httpMarketplace(request.scope, publicBaseUrl(request))),
  );

  app.get(
    '/git/plugins.git/info/refs',
    {
      preHandler: readable,
      schema: {
        tags: ['git'],
        summary: "The scope's plugin marketplace as a git repository: ref advertisement",
        description:
          'One plugin per current skill under plugins/<name>/ (its skill in skills/<name>/), with the manifests Claude Code (.claude-plugin/marketplace.json), Codex (.agents/plugins/marketplace.json) and GitHub Copilot CLI (.github/plugin/marketplace.json) read: `claude|copilot plugin marketplace add <registry>/git/plugins.git`, `codex plugin marketplace add <registry>/git/plugins.git`. One branch, main; HEAD on it.',
        ...mounted(mount, 'getPluginsGitRefs'),
        ...scopeParams,
        querystring: z.object({
          service: z
            .enum(['git-upload-pack', 'git-receive-pack'])
            .optional()
            .describe('git-upload-pack to fetch; git-receive-pack (push) is refused'),
        }),
        response: { 200: gitAnswer, ...problemResponses(...mountProblems(mount, 400, 401, 403)) },
      },
    },
    async (request, reply) => {
      checkService(request.query.service);
      return sendGit(
        reply,
        await registry.git.servePlugins(request.scope, gitRequest(request, '/info/refs')),
      );
    },
  );

  app.post(
    '/git/plugins.git/git-upload-pack',
    {
      preHandler: readable,
      schema: {
        tags: ['git'],
        summary: "The scope's plugin marketplace as a git repository: fetch",
        description: 'The negotiation and pack of `git clone` and `git fetch`, after the ref advertisement.',
        ...mounted(mount, 'fetchPluginsGitPack'),
        ...scopeParams,
        response: { 200: gitAnswer, ...problemResponses(...mountProblems(mount, 401, 403, 415)) },
      },
    },
    async (request, reply) =>
      sendGit(reply, await registry.git.servePlugins(request.scope, gitRequest(request, '/git-upload-pack'))),
  );

  app.post(
    '/git/plugins.git/git-receive-pack',
    {
      preHandler: readable,
      schema: {
        tags: ['git'],
        summary: "The scope's plugin marketplace as a git repository: push (refused)",
        description: 'Always a 403: the repository is generated from the versions the registry stores.',
        ...mounted(mount, 'pushPluginsGit'),
        ...scopeParams,
        response: problemResponses(...mountProblems(mount, 401, 403)),
      },
    },
    async (request) => {
      (request.body as Readable | undefined)?.resume?.();
      throw new ReadOnlyError();
    },
  );

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
      checkService(request.query.service);
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

/** A push is refused; a request without `service` is git's dumb protocol, which is not served. */
function checkService(service: string | undefined): void {
  if (service === 'git-receive-pack') throw new ReadOnlyError();
  if (service !== 'git-upload-pack') {
    throw new AppError(
      400,
      'Bad Request',
      "this registry speaks git's smart HTTP protocol only: ask for info/refs?service=git-upload-pack (any git since 1.6.6 does)",
    );
  }
}

/** A fetch's body as git sends it; anything else is refused before git sees it. */
function negotiationBody(request: FastifyRequest): Readable {
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== UPLOAD_PACK_REQUEST) {
    throw new AppError(
      415,
      'Unsupported Media Type',
      `a fetch sends content-type ${UPLOAD_PACK_REQUEST}, not '${type ?? 'none'}': use git (clone, fetch, ls-remote) against this URL`,
    );
  }
  return request.body as Readable;
}

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
    body: service === '/git-upload-pack' ? negotiationBody(request) : undefined,
  };
}

export default gitRoutes;
