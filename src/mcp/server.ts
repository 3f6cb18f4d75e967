import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type {
  CallToolResult,
  ListResourcesResult,
  ReadResourceResult,
  ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import mime from 'mime-types';
import semver from 'semver';
import { z } from 'zod';
import { AppError } from '../errors.js';
import type { Repositories } from '../http/plugins/registry-context.js';
import { isModelInvocable } from '../render/prompt.js';
import {
  FILE_PATH_DESCRIPTION,
  LOAD_SKILL_DESCRIPTION,
  LOAD_SKILL_TOOL,
  READ_SKILL_FILE_DESCRIPTION,
  READ_SKILL_FILE_TOOL,
  SKILL_VERSION_DESCRIPTION,
} from '../render/tools.js';
import type { CatalogueItem, VersionRecord, VersionSelector } from '../storage/skills-repository.js';

/** What the MCP server needs from the app: `createMcpServer(app)` works, so does a hand-made object. */
export interface McpServerDependencies {
  repositories: Pick<Repositories, 'skills' | 'loads'>;
  log?: Pick<FastifyBaseLogger, 'error'>;
}

export const MCP_SERVER_NAME = 'skill-registry';
const MCP_SERVER_VERSION = '0.1.0';
const SKILL_MD = 'SKILL.md';
/** Catalogue entries one list_skills call or resource listing returns at most; `q` narrows it. */
const MAX_LISTED = 2_000;
/** Bundled files named in load_skill's header at most. */
const MAX_FILES_IN_HEADER = 200;
/** JSON-RPC error code for an unknown resource (MCP specification, resources). */
const RESOURCE_NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
/** Raster formats models accept as image content; other binaries are embedded resources. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

const INSTRUCTIONS =
  'This server is a registry of Agent Skills: folders of instructions, scripts and references for specific tasks. ' +
  'Call list_skills to see the available skills (names and descriptions). When a task matches a skill, call load_skill ' +
  'with its name before starting and follow the instructions it returns; read the files it references with ' +
  'read_skill_file. Skills are also readable as resources at skill://{name}/SKILL.md and skill://{name}/{path}.';

export const LIST_SKILLS_DESCRIPTION =
  'List the Agent Skills available in this registry: name, one-line description and current version of each. ' +
  'Use it to find a skill that fits the task at hand, then call load_skill with its name. ' +
  '`q` searches names and descriptions; `tag` lists the versions a dist-tag (such as stable or beta) points at instead of latest.';

/** The shared load_skill text (GET /tools says the same), plus what is particular to MCP. */
export const MCP_LOAD_SKILL_DESCRIPTION = `${LOAD_SKILL_DESCRIPTION} Over MCP, the available skills are those list_skills returns. The answer begins with a short header naming the version loaded and the bundled files; \`version\` also accepts a dist-tag such as stable.`;

export const MCP_READ_SKILL_FILE_DESCRIPTION = `${READ_SKILL_FILE_DESCRIPTION} Text files come back as text, images as images, other binary files as a base64 resource. Pass the version load_skill reported to read the files of that same version.`;

const versionArgument = z
  .string()
  .min(1)
  .max(256)
  .optional()
  .describe(`${SKILL_VERSION_DESCRIPTION}; a dist-tag such as stable also works`);

/**
 * One MCP server over the registry. Built per request (stateless Streamable HTTP): it holds no state
 * of its own, so every call reads the database and a publish, tag move or yank shows on the next call.
 */
export function createMcpServer(deps: McpServerDependencies): McpServer {
  const { skills, loads } = deps.repositories;
  const capabilities: ServerCapabilities = { tools: {}, resources: {}, completions: {} };
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: 'Agent Skills registry', version: MCP_SERVER_VERSION },
    { capabilities, instructions: INSTRUCTIONS },
  );

  /** Registry errors (unknown skill, version, file) become tool error results with the registry's detail. */
  async function toolResult(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof AppError && error.status < 500) {
        return { isError: true, content: [{ type: 'text', text: error.message }] };
      }
      deps.log?.error({ err: error }, 'MCP tool failed');
      return {
        isError: true,
        content: [
          { type: 'text', text: 'the registry could not answer (an unexpected error); try again shortly' },
        ],
      };
    }
  }

  server.registerTool(
    'list_skills',
    {
      title: 'List skills',
      description: LIST_SKILLS_DESCRIPTION,
      inputSchema: {
        q: z.string().max(200).optional().describe('Search words matched against names and descriptions'),
        tag: z.string().max(64).optional().describe('Dist-tag to list (default latest)'),
      },
      outputSchema: {
        skills: z.array(z.object({ name: z.string(), description: z.string(), version: z.string() })),
        truncated: z.boolean().describe('true when more skills match than were returned; narrow with q'),
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ q, tag }) =>
      toolResult(async () => {
        const { items, truncated } = await catalogue(deps, { q, tag });
        // Skills only a person may invoke are not offered to the model (see userInvocable below).
        const listed = items
          .filter((item) => isModelInvocable(item.frontmatter))
          .map(({ name, description, version }) => ({ name, description, version }));
        return {
          content: [{ type: 'text', text: renderCatalogue(listed, truncated, { q, tag }) }],
          structuredContent: { skills: listed, truncated },
        };
      }),
  );

  server.registerTool(
    LOAD_SKILL_TOOL,
    {
      title: 'Load a skill',
      description: MCP_LOAD_SKILL_DESCRIPTION,
      inputSchema: {
        name: z.string().min(1).max(256).describe('Skill name, as list_skills gives it'),
        version: versionArgument,
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ name, version }) =>
      toolResult(async () => {
        const record = await skills.resolve(name.trim(), selectorFor(version));
        const files = (await skills.files(record.id)).filter((file) => file.path !== SKILL_MD);
        loads.record(record.name);
        return {
          content: [
            { type: 'text', text: loadHeader(record, files) },
            { type: 'text', text: record.body },
          ],
        };
      }),
  );

  server.registerTool(
    READ_SKILL_FILE_TOOL,
    {
      title: 'Read a bundled file',
      description: MCP_READ_SKILL_FILE_DESCRIPTION,
      inputSchema: {
        name: z.string().min(1).max(256).describe('Skill name'),
        path: z.string().min(1).max(1024).describe(FILE_PATH_DESCRIPTION),
        version: versionArgument,
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ name, path, version }) =>
      toolResult(async () => {
        const record = await skills.resolve(name.trim(), selectorFor(version));
        const filePath = normalisePath(path);
        const file = await skills.readFile(record, filePath);
        if (filePath === SKILL_MD) loads.record(record.name);
        const kind = classify(filePath, file.bytes);
        if (kind.text !== undefined) return { content: [{ type: 'text', text: kind.text }] };
        const data = Buffer.from(file.bytes).toString('base64');
        if (IMAGE_TYPES.has(kind.mimeType)) {
          return { content: [{ type: 'image', data, mimeType: kind.mimeType }] };
        }
        return {
          content: [
            {
              type: 'text',
              text: `${filePath} of ${record.name} ${record.version} is a binary file (${kind.mimeType}, ${file.bytes.byteLength} bytes); its bytes follow as a base64 resource.`,
            },
            {
              type: 'resource',
              resource: { uri: resourceUri(record.name, filePath), mimeType: kind.mimeType, blob: data },
            },
          ],
        };
      }),
  );

  const completeName = async (value: string): Promise<string[]> => {
    try {
      const page = await skills.catalogue({ q: value.trim() || undefined, limit: 100 });
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
      list: async () => listSkillResources(deps),
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

  return server;
}

/**
 * Who may see a skill, following Claude Code's flags: tools are model-facing, so list_skills leaves out
 * `disable-model-invocation: true` (loading it by its exact name still works, as GET /content does: a
 * person asked for it). Resources are what an application shows people to pick from, so the resource
 * list keeps those and leaves out `user-invocable: false` (model-only background skills) instead.
 */
export function userInvocable(frontmatter: Record<string, unknown>): boolean {
  return !isFalse(frontmatter['user-invocable']);
}

function isFalse(value: unknown): boolean {
  return value === false || (typeof value === 'string' && value.trim().toLowerCase() === 'false');
}

/** `version` may be an exact version (v-prefix tolerated) or a dist-tag; anything version-like is a version. */
export function selectorFor(version: string | undefined): VersionSelector {
  const value = version?.trim();
  if (!value) return {};
  const exact = semver.valid(value);
  if (exact) return { version: exact };
  if (/^v?\d/.test(value)) return { version: value };
  return { tag: value };
}

async function catalogue(
  deps: McpServerDependencies,
  query: { q?: string; tag?: string },
): Promise<{ items: CatalogueItem[]; truncated: boolean }> {
  const items: CatalogueItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.repositories.skills.catalogue({
      q: query.q?.trim() || undefined,
      tag: query.tag?.trim() || undefined,
      limit: 500,
      cursor,
    });
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && items.length < MAX_LISTED);
  return { items: items.slice(0, MAX_LISTED), truncated: cursor !== undefined || items.length > MAX_LISTED };
}

