import type { AgentCatalogues, ScopedCatalogue } from '../cache/agent-catalogues.js';
import type { Scope } from '../domain/scope.js';
import {
  buildPrompt,
  namedOmissions,
  PromptBudgetError,
  type PromptMode,
  type PromptResult,
  type SkillSelection,
  selectAgentSkills,
} from '../render/prompt.js';
import { promptJsonBody, textBody } from '../render/prompt-document.js';
import { jsonBody } from '../render/response-bodies.js';
import { anthropicTools, openAiTools } from '../render/tool-definitions.js';
import { anthropicToolsSchema, OMITTED_NAMED, openAiToolsSchema } from '../wire/index.js';
import { type Answer, JSON_CONTENT_TYPE } from './answers.js';
import type { CachedReads } from './cached-read.js';
import type { SkillListing } from './listing.js';

export type PromptFormat = 'xml' | 'markdown' | 'json';
export type ToolsProvider = 'anthropic' | 'openai';
/** `auto`: load_skill's name is an enum of the selection when it is small enough; `search`: never. */
export type ToolsMode = 'auto' | 'search';

/** A rendered prompt as the cache keeps it: the bytes sent and, for the text layouts, their token count. */
interface RenderedPrompt {
  body: Buffer;
  tokens?: number;
  /**
   * Whether the budget dropped skills, so that which ones it kept depended on recorded loads. When
   * every selected skill fits, the rendering is the same under any loads: its ETag then leaves the
   * loads out, and agents polling a small catalogue keep getting 304s while skills are being loaded.
   */
  byLoads: boolean;
}

const CONTENT_TYPES: Record<PromptFormat, string> = {
  xml: 'text/plain; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  json: JSON_CONTENT_TYPE,
};

/**
 * What a remote agent reads to use the registry's skills: the system-prompt fragment (GET /prompt)
 * and the load-tool definitions (GET /tools). Both select from the agent catalogue in memory (the
 * default selection) or the database, and renderings are kept for the catalogue revision they were
 * made at (plus the loads revision when a budget orders skills by use), so a poll renders nothing.
 */
export class AgentRenderingService {
  constructor(
    private readonly reads: CachedReads,
    /** The listing, whose agent catalogues in memory (every namespace's, and views over them) these select from. */
    private readonly listing: SkillListing,
    /** The budget of a prompt that names none (SKILLREG_PROMPT_BUDGET); 0 means unlimited. */
    private readonly defaultBudget: number,
  ) {}

  /** The in-memory copies renderings select from (warmed at start). */
  get catalogues(): AgentCatalogues {
    return this.listing.catalogues;
  }

  async prompt(
    scope: Scope,
    request: {
      selection: SkillSelection;
      format: PromptFormat;
      /** Tokens the fragment may take; 0 means unlimited, absent the registry's default budget. */
      budget?: number;
      /** Default list (search-first only when the budget cannot hold every skill). */
      mode?: PromptMode;
      /** The scope's base URL (the registry's, with /namespaces/{ns} or /views/{view}): locations start with it. */
      baseUrl: string;
    },
  ): Promise<Answer & { tokens?: number }> {
    const { selection, format, baseUrl } = request;
    const mode = request.mode ?? 'list';
    // What the answer depends on is the budget in force, whoever chose it: the ETag and the cache
    // key carry it, so a changed default is never answered with a rendering made under the old one.
    const requested = request.budget ?? this.defaultBudget;
    const budget = requested === 0 ? undefined : requested;
    const render = () => this.renderPrompt(scope, selection, format, baseUrl, budget, mode);
    const read = await this.reads.of({
      read: 'prompt',
      on: { kind: 'scope', scope },
      shape: [format, selection, budget ?? null, baseUrl, mode],
    });
    // Not repeated by the response cache: a budgeted rendering also follows the loads.
    const answer = (etag: string, rendered: () => Promise<RenderedPrompt>): Answer => ({
      etag,
      immutable: false,
      contentType: CONTENT_TYPES[format],
      body: async () => {
        const { body, tokens } = await rendered();
        return format === 'json'
          ? { payload: body }
          : { payload: body, headers: { 'x-prompt-tokens': String(tokens) } };
      },
    });
    if (budget === undefined) return answer(read.etag, () => read.value(render));
    // Which skills a budget drops depends on recent loads, which do not bump the revision: the ETag
    // names the loads revision the rendering was made at, so it is rendered before the ETag is known.
    const rendered = await read
      .byLoads(render, (value) => value.byLoads)
      .catch((error: unknown) => {
        // The rendering (and a concurrent request sharing it) knows the budget, not who chose it.
        throw request.budget === undefined && error instanceof PromptBudgetError ? error.ofDefault() : error;
      });
    return answer(rendered.etag, () => Promise.resolve(rendered.value));
  }

