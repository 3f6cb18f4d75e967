/**
 * The agent-side tools that go with the prompt fragment: `load_skill` (layer 2) and `read_skill_file`
 * (layer 3). GET /tools renders them for model APIs; the MCP server reuses the names, descriptions and
 * schemas, so every surface teaches the model the same thing.
 */

export const LOAD_SKILL_TOOL = 'load_skill';
/** Finds skills by describing the task (src/services/skill-search.ts), for catalogues no prompt lists whole. */
export const SEARCH_SKILLS_TOOL = 'search_skills';
export const READ_SKILL_FILE_TOOL = 'read_skill_file';

export const LOAD_SKILL_DESCRIPTION =
  "Loads a skill: returns the full instructions (the SKILL.md body) of one of the available skills listed in the system prompt. Skills are not tools: never call a skill's name as a tool; call load_skill with its name instead, as soon as a task matches the skill's description and before doing the task, then follow the instructions it returns. The instructions may refer to files bundled with the skill (scripts/, references/, assets/...) by relative path: read those with read_skill_file when the instructions tell you to.";

export const READ_SKILL_FILE_DESCRIPTION =
  "Reads one file bundled with a skill, such as references/api.md or scripts/extract.py, by its path relative to the skill's folder, exactly as the skill's instructions write it. Load the skill with load_skill first and read only the files its instructions point to.";

export const SKILL_NAME_DESCRIPTION = 'Name of the skill, exactly as listed in <available_skills>';
export const SKILL_VERSION_DESCRIPTION =
  'Exact version to load, such as 1.2.0; omit it to load the current version';
export const FILE_PATH_DESCRIPTION =
  'Path of the file inside the skill, relative to its folder, e.g. references/forms.md';

/**
 * Above this many skills the name enum is left out: OpenAI's strict mode refuses large enums (over 250
 * values the total length is capped) and every name costs prompt tokens. Narrow the selection with
 * name=, tag= or q= to keep the enum.
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
}

/** The `name` property of load_skill: an enum of the selectable skills when there are few enough. */
function nameProperty(names: readonly string[]): Record<string, unknown> {
  if (names.length === 0) {
    return { type: 'string', description: `${SKILL_NAME_DESCRIPTION} (no skills are available right now)` };
  }
  if (names.length > MAX_ENUM_NAMES) return { type: 'string', description: SKILL_NAME_DESCRIPTION };
  return { type: 'string', enum: [...names], description: SKILL_NAME_DESCRIPTION };
}

/** load_skill and read_skill_file for the given skill names (the selection /prompt lists). */
export function skillTools(names: readonly string[], options: ToolOptions = {}): ToolDefinition[] {
  const version = options.strict
    ? { type: ['string', 'null'], description: `${SKILL_VERSION_DESCRIPTION} (null for the current one)` }
    : { type: 'string', description: SKILL_VERSION_DESCRIPTION };
  return [
    {
      name: LOAD_SKILL_TOOL,
      description: LOAD_SKILL_DESCRIPTION,
      inputSchema: {
        type: 'object',
        properties: { name: nameProperty(names), version },
        required: options.strict ? ['name', 'version'] : ['name'],
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
export function anthropicTools(names: readonly string[]): AnthropicTool[] {
  return skillTools(names).map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema,
  }));
}

/** OpenAI Chat Completions `tools` (strict by default: the model can only send a listed name). */
export function openAiTools(names: readonly string[], options: ToolOptions = { strict: true }): OpenAiTool[] {
  const strict = options.strict ?? true;
  return skillTools(names, { strict }).map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      ...(strict ? { strict: true } : {}),
    },
  }));
}