function renderCatalogue(
  listed: { name: string; description: string; version: string }[],
  truncated: boolean,
  query: { q?: string; tag?: string },
): string {
  if (listed.length === 0) {
    const filters = [query.q ? `q '${query.q}'` : '', query.tag ? `tag '${query.tag}'` : ''].filter(Boolean);
    return filters.length > 0
      ? `No skills match ${filters.join(' and ')}. Call list_skills without them to see every skill.`
      : 'This registry has no skills yet.';
  }
  const lines = listed.map((skill) => `- ${skill.name} (${skill.version}): ${oneLine(skill.description)}`);
  const more = truncated ? `\n\nMore skills match than are listed here; narrow the list with q.` : '';
  return `${listed.length} skill${listed.length === 1 ? '' : 's'}. Call load_skill with a name to read its instructions before a task it covers.\n\n${lines.join('\n')}${more}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function loadHeader(record: VersionRecord, files: { path: string; size: number }[]): string {
  const lines = [
    `Skill: ${record.name}`,
    `Version: ${record.version}${record.yankedAt ? ' (yanked: do not rely on it; load the latest version instead)' : ''}`,
  ];
  if (files.length === 0) {
    lines.push('Bundled files: none');
  } else {
    lines.push(
      `Bundled files (read one with read_skill_file {"name": "${record.name}", "path": "<path>", "version": "${record.version}"}):`,
    );
    for (const file of files.slice(0, MAX_FILES_IN_HEADER)) lines.push(`- ${file.path} (${file.size} bytes)`);
    if (files.length > MAX_FILES_IN_HEADER)
      lines.push(`- ... and ${files.length - MAX_FILES_IN_HEADER} more`);
  }
  lines.push('The instructions of the skill follow.');
  return lines.join('\n');
}

function normalisePath(path: string): string {
  return path.trim().replace(/^(\.\/|\/)+/, '');
}

const TEXT_TYPES = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|x-sh|toml)|image\/svg\+xml)/;

/** Text when the bytes are UTF-8 without NUL (whatever the extension), else binary with a content type. */
function classify(path: string, bytes: Uint8Array): { mimeType: string; text?: string } {
  const looked = mime.lookup(path) || undefined;
  if (looked && IMAGE_TYPES.has(looked)) return { mimeType: looked };
  const text = decodeText(bytes);
  if (text === undefined) return { mimeType: looked ?? 'application/octet-stream' };
  return { mimeType: looked && TEXT_TYPES.test(looked) ? looked : 'text/plain', text };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

export function resourceUri(name: string, path: string): string {
  return `skill://${name}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

async function listSkillResources(deps: McpServerDependencies): Promise<ListResourcesResult> {
  const { items } = await catalogue(deps, {});
  return {
    resources: items
      .filter((item) => userInvocable(item.frontmatter))
      .map((item) => ({
        uri: resourceUri(item.name, SKILL_MD),
        name: item.name,
        title: `${item.name} ${item.version}`,
        description: item.description,
        mimeType: 'text/markdown',
      })),
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
  const { skills, loads } = deps.repositories;
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
    const record = await skills.resolve(name, {});
    const file = await skills.readFile(record, path);
    if (path === SKILL_MD) loads.record(record.name);
    const kind =
      path === SKILL_MD
        ? { mimeType: 'text/markdown', text: decodeText(file.bytes) }
        : classify(path, file.bytes);
    if (kind.text !== undefined)
      return { contents: [{ uri: href, mimeType: kind.mimeType, text: kind.text }] };
    return {
      contents: [{ uri: href, mimeType: kind.mimeType, blob: Buffer.from(file.bytes).toString('base64') }],
    };
  } catch (error) {
    if (error instanceof AppError && error.status === 404) {
      throw new ResourceError(RESOURCE_NOT_FOUND, error.message, { uri: href, ...error.extensions });
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
