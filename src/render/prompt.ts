import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { AppError } from '../errors.js';
import { countTokens } from './token-count.js';
import { LOAD_SKILL_TOOL, READ_SKILL_FILE_TOOL } from './tools.js';
import { escapeXml } from './xml.js';

/**
 * The system-prompt fragment for remote agents (layer 1): short instructions to load a skill before
 * following it, then the selected skills in the `<available_skills>` layout of the Agent Skills
 * reference tooling (or a Markdown list), fitted into an optional token budget.
 */

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
  /**
   * The counts of the skill's own parts of its entry, stored with the version at publish
   * (promptEntryTokens); without them the parts are counted at the first rendering and remembered.
   */
  promptTokens?: PromptEntryTokens | null;
  /** Last layer-2 load; null when never loaded. Budgets drop the least recently loaded first. */
  lastLoadedAt: Date | null;
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

export interface SkillSelection {
  /** Only these skills (in the catalogue's order); unknown ones are reported as not-found. */
  names?: readonly string[];
  /** Dist-tag whose versions are listed (default latest). */
  tag?: string;
  /** Full-text search over names and descriptions; results come most relevant first. */
  q?: string;
}

export interface AgentCatalogueQuery extends SkillSelection {
  /** false: descriptions are left out (empty), for callers that need the names only. */
  descriptions?: boolean;
}

/**
 * Anything that lists the current catalogue with what the fragment needs (SkillsRepository does):
 * every skill of the selection, however many, in the catalogue's order.
 */
export interface AgentCatalogueSource {
  agentCatalogue(query: AgentCatalogueQuery): Promise<AgentSkill[]>;
}

export interface SelectedSkills {
  /** Skills a model may invoke, in catalogue order. */
  skills: AgentSkill[];
  /** Skills named or matched that cannot be listed, with the reason. */
  omitted: OmittedSkill[];
}

/**
 * `disable-model-invocation: true` (Claude Code) means only a person may start the skill, so it is
 * never offered to a model. YAML written as a quoted "true" counts too.
 */
export function isModelInvocable(frontmatter: Record<string, unknown>): boolean {
  return !disablesModelInvocation(frontmatter['disable-model-invocation']);
}

function disablesModelInvocation(flag: unknown): boolean {
  return flag === true || (typeof flag === 'string' && flag.trim().toLowerCase() === 'true');
}

/**
 * The selection shared by GET /prompt and GET /tools: current versions under the tag, filtered by
 * names and q, minus skills a model must not invoke. `descriptions: false` when only names are needed.
 */
export async function selectAgentSkills(
  source: AgentCatalogueSource,
  selection: SkillSelection,
  options: { descriptions?: boolean } = {},
): Promise<SelectedSkills> {
  const names = selection.names && selection.names.length > 0 ? [...new Set(selection.names)] : undefined;
  const entries = await source.agentCatalogue({
    ...selection,
    names,
    ...(options.descriptions === false ? { descriptions: false } : {}),
  });
  if (!names) {
    const known = invocableOf.get(entries);
    if (known) return known;
  }
  const skills: AgentSkill[] = [];
  const omitted: OmittedSkill[] = [];
  for (const entry of entries) {
    if (disablesModelInvocation(entry.disableModelInvocation)) {
      omitted.push({ name: entry.name, reason: 'model-invocation-disabled' });
    } else {
      skills.push(entry);
    }
  }
  if (names) {
    const found = new Set(entries.map((entry) => entry.name));
    for (const name of names) if (!found.has(name)) omitted.push({ name, reason: 'not-found' });
  }
  const selected = { skills, omitted };
  // The same catalogue snapshot gives the same selection: the same arrays, which lets renderings
  // reuse what they computed for it (drop orders).
  if (!names) invocableOf.set(entries, selected);
  return selected;
}

const invocableOf = new WeakMap<readonly AgentSkill[], SelectedSkills>();

export type PromptStyle = 'xml' | 'markdown';

export interface PromptOptions {
  style: PromptStyle;
  /** Absolute base URL of the registry, without a trailing slash. */
  baseUrl: string;
  /** The dist-tag the selection used; locations then read that tag instead of latest. */
  tag?: string;
  /** Descriptions, by name, of skills given without one (only those a rendering lists are asked for). */
  describe?: (skills: readonly PromptSkill[]) => Promise<ReadonlyMap<string, string>>;
}

