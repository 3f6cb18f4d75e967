/**
 * The vocabulary the parts of the system-prompt fragment share (selection, token counts, budget,
 * rendering; see prompt.ts). Types only, so every part, and the memos in src/render/prompt-memo.ts, can
 * import it without importing each other.
 */

export type PromptStyle = 'xml' | 'markdown';

/**
 * list: every selected skill, turning search-first only when a budget cannot hold them all; search:
 * search-first always (the instructions send the model to search_skills when no listed skill fits).
 */
export type PromptMode = 'list' | 'search';

export interface PromptOptions {
  style: PromptStyle;
  /** Absolute base URL of the registry, without a trailing slash. */
  baseUrl: string;
  /** The dist-tag the selection used; locations then read that tag instead of latest. */
  tag?: string;
  /** Descriptions, by name, of skills given without one (only those a rendering lists are asked for). */
  describe?: (skills: readonly PromptSkill[]) => Promise<ReadonlyMap<string, string>>;
  /** In a view: the layer (namespace) each listed skill resolves to, which the JSON layout names. */
  namespaceOf?: (name: string) => string | undefined;
}

/** What the fragment needs to know about one skill. */
export interface PromptSkill {
  name: string;
  /**
   * Absent when the source keeps descriptions out of memory: renderings then ask
   * PromptOptions.describe for the ones they list. Present whenever promptTokens is absent.
   */
  description?: string;
  version: string;
  /**
   * The version's digest. With the name (and the layout) it fixes the skill's entry, so the entry's
   * token count is remembered across renderings; without it the entry is counted on every rendering.
   */
  digest?: string;
  tokens: { body: number };
  /** The version's scan verdict (pass or warn), which the JSON layout names; null before scanning. */
  scanVerdict?: string | null;
  /**
   * The counts of the skill's own parts of its entry, stored with the version at publish
   * (promptEntryTokens); without them the parts are counted at the first rendering and remembered.
   */
  promptTokens?: PromptEntryTokens | null;
  /**
   * Layer-2 loads recorded so far. A budget keeps the most loaded skills: by this count, then by
   * lastLoadedAt (see prompt-budget.ts dropOrder).
   */
  loadCount: number;
  /** Last layer-2 load; null when never loaded. Breaks ties of loadCount: the more recent is kept. */
  lastLoadedAt: Date | null;
}

/**
 * The counts of one skill's own parts of its entry (see prompt-tokens.ts); -1 until first needed
 * (markdown: or never split).
 */
export interface PromptEntryTokens {
  /** `<name>N</name>\n` + `<description>D</description>\n` + `/N`. */
  xml: number;
  /** `- **N**:` + ` D` + `/N`; -1 when the description is blank (the entry is then counted whole). */
  markdown: number;
  /** ` N` in the omitted line. */
  listed: number;
}

/** A current catalogue entry as the selection reads it. */
export interface AgentSkill extends PromptSkill {
  /** The frontmatter's `disable-model-invocation` as text (YAML true reads "true"); null when absent. */
  disableModelInvocation: string | null;
}

export type OmissionReason = 'budget' | 'not-found' | 'model-invocation-disabled';

export interface OmittedSkill {
  name: string;
  reason: OmissionReason;
}

export interface SelectedSkills {
  /** Skills a model may invoke, in catalogue order (the entries themselves when every one may be). */
  skills: readonly AgentSkill[];
  /** Skills named or matched that cannot be listed, with the reason. */
  omitted: OmittedSkill[];
}
