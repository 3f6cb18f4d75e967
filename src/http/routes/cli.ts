import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ifNoneMatchMatches } from '../../cache/etags.js';
import {
  CLI_FILES,
  type CliDistribution,
  type CliFileName,
  cliDistribution,
} from '../../cli-dist/distribution.js';
import { CLI_NODE_RANGE } from '../../cli-dist/npm-package.js';
import { cliIndexSchema } from '../../wire/index.js';
import { REVALIDATE, setCacheControl } from '../caching.js';
import { clientErrors } from '../problem.js';
import { publicBaseUrl } from '../public-url.js';

type CliIndex = z.infer<typeof cliIndexSchema>;

function cliIndex(distribution: CliDistribution, base: string): CliIndex {
  const fileEntry = (name: CliFileName) => {
    const file = distribution.files[name];
    return { url: `${base}/cli/${name}`, sha256: file.sha256, size: file.bytes.byteLength };
  };
  const tarball = `${base}/cli/skillreg.tgz`;
  return {
    version: distribution.version,
    package: distribution.packageName,
    node: CLI_NODE_RANGE,
    files: { 'skillreg.mjs': fileEntry('skillreg.mjs'), 'skillreg.tgz': fileEntry('skillreg.tgz') },
    install: {
      npm: `npm install --global ${tarball}`,
      npx: `npx --yes --package ${tarball} skillreg <command>`,
      node: `curl -fsSLO ${base}/cli/skillreg.mjs && node skillreg.mjs <command>`,
    },
  };
}

/**
 * Sets the validators; answers 304 (and returns the reply) when the client holds this tag already.
 * `public` even behind SKILLREG_READ_AUTH: these answers are the same for everyone.
 */
function notModified(request: FastifyRequest, reply: FastifyReply, etag: string): FastifyReply | undefined {
  setCacheControl(reply.header('etag', etag), REVALIDATE);
  return ifNoneMatchMatches(request.headers['if-none-match'], etag) ? reply.code(304).send() : undefined;
}

const DESCRIPTIONS: Record<CliFileName, { summary: string; description: string; operationId: string }> = {
  'skillreg.mjs': {
    summary: 'The skillreg CLI as one file',
    operationId: 'getCliBundle',
    description:
      "The `skillreg` CLI (validate, publish, sync, pull, verify, token...) bundled into one ES module with every dependency inside: `node skillreg.mjs <command>` on Node.js 20 or later, nothing else to install. Built from the code this server runs, so its version is the server's; `serve` and `migrate` need the full package. `X-Checksum-Sha256` and `Repr-Digest` give the sha256 of the bytes (also listed by GET /cli). Public, like /docs: it is the registry's own code, not a skill.",
  },
  'skillreg.tgz': {
    summary: 'The skillreg CLI as an npm package',
    operationId: 'getCliPackage',
    description:
      'An npm package tarball of the same bundle (bin `skillreg`, no dependencies): `npm install --global <registry>/cli/skillreg.tgz` or `npx --yes --package <registry>/cli/skillreg.tgz skillreg <command>` install it from this registry alone, never by a name on a public registry. Byte-for-byte deterministic.',
  },
};

/**
 * The registry serves its own CLI (src/cli-dist): CI installs `skillreg` from the registry it already
 * trusts with its token, rather than by a package name on a public registry that someone else could
 * own. Public even with SKILLREG_READ_AUTH: it is the project's code, holds no skill or secret, and a
 * job fetches it before it uses any token (`validate` is offline; pull requests from forks get no secrets).
 */
const cliRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/cli',
    {
      schema: {
        tags: ['cli'],
        summary: 'Where to get the skillreg CLI',
        description:
          'The version of the CLI this registry serves, the URL, sha256 and size of each download, and the commands that install or run it. CI can pin a checksum from here and verify the download against it.',
        operationId: 'getCliIndex',
        response: { 200: cliIndexSchema, ...clientErrors },
      },
    },
    async (request, reply) => {
      const index = cliIndex(await cliDistribution(), publicBaseUrl(request));
      const etag = `"sha256-${createHash('sha256').update(JSON.stringify(index)).digest('hex')}"`;
      const unchanged = notModified(request, reply, etag);
      if (unchanged) return unchanged;
      return index;
    },
  );

  for (const name of CLI_FILES) {
    app.get(
      `/cli/${name}`,
      {
        schema: {
          tags: ['cli'],
          ...DESCRIPTIONS[name],
          response: { 200: z.any().describe('The file'), ...clientErrors },
        },
      },
      async (request, reply) => {
        const file = (await cliDistribution()).files[name];
        const unchanged = notModified(request, reply, file.etag);
        if (unchanged) return unchanged;
        return reply
          .header('x-checksum-sha256', file.sha256)
          .header('repr-digest', file.reprDigest)
          .header('content-disposition', `attachment; filename="${name}"`)
          .header('x-content-type-options', 'nosniff')
          .type(file.contentType)
          .send(file.bytes);
      },
    );
  }
};

export default cliRoutes;