/** The absolute layer-2 URL of a skill, which `<location>` carries. */
export function skillLocation(baseUrl: string, name: string, tag?: string): string {
  const query = tag && tag !== 'latest' ? `?tag=${encodeURIComponent(tag)}` : '';
  return `${baseUrl}/skills/${encodeURIComponent(name)}/content${query}`;
}

function instructions(style: PromptStyle): string {
  const location = style === 'xml' ? "the skill's <location> URL" : "the skill's location URL";
  return [
    "The skills below are packaged instructions for specific tasks. A skill is not a tool: never call a skill's name as a tool.",
    `When a task matches a skill's description, first call the ${LOAD_SKILL_TOOL} tool with the skill's name (${LOAD_SKILL_TOOL} {"name": "<skill name>"}), then follow the instructions it returns; read any file they mention with ${READ_SKILL_FILE_TOOL}. Without these tools, fetch ${location} instead.`,
    'Use only the skills listed here, and only when they fit the task.',
  ].join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function renderEntry(skill: PromptSkill, options: PromptOptions, description = known(skill)): string {
  const location = skillLocation(options.baseUrl, skill.name, options.tag);
  if (options.style === 'markdown') {
    return `- **${skill.name}**: ${oneLine(description)} (location: ${location})\n`;
  }
  return `<skill>\n<name>${escapeXml(skill.name)}</name>\n<description>${escapeXml(description)}</description>\n<location>${escapeXml(location)}</location>\n</skill>\n`;
}

/** The description a skill carries; one without it must have been described for the rendering. */
function known(skill: PromptSkill): string {
  if (skill.description === undefined) throw new Error(`no description for ${skill.name}`);
  return skill.description;
}

/** The line naming skills left out for the budget: `shown` spelled out, of `total` left out. */
function omittedLine(shown: readonly string[], total: number): string {
  if (total === 0) return '';
  const rest = total - shown.length;
  if (shown.length === 0) return unlistedLine(rest);
  return `Also available but not described here, to save space (load them by name): ${shown.join(', ')}${rest > 0 ? ` and ${rest} more` : ''}.\n`;
}

function unlistedLine(count: number): string {
  return `${count} more skill${count === 1 ? ' is' : 's are'} available but not described here, to save space.\n`;
}

/** The fragment, in parts (see PromptResult.parts): `entries` are the entries, joined or not. */
function assemble(entries: readonly string[], omitted: string, options: PromptOptions): string[] {
  const head = `${instructions(options.style)}\n\n`;
  if (options.style === 'markdown') {
    const list = entries.length > 0 ? [...entries] : [EMPTY_MARKDOWN];
    if (!omitted) return [`## Available skills\n\n${head}`, ...list];
    // The blank line before the omitted line goes with the list: `)\n\n` is one pre-token.
    list[list.length - 1] += '\n';
    return [`## Available skills\n\n${head}`, ...list, omitted];
  }
  return [`${head}<available_skills>\n`, ...entries, `</available_skills>\n${omitted}`];
}

/**
 * The parts as one string without copying them (V8 keeps a concatenation as a rope until something
 * needs it flat), so a caller that only converts the parts never copies the whole fragment at once.
 */
function concatenate(parts: readonly string[]): string {
  let text = '';
  for (const part of parts) text += part;
  return text;
}

export interface IncludedSkill {
  name: string;
  version: string;
  location: string;
  tokens: { entry: number; body: number };
}

export interface PromptResult {
  prompt: string;
  /**
   * `prompt` in consecutive parts (the instructions, a thousand entries at a time, the closing lines),
   * for callers that convert a long fragment a part at a time.
   */
  parts: string[];
  tokens: number;
  included: IncludedSkill[];
  /** Skills dropped to fit the budget (the fragment names them), in the order they were dropped. */
  omitted: OmittedSkill[];
}

export class PromptBudgetError extends AppError {
  constructor(budget: number, minimum: number) {
    super(
      400,
      'Bad Request',
      `budget=${budget} is too small: the instructions alone take ${minimum} tokens (o200k_base). Pass budget=${minimum} or more, or leave it out`,
      { minimum, budget, errors: [{ path: 'querystring.budget', detail: `must be at least ${minimum}` }] },
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// Token counts without tokenizing the catalogue on every rendering
//
// o200k never merges across the points token-count.ts's isCleanCut describes, nor between the letters
// or digits that end a word and the `/`, `,` or `.` that follows (a pre-token of letters or digits
// takes no punctuation after it but an apostrophe). The fragment is therefore cut into parts at such
// points, and its count is the sum of theirs: the instructions, each entry, the closing lines. An entry is cut further, so the parts
// that depend on the skill (name, description) are counted once per version and remembered, and the
// parts that depend on the request (base URL, tag) once per rendering:
//   xml       `<skill>\n` | `<name>N</name>\n` | `<description>D</description>\n` |
//             `<location>BASE/skills` | `/N` | `/content?tag=T</location>\n` | `</skill>\n`
//   markdown  `- **N**:` | ` D` | ` (location: BASE/skills` | `/N` | `/content?tag=T)\n`
// That holds for the names the registry accepts (a-z, 0-9, inner hyphens); any other entry is counted
// whole. The omitted line is `Also available ... (load them by name):` | ` N1` | `,` | ` N2` ... | `.\n`
// (or ` and R more.\n`). Markdown puts a blank line between the last entry and that line, and `)\n\n`
// is one pre-token: the last entry is counted with it. test/prompt-tokens.test.ts checks the sums
// against whole counts over a corpus of real skills.

/** Names whose entries split as above: what the registry accepts as a skill name. */
const PLAIN_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** A markdown entry's description part is ` D`: with a blank description there is no such part. */
const NOT_BLANK = /\S/;

/** The counts of one skill's own parts of its entry; -1 until first needed (markdown: or never split). */
export interface PromptEntryTokens {
  /** `<name>N</name>\n` + `<description>D</description>\n` + `/N`. */
  xml: number;
  /** `- **N**:` + ` D` + `/N`; -1 when the description is blank (the entry is then counted whole). */
  markdown: number;
  /** ` N` in the omitted line. */
  listed: number;
}

/** Remembered counts, for the version with `digest`. */
interface SkillCounts extends PromptEntryTokens {
  digest: string;
}

function xmlPartTokens(name: string, description: string): number {
  return (
    countTokens(`<name>${name}</name>\n`) +
    countTokens(`<description>${escapeXml(description)}</description>\n`) +
    countTokens(`/${name}`)
  );
}

function markdownPartTokens(name: string, description: string): number {
  return countTokens(`- **${name}**:`) + countTokens(` ${oneLine(description)}`) + countTokens(`/${name}`);
}

/**
 * Every count of a skill's own entry parts, computed once per version at publish and stored with it,
 * so no rendering ever tokenizes that version (a new process's first prompt at 100,000 skills would
 * otherwise count every entry). Null for a name the parts do not split (counted whole instead).
 */
export function promptEntryTokens(name: string, description: string): PromptEntryTokens | null {
  if (!PLAIN_NAME.test(name)) return null;
  return {
    xml: xmlPartTokens(name, description),
    markdown: NOT_BLANK.test(description) ? markdownPartTokens(name, description) : -1,
    listed: countTokens(` ${name}`),
  };
}

/**
 * Counts of skill parts by skill name, for the version last seen. At most MEMO_LIMIT skills are kept
 * (about 250 bytes each: 24 MB at 100,000); beyond that the earliest remembered go first. A publish
 * changes one skill's digest, so the next rendering counts that skill's parts again and nothing else.
 */
const MEMO_LIMIT = 200_000;
const memo = new Map<string, SkillCounts>();

/** Forgets every remembered count (benchmarks measure cold renderings with it). */
export function clearEntryTokenMemo(): void {
  memo.clear();
}

function countsOf(name: string, digest: string): SkillCounts {
  const known = memo.get(name);
  if (known !== undefined && known.digest === digest) return known;
  if (known !== undefined) memo.delete(name);
  const counts: SkillCounts = { digest, xml: -1, markdown: -1, listed: -1 };
  memo.set(name, counts);
  if (memo.size > MEMO_LIMIT) memo.delete(memo.keys().next().value!);
  return counts;
}

/** Per-rendering constants: the parts of the fragment that do not depend on the skills. */
class Layout {
  /** The instructions and what comes before the first entry, as assemble() writes them. */
  readonly headTokens: number;
  /** Tokens of the fixed parts of an entry (see above). */
  readonly entryFixed: number;
  /** xml: `</available_skills>\n`. */
  readonly closeTokens: number;
  /** markdown: what the blank line adds to the last entry before the omitted line. */
  readonly lastEntryNewline: number;
  /** markdown: the placeholder when no skill is listed, alone and before the omitted line. */
  readonly emptyTokens: number;
  readonly emptyBeforeOmittedTokens: number;

  constructor(
    readonly options: PromptOptions,
    readonly skills: readonly PromptSkill[],
  ) {
    this.memoized = new Array<PromptEntryTokens | null>(skills.length).fill(null);
    const { style, baseUrl, tag } = options;
    const query = tag && tag !== 'latest' ? `?tag=${encodeURIComponent(tag)}` : '';
    let head: string;
    if (style === 'markdown') {
      head = `## Available skills\n\n${instructions(style)}\n\n`;
      const end = `/content${query})\n`;
      this.entryFixed = countTokens(` (location: ${baseUrl}/skills`) + countTokens(end);
      this.closeTokens = 0;
      this.lastEntryNewline = countTokens(`${end}\n`) - countTokens(end);
      this.emptyTokens = countTokens(EMPTY_MARKDOWN);
      this.emptyBeforeOmittedTokens = countTokens(`${EMPTY_MARKDOWN}\n`);
    } else {
      head = `${instructions(style)}\n\n<available_skills>\n`;
      this.entryFixed =
        countTokens('<skill>\n') +
        countTokens(`<location>${escapeXml(baseUrl)}/skills`) +
        countTokens(`/content${escapeXml(query)}</location>\n`) +
        countTokens('</skill>\n');
      this.closeTokens = countTokens('</available_skills>\n');
      this.lastEntryNewline = 0;
      this.emptyTokens = 0;
      this.emptyBeforeOmittedTokens = 0;
    }
    this.headTokens = countTokens(head);
  }

  /** The remembered counts of each skill whose entry is counted in parts, by index; null for the rest. */
  private readonly memoized: (PromptEntryTokens | null)[];
  /** newlineAfter of entries counted whole, by index. */
  private readonly newlineAdded = new Map<number, number>();

  /** Tokens of the entry of skills[index]. Call it for every index first. */
  entryTokens(index: number): number {
    const skill = this.skills[index]!;
    const { name, digest } = skill;
    const stored = skill.promptTokens;
    if (stored && (this.options.style === 'xml' || stored.markdown >= 0)) {
      this.memoized[index] = stored;
      return this.entryFixed + (this.options.style === 'xml' ? stored.xml : stored.markdown);
    }
    const splits =
      digest !== undefined &&
      PLAIN_NAME.test(name) &&
      (this.options.style === 'xml' || NOT_BLANK.test(known(skill)));
    if (!splits) {
      this.memoized[index] = null;
      return countTokens(renderEntry(skill, this.options));
    }
    const counts = countsOf(name, digest);
    this.memoized[index] = counts;
    if (this.options.style === 'markdown') {
      if (counts.markdown < 0) counts.markdown = markdownPartTokens(name, known(skill));
      return this.entryFixed + counts.markdown;
    }
    if (counts.xml < 0) counts.xml = xmlPartTokens(name, known(skill));
    return this.entryFixed + counts.xml;
  }

  /** Tokens of ` name` in the omitted line. */
  listedTokens(index: number): number {
    const counts = this.memoized[index];
    if (!counts) return countTokens(` ${this.skills[index]!.name}`);
    if (counts.listed < 0) counts.listed = countTokens(` ${this.skills[index]!.name}`);
    return counts.listed;
  }

  /** markdown: what the blank line before the omitted line adds to the entry of skills[index]. */
  newlineAfter(index: number, entryTokens: number): number {
    if (this.options.style !== 'markdown') return 0;
    if (this.memoized[index]) return this.lastEntryNewline;
    let added = this.newlineAdded.get(index);
    if (added === undefined) {
      added = countTokens(`${renderEntry(this.skills[index]!, this.options)}\n`) - entryTokens;
      this.newlineAdded.set(index, added);
    }
    return added;
  }

  /**
   * Tokens of the fragment listing entries that count `keptTokens` together (`last` the index and
   * tokens of the last of them, undefined when none), followed by an omitted line of `lineTokens` (0
   * when nothing is omitted).
   */
  total(keptTokens: number, last: { index: number; tokens: number } | undefined, lineTokens: number): number {
    if (this.options.style === 'xml') return this.headTokens + keptTokens + this.closeTokens + lineTokens;
    if (last === undefined) {
      return (
        this.headTokens + (lineTokens > 0 ? this.emptyBeforeOmittedTokens + lineTokens : this.emptyTokens)
      );
    }
    return (
      this.headTokens +
      keptTokens +
      (lineTokens > 0 ? this.newlineAfter(last.index, last.tokens) + lineTokens : 0)
    );
  }
}

const EMPTY_MARKDOWN = '(no skills are available)\n';
const OMITTED_PREFIX = 'Also available but not described here, to save space (load them by name):';
let omittedConstants: { prefix: number; comma: number; end: number } | undefined;

/**
 * Tokens of the omitted line for `dropped` skills of which the first `listed` are named, their ` name`
 * parts counting `listedTokens` together (see omittedLine).
 */
function omittedLineTokens(dropped: number, listed: number, listedTokens: number): number {
  if (dropped === 0) return 0;
  if (listed === 0) return countTokens(unlistedLine(dropped));
  omittedConstants ??= {
    prefix: countTokens(OMITTED_PREFIX),
    comma: countTokens(','),
    end: countTokens('.\n'),
  };
  const { prefix, comma, end } = omittedConstants;
  const rest = dropped - listed;
  return (
    prefix + listedTokens + (listed - 1) * comma + (rest > 0 ? countTokens(` and ${rest} more.\n`) : end)
  );
}

/** Long loops give the event loop a turn every SLICE_MS, so other requests are answered meanwhile. */
const SLICE_MS = 10;

class Slicer {
  private started = performance.now();
  private steps = 0;

  /** Call once per step: true when the loop should `await slicer.pause()`. */
  due(): boolean {
    this.steps += 1;
    return (this.steps & 127) === 0 && performance.now() - this.started >= SLICE_MS;
  }

  async pause(): Promise<void> {
    await yieldToEventLoop();
    this.started = performance.now();
  }
}

interface Rendered {
  prompt: string;
  parts: string[];
}

/**
 * Computed counts are exact by construction; a budgeted fragment up to this many characters (about
 * 50,000 tokens) is also counted whole, as a check (a part at a time: parts join where counts add up).
 */
const VERIFY_LIMIT = 200_000;
/** When a whole count ever disagrees, candidates this close to the budget are counted whole. */
const SLACK = 16;

/**
 * Budgets drop the least recently loaded skill first (never loaded counts as least recent), then the
 * longest entry, then by name so the answer is deterministic.
 */
function dropOrder(skills: readonly PromptSkill[], entryTokens: Float64Array): Int32Array {
  const loaded = new Float64Array(skills.length);
  for (let i = 0; i < skills.length; i++) {
    loaded[i] = skills[i]!.lastLoadedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
  }
  const order = new Int32Array(skills.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  return order.sort((a, b) => {
    if (loaded[a] !== loaded[b]) return loaded[a]! < loaded[b]! ? -1 : 1;
    if (entryTokens[a] !== entryTokens[b]) return entryTokens[b]! - entryTokens[a]!;
    return skills[a]!.name < skills[b]!.name ? -1 : 1;
  });
}

/**
 * Drop orders of recent selections by layout. A selection that did not change is the same array
 * (the in-memory agent catalogue's snapshot, see selectAgentSkills), so renderings with other budgets
 * reuse its order instead of sorting the catalogue again.
 */
const dropOrders = new WeakMap<readonly PromptSkill[], Map<string, Int32Array>>();

function dropOrderFor(
  skills: readonly PromptSkill[],
  entryTokens: Float64Array,
  options: PromptOptions,
): Int32Array {
  const key = `${options.style}|${options.baseUrl}|${options.tag ?? ''}`;
  let byLayout = dropOrders.get(skills);
  const known = byLayout?.get(key);
  if (known) return known;
  const order = dropOrder(skills, entryTokens);
  if (!byLayout) {
    byLayout = new Map();
    dropOrders.set(skills, byLayout);
  }
  if (byLayout.size >= 8) byLayout.clear();
  byLayout.set(key, order);
  return order;
}

/**
 * Renders the fragment for the given skills (already selected, in display order). With a budget,
 * whole skills are dropped until the fragment, instructions and omitted line included, counts at most
 * `budget` tokens; a budget below what the fragment needs with every skill dropped is refused.
 *
 * Every skill is either listed or, with a budget, named in `omitted`, however many there are. Token
 * counts come from remembered per-skill parts (see Layout), so after a publish only the changed skills
 * are tokenized; long loops yield to the event loop.
 */
export async function buildPrompt(
  skills: readonly PromptSkill[],
  options: PromptOptions & { budget?: number },
): Promise<PromptResult> {
  const layout = new Layout(options, skills);
  const slicer = new Slicer();
  const n = skills.length;
  const entryTokens = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    entryTokens[i] = layout.entryTokens(i);
    total += entryTokens[i]!;
    if (slicer.due()) await slicer.pause();
  }
  const kept = new Uint8Array(n).fill(1);
  const { budget } = options;
  const lastOf = (index: number) => (index < 0 ? undefined : { index, tokens: entryTokens[index]! });
  /**
   * The fragment for the current `kept`; the omitted line names the first `listed` of the others (in
   * catalogue order, as the entries are), or all of them.
   */
  // Descriptions fetched for this rendering (skills given without one); a later candidate lists a
  // subset of an earlier one's skills, so each is fetched at most once.
  const described = new Map<string, string>();
  const describeKept = async (): Promise<void> => {
    const missing: PromptSkill[] = [];
    for (let i = 0; i < n; i++) {
      const skill = skills[i]!;
      if (kept[i] && skill.description === undefined && !described.has(skill.name)) missing.push(skill);
    }
    if (missing.length === 0) return;
    if (!options.describe) throw new Error('skills without descriptions need PromptOptions.describe');
    for (const [name, description] of await options.describe(missing)) described.set(name, description);
  };
  const render = async (listed?: number): Promise<Rendered> => {
    await describeKept();
    // Entries are joined a thousand at a time, so no single step copies the whole list.
    const chunks: string[] = [];
    let chunk: string[] = [];
    const names: string[] = [];
    const spelled = listed ?? n;
    let left = 0;
    for (let i = 0; i < n; i++) {
      if (kept[i]) {
        const skill = skills[i]!;
        chunk.push(renderEntry(skill, options, skill.description ?? described.get(skill.name) ?? ''));
        if (chunk.length === 1000) {
          chunks.push(chunk.join(''));
          chunk = [];
        }
      } else {
        if (left < spelled) names.push(skills[i]!.name);
        left += 1;
      }
      if (slicer.due()) await slicer.pause();
    }
    if (chunk.length > 0) chunks.push(chunk.join(''));
    const parts = assemble(chunks, omittedLine(names, left), options);
    return { prompt: concatenate(parts), parts };
  };
  const finish = async (
    { prompt, parts }: Rendered,
    tokens: number,
    dropped: ArrayLike<number>,
  ): Promise<PromptResult> => {
    const included: IncludedSkill[] = [];
    for (let i = 0; i < n; i++) {
      if (slicer.due()) await slicer.pause();
      if (!kept[i]) continue;
      const skill = skills[i]!;
      included.push({
        name: skill.name,
        version: skill.version,
        location: skillLocation(options.baseUrl, skill.name, options.tag),
        tokens: { entry: entryTokens[i]!, body: skill.tokens.body },
      });
    }
    // Only the JSON layout lists what was dropped (at 100,000 skills and a small budget, nearly all):
    // the list is made when asked for.
    let omitted: OmittedSkill[] | undefined;
    return {
      prompt,
      parts,
      tokens,
      included,
      get omitted() {
        omitted ??= Array.from(dropped, (index) => ({
          name: skills[index]!.name,
          reason: 'budget' as const,
        }));
        return omitted;
      },
    };
  };
  /**
   * Whether a candidate fits: by its computed count, confirmed by a whole count when the text is small
   * enough (after a disagreement, `exact` makes every candidate near the budget counted whole).
   */
  let exact = false;
  const accept = async (
    computed: number,
    text: () => Promise<Rendered>,
  ): Promise<{ rendered: Rendered; tokens: number } | undefined> => {
    if (budget === undefined) return { rendered: await text(), tokens: computed };
    if (computed > budget + (exact ? SLACK : 0)) return undefined;
    const rendered = await text();
    if (!exact && rendered.prompt.length > VERIFY_LIMIT) return { rendered, tokens: computed };
    let tokens = 0;
    for (const part of rendered.parts) {
      tokens += countTokens(part);
      if (slicer.due()) await slicer.pause();
    }
    if (tokens !== computed) exact = true;
    return tokens <= budget ? { rendered, tokens } : undefined;
  };

  const full = await accept(layout.total(total, lastOf(n - 1), 0), () => render());
  if (full) return await finish(full.rendered, full.tokens, []);
  const budgeted = budget!;

  // Drop skills in order until the fragment fits, every dropped skill named. Dropping a skill always
  // saves tokens (its entry holds its name twice and more; the omitted line gains the name and a
  // comma), so the first count of dropped skills that may fit is found by bisection over prefix sums
  // in drop order, and only candidates from there on are rendered.
  const order = dropOrderFor(skills, entryTokens, options);
  const droppedEntries = new Float64Array(n + 1);
  const droppedNames = new Float64Array(n + 1);
  for (let k = 0; k < n; k++) {
    const index = order[k]!;
    droppedEntries[k + 1] = droppedEntries[k]! + entryTokens[index]!;
    droppedNames[k + 1] = droppedNames[k]! + layout.listedTokens(index);
    if (slicer.due()) await slicer.pause();
  }
  // lastKept[k]: the last skill in catalogue order still listed once the first k are dropped (-1: none).
  const lastKept = new Int32Array(n + 1);
  lastKept[n] = -1;
  for (let k = n - 1; k >= 0; k--) lastKept[k] = Math.max(order[k]!, lastKept[k + 1]!);
  const computedAfter = (k: number) =>
    layout.total(total - droppedEntries[k]!, lastOf(lastKept[k]!), omittedLineTokens(k, k, droppedNames[k]!));
  let low = 1;
  let high = n;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (computedAfter(middle) <= budgeted + SLACK) high = middle;
    else low = middle + 1;
  }
  let applied = 0;
  for (let k = low; k <= n; k++) {
    const computed = computedAfter(k);
    if (computed > budgeted + SLACK) continue;
    for (; applied < k; applied++) kept[order[applied]!] = 0;
    const fit = await accept(computed, () => render());
    if (fit) return await finish(fit.rendered, fit.tokens, order.subarray(0, k));
    if (slicer.due()) await slicer.pause();
  }
  for (; applied < n; applied++) kept[order[applied]!] = 0;
  const dropped = order;

  // Every skill dropped and the names alone do not fit: spell out as many of them as fit.
  const prefix = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i]! + layout.listedTokens(i);
  const computedFor = (listed: number) =>
    layout.total(0, undefined, omittedLineTokens(n, listed, prefix[listed]!));
  const fits = async (listed: number): Promise<boolean> =>
    exact
      ? (await accept(computedFor(listed), () => render(listed))) !== undefined
      : computedFor(listed) <= budgeted;
  // A second search only runs when the whole count of the first one's answer disagreed.
  for (let attempt = 0; attempt < 2; attempt++) {
    let low = 0;
    let high = n;
    let best = -1;
    while (low <= high) {
      const listed = Math.floor((low + high) / 2);
      if (await fits(listed)) {
        best = listed;
        low = listed + 1;
      } else {
        high = listed - 1;
      }
    }
    if (best < 0) break;
    const fit = await accept(computedFor(best), () => render(best));
    if (fit) return await finish(fit.rendered, fit.tokens, dropped);
  }
  throw new PromptBudgetError(budgeted, countTokens((await render(0)).prompt));
}