  async tools(
    scope: Scope,
    request: {
      selection: SkillSelection;
      provider: ToolsProvider;
      strict: boolean;
      mode?: ToolsMode;
    },
  ): Promise<Answer> {
    const { selection, provider } = request;
    const strict = provider === 'openai' && request.strict;
    const mode = request.mode ?? 'auto';
    const searchFirst = mode === 'search';
    // A selection that names its skills keeps the model to them: search_skills would find others.
    const narrowed = (selection.names?.length ?? 0) > 0 || selection.q !== undefined;
    const options = { strict, nameEnum: !searchFirst, search: searchFirst || !narrowed };
    // Search-first definitions are the same for every selection.
    const shape = searchFirst ? null : selection;
    const read = await this.reads.of({
      read: 'tools',
      on: { kind: 'scope', scope },
      shape: [provider, strict, mode, shape],
    });
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      unrepeatable: true,
      render: async () => {
        // Search-first definitions name no skill: the catalogue is not read, whatever its size.
        const names = searchFirst ? [] : await this.invocableNames(scope, selection);
        return provider === 'openai'
          ? jsonBody(openAiToolsSchema, openAiTools(names, options))
          : jsonBody(anthropicToolsSchema, anthropicTools(names, options));
      },
    });
  }

  /** Names of the selected skills a model may invoke, in catalogue order. */
  async invocableNames(scope: Scope, selection: SkillSelection): Promise<string[]> {
    const { skills } = await selectAgentSkills(this.listing.agentCatalogue(scope), selection, {
      descriptions: false,
    });
    return skills.map((skill) => skill.name);
  }

  private async renderPrompt(
    scope: Scope,
    selection: SkillSelection,
    format: PromptFormat,
    baseUrl: string,
    budget: number | undefined,
    mode: PromptMode,
  ): Promise<{ value: RenderedPrompt; bytes: number }> {
    const catalogue: ScopedCatalogue = this.listing.agentCatalogue(scope);
    const selected = await selectAgentSkills(catalogue, selection);
    const result: PromptResult = await buildPrompt(selected.skills, {
      style: format === 'markdown' ? 'markdown' : 'xml',
      baseUrl,
      tag: selection.tag,
      budget,
      mode,
      describe: (listed) => catalogue.describe(listed),
      ...(catalogue.namespaceOf ? { namespaceOf: catalogue.namespaceOf } : {}),
    });
    const body =
      format === 'json'
        ? await promptJsonBody(
            {
              prompt: result.prompt,
              tokens: result.tokens,
              included: result.included,
              // Named from the drop order, never the whole list: nearly every skill at scale.
              ...namedOmissions(result, selected.omitted, OMITTED_NAMED),
              searchFirst: result.searchFirst,
            },
            result.parts,
          )
        : await textBody(result.parts);
    return {
      value: { body: body.value, tokens: result.tokens, byLoads: result.omittedCount > 0 },
      bytes: body.bytes + 64,
    };
  }
}
