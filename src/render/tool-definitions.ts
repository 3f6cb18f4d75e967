/**
 * The agent-side tools that go with the prompt fragment: `load_skill` (layer 2), `search_skills` (finds
 * skills no prompt lists) and `read_skill_file` (layer 3). GET /tools renders them for model APIs; the
 * MCP server reuses the names, descriptions and schemas, so every surface teaches the model the same thing.
 */

export const LOAD_SKILL_TOOL = 'load_skill';
/** Finds skills by describing the task (src/services/skill-search.ts), for catalogues no prompt lists whole. */
export const SEARCH_SKILLS_TOOL = 'search_skills';
export const READ_SKILL_FILE_TOOL = 'read_skill_file';

export const LOAD_SKILL_DESCRIPTION =
  "Loads a skill: returns the full instructions (the SKILL.md body) of one of the available skills listed in the system prompt. Skills are not tools: never call a skill's name as a tool; call load_skill with its name instead, as soon as a task matches the skill's description and before doing the task, then follow the instructions it returns. The instructions may refer to files bundled with the skill (scripts/, references/, assets/...) by relative path: read those with read_skill_file when the instructions tell you to.";

/**
 * Results search_skills answers when the model names no limit, and the most it may ask for. Defined
 * here, with the definition that advertises them, so this file imports nothing (the search service
 * re-exports them).
 */
export const DEFAULT_TOOL_LIMIT = 10;
export const MAX_TOOL_LIMIT = 50;

/** Appended to load_skill's description wherever search_skills is offered beside it. */
export const LOAD_SKILL_SEARCH_NOTE =
  'A skill found with search_skills loads the same way, by the name search_skills returned.';

export const SEARCH_SKILLS_DESCRIPTION =
  "Searches the registry's skills for ones that fit a task, when no skill listed in <available_skills> fits or the list is incomplete. Describe the task in your own words: the user's whole request is fine, in any language, typos included. Returns the best matches ranked best first, each with its name, description and why it matched; then call load_skill with the name of the one that fits and follow its instructions. If none fits, search again with other words or go on without a skill.";
export const SEARCH_QUERY_DESCRIPTION =
  "The task to find a skill for, in plain words, e.g. 'turn these CSV files into a slide deck'";
export const SEARCH_LIMIT_DESCRIPTION = `Most results to return, 1 to ${MAX_TOOL_LIMIT}`;

export const READ_SKILL_FILE_DESCRIPTION =
  "Reads one file bundled with a skill, such as references/api.md or scripts/extract.py, by its path relative to the skill's folder, exactly as the skill's instructions write it. Load the skill with load_skill first and read only the files its instructions point to.";

export const SKILL_NAME_DESCRIPTION = 'Name of the skill, exactly as listed in <available_skills>';
/** The name description when there is no enum and search_skills is offered: names come from either. */
export const SKILL_NAME_SEARCH_DESCRIPTION =
  'Name of the skill, exactly as listed in <available_skills> or as search_skills returned it';
export const SKILL_VERSION_DESCRIPTION =
  'Exact version to load, such as 1.2.0; omit it to load the current version';
export const FILE_PATH_DESCRIPTION =
  'Path of the file inside the skill, relative to its folder, e.g. references/forms.md';

/**
 * Above this many skills the name enum is left out: OpenAI's strict mode refuses large enums (over 250
 * values the total length is capped) and every name costs prompt tokens. The model then takes names
 * from <available_skills> or search_skills, and load_skill loads any exact name. Narrow the selection
 * with name=, tag= or q= to keep the enum.
 */
export const MAX_ENUM_NAMES = 250;

/** A JSON Schema object (draft 2020-12 subset that both providers accept). */
export type JsonSchemaObject = {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties: false;
};

/** A provider-neutral tool: what MCP's tools/list and the provider renderings are built from. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
}

export interface ToolOptions {
  /**
   * OpenAI strict mode: every property required, optional ones nullable instead. Guarantees the model
   * only ever sends a listed name.
   */
  strict?: boolean;
  /** false: load_skill's name enum is left out whatever the number of names (GET /tools?mode=search). */
  nameEnum?: boolean;
  /**
   * false: search_skills is not offered, for selections that name their skills (name=, q=): it would
   * find skills outside them, which an enum of the selection then refuses.
   */
  search?: boolean;
}

