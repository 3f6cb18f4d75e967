import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ListResourcesRequestSchema,
  type ListResourcesResult,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../domain/app-errors.js';
import { classifyFile, decodeText } from '../services/file-types.js';
import { InstallableSkills } from '../services/installable.js';
import { LISTING_PAGE, type ListedSkill } from '../services/listing.js';
import { SKILL_MD } from '../services/skill-reads.js';
import type { McpServerDependencies } from './mcp-server.js';

/** An unknown resource is invalid params (SEP-2164, which the skills extension follows). */
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/** The resources skill://{name}/SKILL.md (listed, a page at a time) and skill://{name}/{+path}. */
export function registerSkillResources(server: McpServer, deps: McpServerDependencies): void {
  const { reads } = deps;
  const completeName = async (value: string): Promise<string[]> => {
    try {
      const page = await reads.listing.page(deps.scope, { q: value.trim() || undefined, limit: 100 });
      const names = page.items.map((item) => item.name);
      return [
        ...names.filter((name) => name.startsWith(value)),
        ...names.filter((name) => !name.startsWith(value)),
      ];
    } catch {
      return [];
    }
  };

  server.registerResource(
    'skill',
    new ResourceTemplate('skill://{name}/SKILL.md', {
      // Listing is answered by the paginated handler installed below.
      list: async () => ({ resources: [] }),
      complete: { name: completeName },
    }),
    {
      title: 'Skill instructions (SKILL.md)',
      description:
        'The full SKILL.md of the latest version of a skill: YAML frontmatter and Markdown instructions.',
      mimeType: 'text/markdown',
    },
    async (uri, variables) => readResource(deps, uri, variables),
  );

  server.registerResource(
    'skill-file',
    new ResourceTemplate('skill://{name}/{+path}', { list: undefined, complete: { name: completeName } }),
    {
      title: 'Skill file',
      description:
        'Any file bundled with the latest version of a skill, by its path inside the bundle (references/api.md). Text as text, binary files as base64 blobs.',
    },
    async (uri, variables) => readResource(deps, uri, variables),
  );

  // resources/list with MCP's cursor pagination, which the SDK's template listing does not offer.
  server.server.setRequestHandler(ListResourcesRequestSchema, async (request) =>
    listSkillResources(deps, request.params?.cursor),
  );
}

export function resourceUri(name: string, path: string): string {
  return `skill://${name}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** One page of the resource list: SKILL.md of each current skill people may pick. */
async function listSkillResources(
  deps: McpServerDependencies,
  cursor: string | undefined,
): Promise<ListResourcesResult> {
  let page: { items: ListedSkill[]; nextCursor?: string };
  try {
    // Lists people pick from leave out model-only background skills (see services/visibility.ts).
    page = await deps.reads.listing.collect(deps.scope, { cursor, audience: 'people' }, LISTING_PAGE);
  } catch (error) {
    if (error instanceof AppError && error.status < 500) {
      throw new ResourceError(INVALID_PARAMS, error.message, { cursor, ...error.extensions });
    }
    throw error;
  }
  return {
    resources: page.items.map((item) => ({
      uri: resourceUri(item.name, SKILL_MD),
      name: item.name,
      title: `${item.name} ${item.version}`,
      description: item.description,
      mimeType: 'text/markdown',
    })),
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

/** A JSON-RPC error the SDK passes through with its code, message and data unchanged. */
class ResourceError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ResourceError';
  }
}

async function readResource(
  deps: McpServerDependencies,
  uri: URL,
  variables: Record<string, string | string[]>,
): Promise<ReadResourceResult> {
  const { reads } = deps;
  const installable = new InstallableSkills(reads);
  const href = uri.toString();
  const variable = (key: string) => {
    const value = variables[key];
    return Array.isArray(value) ? value.join(',') : (value ?? '');
  };
  let path: string;
  let name: string;
  try {
    name = decodeURIComponent(variable('name'));
    path = variables.path === undefined ? SKILL_MD : decodeURIComponent(variable('path'));
  } catch {
    throw new ResourceError(INVALID_PARAMS, `resource URI ${href} is not correctly percent-encoded`, {
      uri: href,
    });
  }
  try {
    const resolved = await reads.resolve(deps.scope, name, {});
    const { record } = resolved;
    const file = await reads.file(record, path);
    reads.recordFileRead(resolved, file.path, deps.client);
    // SKILL.md as hosts and installers need it (frontmatter completed where the registry filled it in),
    // the bytes the skills extension's manifest describes.
    const kind =
      file.path === SKILL_MD
        ? { mimeType: 'text/markdown', text: decodeText((await installable.skillMd(record)).bytes) }
        : classifyFile(file.path, file.bytes);
    if (kind.text !== undefined)
      return { contents: [{ uri: href, mimeType: kind.mimeType, text: kind.text }] };
    return {
      contents: [{ uri: href, mimeType: kind.mimeType, blob: Buffer.from(file.bytes).toString('base64') }],
    };
  } catch (error) {
    if (error instanceof AppError && error.status === 404) {
      throw new ResourceError(INVALID_PARAMS, error.message, { uri: href, ...error.extensions });
    }
    if (error instanceof AppError && error.status < 500) {
      throw new ResourceError(INVALID_PARAMS, error.message, { uri: href, ...error.extensions });
    }
    deps.log?.error({ err: error }, 'MCP resource read failed');
    throw new ResourceError(
      INTERNAL_ERROR,
      'the registry could not answer (an unexpected error); try again shortly',
      {
        uri: href,
      },
    );
  }
}
