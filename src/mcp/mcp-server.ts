import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Scope } from '../domain/scope.js';
import { packageVersion } from '../process/package-version.js';
import type { SkillReadService } from '../services/skill-reads.js';
import type { SkillSearchService } from '../services/skill-search.js';
import { registerSkillResources } from './resources.js';
import { registerSkillsExtension, SKILLS_EXTENSION } from './skills-extension.js';
import { registerSkillTools } from './tools.js';

/** What the MCP server reads through: the same read and search services as every other face. */
export interface McpServerDependencies {
  reads: SkillReadService;
  search: SkillSearchService;
  /** What this endpoint serves: `default` at /mcp, a namespace or a view under their prefixes. */
  scope: Scope;
  log?: Pick<FastifyBaseLogger, 'error'>;
  /** Who is calling (src/requests/client-key.ts): pairs its search_skills calls with its later loads. */
  client?: string;
}

export const MCP_SERVER_NAME = 'skill-registry';

const INSTRUCTIONS =
  'This server is a registry of Agent Skills: folders of instructions, scripts and references for specific tasks. ' +
  'Call search_skills with the task in your own words to find the skills that fit it, or list_skills to see them all ' +
  '(names and descriptions). When a task matches a skill, call load_skill ' +
  'with its name before starting and follow the instructions it returns; read the files it references with ' +
  'read_skill_file. Skills are also readable as resources at skill://{name}/SKILL.md and skill://{name}/{path}.';

/**
 * One MCP server over the registry. Built per request (stateless Streamable HTTP): it holds no state
 * of its own. Every call reads through the read service, whose caches follow the catalogue revision,
 * so a publish, tag move or yank shows on the next call, as on every other face.
 */
export function createMcpServer(deps: McpServerDependencies): McpServer {
  const capabilities: ServerCapabilities = {
    tools: {},
    resources: {},
    completions: {},
    // The MCP skills extension (SEP-2640): skills/list and skills/get, files over resources/read.
    extensions: { [SKILLS_EXTENSION]: {} },
  };
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: 'Agent Skills registry', version: packageVersion() },
    { capabilities, instructions: INSTRUCTIONS },
  );
  registerSkillTools(server, deps);
  registerSkillResources(server, deps);
  registerSkillsExtension(server, deps);
  advertiseOnlyWhatIsDelivered(server);
  return server;
}

/**
 * McpServer declares `listChanged: true` for tools and resources as soon as one is registered. This
 * server lives for one stateless request and opens no stream back to the client, so it can deliver no
 * list_changed or resources/updated notification: initialize must not promise them (a client would
 * wait for notifications that never come instead of listing again). registerCapabilities merges each
 * capability's fields over the declared ones, so an undefined field is left out of the JSON answer;
 * test/mcp/server.test.ts checks the capabilities on the wire.
 */
function advertiseOnlyWhatIsDelivered(server: McpServer): void {
  server.server.registerCapabilities({
    tools: { listChanged: undefined },
    resources: { listChanged: undefined, subscribe: undefined },
  });
}
