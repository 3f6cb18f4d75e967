import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import semver from 'semver';
import { z } from 'zod';
import { AppError } from '../domain/app-errors.js';
import {
  FILE_PATH_DESCRIPTION,
  LOAD_SKILL_DESCRIPTION,
  LOAD_SKILL_SEARCH_NOTE,
  LOAD_SKILL_TOOL,
  READ_SKILL_FILE_DESCRIPTION,
  READ_SKILL_FILE_TOOL,
  SEARCH_LIMIT_DESCRIPTION,
  SEARCH_QUERY_DESCRIPTION,
  SEARCH_SKILLS_DESCRIPTION,
  SEARCH_SKILLS_TOOL,
  SKILL_VERSION_DESCRIPTION,
} from '../render/tool-definitions.js';
import { classifyFile, IMAGE_TYPES } from '../services/file-types.js';
import { SKILL_MD } from '../services/skill-reads.js';
import { DEFAULT_TOOL_LIMIT, MAX_TOOL_LIMIT, type ModelSearchResult } from '../services/skill-search.js';
import type { VersionRecord, VersionSelector } from '../storage/records.js';
import { listSkillsOutputSchema, searchSkillsOutputSchema } from '../wire/index.js';
import type { McpServerDependencies } from './mcp-server.js';
import { resourceUri } from './resources.js';

/** Catalogue entries one list_skills call covers; past them it answers a cursor for the rest. */
const LISTED_PER_CALL = 1_000;
/** Bundled files named in load_skill's header at most. */
const MAX_FILES_IN_HEADER = 200;

export const LIST_SKILLS_DESCRIPTION =
  'List the Agent Skills available in this registry: name, one-line description and current version of each. ' +
  'Use it to find a skill that fits the task at hand, then call load_skill with its name. ' +
  '`q` searches names and descriptions; `tag` lists the versions a dist-tag (such as stable or beta) points at instead of latest. ' +
  'A large catalogue comes in pages: pass the nextCursor of an answer as cursor to get the next one.';

/** The shared load_skill text (GET /tools says the same), plus what is particular to MCP. */
export const MCP_LOAD_SKILL_DESCRIPTION = `${LOAD_SKILL_DESCRIPTION} ${LOAD_SKILL_SEARCH_NOTE} Over MCP, the available skills are those list_skills lists and search_skills finds. The answer begins with a short header naming the version loaded and the bundled files; \`version\` also accepts a dist-tag such as stable.`;

export const MCP_READ_SKILL_FILE_DESCRIPTION = `${READ_SKILL_FILE_DESCRIPTION} Text files come back as text, images as images, other binary files as a base64 resource. Pass the version load_skill reported to read the files of that same version.`;

const versionArgument = z
  .string()
  .min(1)
  .max(256)
  .optional()
  .describe(`${SKILL_VERSION_DESCRIPTION}; a dist-tag such as stable also works`);

/** The tools: list_skills, search_skills, load_skill and read_skill_file, over the read and search services. */
export function registerSkillTools(server: McpServer, deps: McpServerDependencies): void {
  const { reads, search, client } = deps;

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
        cursor: z
          .string()
          .max(500)
          .optional()
          .describe('nextCursor of the previous answer, for the next page'),
      },
      outputSchema: listSkillsOutputSchema.shape,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ q, tag, cursor }) =>
      toolResult(async () => {
        // Skills only a person may invoke are not offered to the model (see services/visibility.ts).
        const { items, nextCursor } = await reads.listing.collect(
          deps.scope,
          { q, tag, cursor, audience: 'model' },
          LISTED_PER_CALL,
        );
        const listed = items.map(({ name, description, version }) => ({ name, description, version }));
        const truncated = nextCursor !== undefined;
        return {
          content: [{ type: 'text', text: renderCatalogue(listed, nextCursor, { q, tag }) }],
          structuredContent: { skills: listed, truncated, ...(truncated ? { nextCursor } : {}) },
        };
      }),
  );

  server.registerTool(
    SEARCH_SKILLS_TOOL,
    {
      title: 'Search skills',
      description: SEARCH_SKILLS_DESCRIPTION,
      inputSchema: {
        // Not bounded here: an empty or overlong query gets the search service's own explanation.
        query: z.string().describe(SEARCH_QUERY_DESCRIPTION),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_TOOL_LIMIT)
          .optional()
          .describe(`${SEARCH_LIMIT_DESCRIPTION} (default ${DEFAULT_TOOL_LIMIT})`),
      },
      outputSchema: searchSkillsOutputSchema.shape,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ query, limit }) =>
      toolResult(async () => {
        const results = await search.searchSkills(deps.scope, { query, limit, client });
        return {
          content: [{ type: 'text', text: renderSearchResults(query.trim(), results) }],
          structuredContent: { results },
        };
      }),
  );

  server.registerTool(
    LOAD_SKILL_TOOL,
    {
      title: 'Load a skill',
      description: MCP_LOAD_SKILL_DESCRIPTION,
      inputSchema: {
        name: z.string().min(1).max(256).describe('Skill name, as list_skills or search_skills gives it'),
        version: versionArgument,
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ name, version }) =>
      toolResult(async () => {
        const resolved = await reads.resolveWithYank(deps.scope, name.trim(), selectorFor(version));
        const { record } = resolved;
        const files = (await reads.files(record)).filter((file) => file.path !== SKILL_MD);
        reads.recordLoad(resolved, client);
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
        const resolved = await reads.resolve(deps.scope, name.trim(), selectorFor(version));
        const { record } = resolved;
        const file = await reads.file(record, path.trim());
        const filePath = file.path;
        reads.recordFileRead(resolved, filePath, client);
        const kind = classifyFile(filePath, file.bytes);
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

function renderCatalogue(
  listed: { name: string; description: string; version: string }[],
  nextCursor: string | undefined,
  query: { q?: string; tag?: string },
): string {
  if (listed.length === 0) {
    const filters = [query.q ? `q '${query.q}'` : '', query.tag ? `tag '${query.tag}'` : ''].filter(Boolean);
    return filters.length > 0
      ? `No skills match ${filters.join(' and ')}. Call list_skills without them to see every skill.`
      : 'This registry has no skills yet.';
  }
  const lines = listed.map((skill) => `- ${skill.name} (${skill.version}): ${oneLine(skill.description)}`);
  const more = nextCursor
    ? `\n\nMore skills match than are listed here: call list_skills again with cursor "${nextCursor}" for the next page, or narrow the list with q.`
    : '';
  return `${listed.length} skill${listed.length === 1 ? '' : 's'}. Call load_skill with a name to read its instructions before a task it covers.\n\n${lines.join('\n')}${more}`;
}

function renderSearchResults(query: string, results: readonly ModelSearchResult[]): string {
  if (results.length === 0) {
    return `No skill matches "${oneLine(query).slice(0, 200)}". Search again with other words for the task, or call list_skills to see every skill.`;
  }
  const lines = results.map(
    (result) =>
      `- ${result.name}: ${oneLine(result.description)} (why: ${result.why || 'the request as a whole'})`,
  );
  return `${results.length} skill${results.length === 1 ? '' : 's'}, best match first. Call load_skill with the name of the one that fits the task.\n\n${lines.join('\n')}`;
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
