/**
 * The registry side of the example agents, in plain fetch so the file can be copied into any project:
 * the system-prompt fragment (GET /prompt), the tool definitions (GET /tools) and running the tools the
 * model may call: load_skill (layer 2, the SKILL.md body), read_skill_file (layer 3, one file) and
 * search_skills (GET /search, for skills the prompt does not list).
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Registry {
  /** Base URL, e.g. http://127.0.0.1:3000 */
  url: string;
  /** Bearer token, needed only when the registry runs with SKILLREG_READ_AUTH=true. */
  token?: string;
  /**
   * Tokens the skill list may take in the system prompt (GET /prompt?budget=): past it the prompt lists
   * the most used skills and tells the model to find the rest with search_skills.
   */
  budget?: number;
  /** `search`: always search-first (GET /prompt?mode=search and GET /tools?mode=search), for large catalogues. */
  mode?: 'list' | 'search';
}

function promptQuery(registry: Registry, forTools: boolean): string {
  const query = new URLSearchParams();
  if (!forTools && registry.budget !== undefined) query.set('budget', String(registry.budget));
  if (registry.mode === 'search') query.set('mode', 'search');
  return query.toString();
}

/** What a tool call answers: text for the model, and whether it is an error the model should see. */
export interface ToolResult {
  content: string;
  isError: boolean;
}

function get(registry: Registry, path: string): Promise<Response> {
  const headers: Record<string, string> = registry.token ? { authorization: `Bearer ${registry.token}` } : {};
  return fetch(`${registry.url.replace(/\/+$/, '')}${path}`, { headers });
}

/** The problem document's detail (RFC 9457), else the status line. */
async function problemDetail(response: Response): Promise<string> {
  const text = await response.text();
  try {
    return (JSON.parse(text) as { detail?: string }).detail ?? text;
  } catch {
    return text || `HTTP ${response.status} ${response.statusText}`;
  }
}

async function getOk(registry: Registry, path: string): Promise<Response> {
  const response = await get(registry, path);
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await problemDetail(response)}`);
  return response;
}

/** The `<available_skills>` fragment with its instructions, to append to the system prompt. */
export async function fetchPrompt(registry: Registry): Promise<string> {
  const query = promptQuery(registry, false);
  return (await getOk(registry, `/prompt${query ? `?${query}` : ''}`)).text();
}

/** load_skill, read_skill_file and search_skills, in the shape the provider's API takes. */
export async function fetchTools<Tool>(
  registry: Registry,
  provider: 'anthropic' | 'openai',
): Promise<Tool[]> {
  const query = promptQuery(registry, true);
  return (await (
    await getOk(registry, `/tools?provider=${provider}${query ? `&${query}` : ''}`)
  ).json()) as Tool[];
}

/** One result of GET /search (what search_skills answers). */
interface SearchResult {
  name: string;
  description: string;
  why: string;
}

/** search_skills: one line per result, `name — description (why)`, best first. */
async function searchSkills(registry: Registry, args: Record<string, unknown>): Promise<ToolResult> {
  if (typeof args.query !== 'string') return { content: 'Error: `query` must be a string', isError: true };
  // OpenAI's strict mode sends limit: null for "the default".
  const limit = typeof args.limit === 'number' ? `&limit=${encodeURIComponent(String(args.limit))}` : '';
  const response = await get(registry, `/search?q=${encodeURIComponent(args.query)}${limit}`);
  if (!response.ok) return { content: `Error: ${await problemDetail(response)}`, isError: true };
  const { results } = (await response.json()) as { results: SearchResult[] };
  if (results.length === 0) {
    return { content: 'No skill matches; search again with other words for the task.', isError: false };
  }
  const lines = results.map((result) => `${result.name} — ${result.description} (${result.why})`);
  return { content: lines.join('\n'), isError: false };
}

/** Runs one tool call of the model against the registry. Failures are results, so the model can recover. */
export async function runSkillTool(registry: Registry, tool: string, input: unknown): Promise<ToolResult> {
  const args = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  if (tool === 'search_skills') return searchSkills(registry, args);
  if (tool !== 'load_skill' && tool !== 'read_skill_file') {
    return { content: `Error: unknown tool ${tool}`, isError: true };
  }
  if (typeof args.name !== 'string') return { content: 'Error: `name` must be a string', isError: true };
  const skill = encodeURIComponent(args.name);
  let path: string;
  if (tool === 'load_skill') {
    // OpenAI's strict mode sends version: null for "the current version".
    const version = typeof args.version === 'string' ? `?version=${encodeURIComponent(args.version)}` : '';
    path = `/skills/${skill}/content${version}`;
  } else {
    if (typeof args.path !== 'string') return { content: 'Error: `path` must be a string', isError: true };
    path = `/skills/${skill}/files/${args.path.split('/').map(encodeURIComponent).join('/')}`;
  }
  const response = await get(registry, path);
  if (!response.ok) return { content: `Error: ${await problemDetail(response)}`, isError: true };
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/') && !type.includes('charset=utf-8')) {
    const size = (await response.arrayBuffer()).byteLength;
    return { content: `(binary file, ${type}, ${size} bytes: not shown)`, isError: false };
  }
  return { content: await response.text(), isError: false };
}

/** True when the module is the script node was asked to run (`npx tsx examples/...`), not an import. */
/** SKILLREG_PROMPT_BUDGET and SKILLREG_PROMPT_MODE, for the examples' command lines. */
export function promptSettings(env: Record<string, string | undefined>): Pick<Registry, 'budget' | 'mode'> {
  const budget = env.SKILLREG_PROMPT_BUDGET ? Number(env.SKILLREG_PROMPT_BUDGET) : undefined;
  return {
    ...(budget !== undefined && Number.isFinite(budget) ? { budget } : {}),
    ...(env.SKILLREG_PROMPT_MODE === 'search' ? { mode: 'search' as const } : {}),
  };
}

export function isMain(moduleUrl: string): boolean {
  const script = process.argv[1];
  try {
    return script !== undefined && realpathSync(script) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