/** The `name` property of load_skill: an enum of the selectable skills when there are few enough. */
function nameProperty(names: readonly string[], options: ToolOptions): Record<string, unknown> {
  const withEnum = options.nameEnum !== false && names.length > 0 && names.length <= MAX_ENUM_NAMES;
  if (withEnum) return { type: 'string', enum: [...names], description: SKILL_NAME_DESCRIPTION };
  if (options.search !== false) return { type: 'string', description: SKILL_NAME_SEARCH_DESCRIPTION };
  if (names.length === 0) {
    return { type: 'string', description: `${SKILL_NAME_DESCRIPTION} (no skills are available right now)` };
  }
  return { type: 'string', description: SKILL_NAME_DESCRIPTION };
}

/** search_skills: `limit` is nullable in strict mode, and bounded only outside it (strict mode has no bounds). */
function searchTool(strict: boolean): ToolDefinition {
  const limit = strict
    ? {
        type: ['integer', 'null'],
        description: `${SEARCH_LIMIT_DESCRIPTION}; null for ${DEFAULT_TOOL_LIMIT}`,
      }
    : {
        type: 'integer',
        minimum: 1,
        maximum: MAX_TOOL_LIMIT,
        description: `${SEARCH_LIMIT_DESCRIPTION} (default ${DEFAULT_TOOL_LIMIT})`,
      };
  return {
    name: SEARCH_SKILLS_TOOL,
    description: SEARCH_SKILLS_DESCRIPTION,
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string', description: SEARCH_QUERY_DESCRIPTION }, limit },
      required: strict ? ['query', 'limit'] : ['query'],
      additionalProperties: false,
    },
  };
}

/**
 * load_skill, read_skill_file and (unless options.search is false) search_skills, for the given skill
 * names (the selection /prompt lists). search_skills comes last so the first two keep their places.
 */
export function skillTools(names: readonly string[], options: ToolOptions = {}): ToolDefinition[] {
  const strict = options.strict === true;
  const search = options.search !== false;
  const version = strict
    ? { type: ['string', 'null'], description: `${SKILL_VERSION_DESCRIPTION} (null for the current one)` }
    : { type: 'string', description: SKILL_VERSION_DESCRIPTION };
  const tools: ToolDefinition[] = [
    {
      name: LOAD_SKILL_TOOL,
      description: search ? `${LOAD_SKILL_DESCRIPTION} ${LOAD_SKILL_SEARCH_NOTE}` : LOAD_SKILL_DESCRIPTION,
      inputSchema: {
        type: 'object',
        properties: { name: nameProperty(names, options), version },
        required: strict ? ['name', 'version'] : ['name'],
        additionalProperties: false,
      },
    },
    {
      name: READ_SKILL_FILE_TOOL,
      description: READ_SKILL_FILE_DESCRIPTION,
      inputSchema: {
        type: 'object',
        properties: {
          name: {
            type: 'string',
            description: 'Name of the skill the file belongs to, as passed to load_skill',
          },
          path: { type: 'string', description: FILE_PATH_DESCRIPTION },
        },
        required: ['name', 'path'],
        additionalProperties: false,
      },
    },
  ];
  if (search) tools.push(searchTool(strict));
  return tools;
}

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchemaObject;
}

export interface OpenAiTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchemaObject; strict?: boolean };
}

/** Anthropic Messages API `tools`. */
export function anthropicTools(
  names: readonly string[],
  options: Omit<ToolOptions, 'strict'> = {},
): AnthropicTool[] {
  return skillTools(names, { ...options, strict: false }).map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema,
  }));
}

/** OpenAI Chat Completions `tools` (strict by default: the model can only send a listed name). */
export function openAiTools(names: readonly string[], options: ToolOptions = { strict: true }): OpenAiTool[] {
  const strict = options.strict ?? true;
  return skillTools(names, { ...options, strict }).map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      ...(strict ? { strict: true } : {}),
    },
  }));
}
