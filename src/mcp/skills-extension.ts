import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AppError } from '../domain/app-errors.js';
import { InstallableSkills } from '../services/installable.js';
import { SKILL_MD } from '../services/skill-reads.js';
import type { VersionRecord } from '../storage/records.js';
import type { McpServerDependencies } from './mcp-server.js';
import { resourceUri } from './resources.js';

/**
 * The MCP skills extension (SEP-2640, `io.modelcontextprotocol/skills`): `skills/list` pages through
 * every skill this endpoint serves, `skills/get` answers one by its SKILL.md URI, each with its
 * complete manifest ({uri, digest, size} of every file, of exactly the bytes resources/read returns).
 * Skills marked `disable-model-invocation` are listed too: the host decides, and the frontmatter says so.
 */

export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
/** The extension's per-skill limits: a larger skill is left out of the listing and not served by it. */
export const MAX_SKILL_RESOURCES = 512;
export const MAX_SKILL_BYTES = 16 * 1024 * 1024;
/** Skills per skills/list page (each entry carries its manifest). */
const SKILLS_PAGE = 50;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

const listRequest = z.object({
  method: z.literal('skills/list'),
  params: z.object({ cursor: z.string().optional() }).loose().optional(),
});
const getRequest = z.object({
  method: z.literal('skills/get'),
  params: z.object({ uri: z.string() }).loose(),
});

interface SkillEntry {
  uri: string;
  frontmatter: Record<string, unknown>;
  resources: { uri: string; digest: string; size: number }[];
}

export function registerSkillsExtension(server: McpServer, deps: McpServerDependencies): void {
  const installable = new InstallableSkills(deps.reads);

  const entryOf = async (record: VersionRecord): Promise<SkillEntry> => {
    const { files, skillMd } = await installable.files(record);
    return {
      uri: resourceUri(record.name, SKILL_MD),
      frontmatter: skillMd.frontmatter,
      resources: files.map((file) => ({
        uri: resourceUri(record.name, file.path),
        digest: file.digest,
        size: file.size,
      })),
    };
  };

  server.server.setRequestHandler(listRequest, async (request) => {
    try {
      const page = await deps.reads.listing.collect(
        deps.scope,
        { cursor: request.params?.cursor },
        SKILLS_PAGE,
      );
      const skills: SkillEntry[] = [];
      for (const item of page.items) {
        const { record } = await deps.reads.resolve(deps.scope, item.name, { version: item.version });
        if (overLimits(record)) continue;
        skills.push(await entryOf(record));
      }
      return { skills, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}), resultType: 'complete' };
    } catch (error) {
      throw protocolError(error, deps, { cursor: request.params?.cursor });
    }
  });

  server.server.setRequestHandler(getRequest, async (request) => {
    const uri = request.params.uri;
    const name = skillNameOf(uri);
    if (name === undefined) {
      throw new McpError(
        INVALID_PARAMS,
        `${uri} is not a skill's SKILL.md URI; skills here are skill://<name>/SKILL.md (skills/list lists them)`,
        { uri },
      );
    }
    try {
      const { record } = await deps.reads.resolve(deps.scope, name, {});
      if (overLimits(record)) {
        throw new McpError(
          INVALID_PARAMS,
          `the skill at ${uri} has ${record.fileCount} files and ${record.totalSize} bytes, over the extension's limits of ${MAX_SKILL_RESOURCES} files and ${MAX_SKILL_BYTES} bytes; read it over HTTP (GET /skills/${name}/bundle)`,
          { uri },
        );
      }
      return { skill: { ...(await entryOf(record)), uri }, resultType: 'complete' };
    } catch (error) {
      throw protocolError(error, deps, { uri }, `No skill is served at ${uri}`);
    }
  });
}

function overLimits(record: VersionRecord): boolean {
  return record.fileCount > MAX_SKILL_RESOURCES || record.totalSize > MAX_SKILL_BYTES;
}

/** The name in skill://<name>/SKILL.md, or undefined for any other URI. */
function skillNameOf(uri: string): string | undefined {
  const match = /^skill:\/\/([^/?#]+)\/SKILL\.md$/.exec(uri);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}

/** A read's failure as the JSON-RPC error the extension names: -32602 for what the caller got wrong. */
function protocolError(
  error: unknown,
  deps: McpServerDependencies,
  data: Record<string, unknown>,
  notFound?: string,
): McpError {
  if (error instanceof McpError) return error;
  if (error instanceof AppError && error.status < 500) {
    const message = error.status === 404 && notFound ? `${notFound}: ${error.message}` : error.message;
    return new McpError(INVALID_PARAMS, message, { ...data, ...error.extensions });
  }
  deps.log?.error({ err: error }, 'MCP skills request failed');
  return new McpError(
    INTERNAL_ERROR,
    'the registry could not answer (an unexpected error); try again shortly',
    data,
  );
}
