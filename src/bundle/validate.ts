/**
 * SKILL.md validation per the Agent Skills spec and the registry contract.
 *
 * Only four things are refused (422): unreadable frontmatter, an invalid name, a description over
 * 1024 characters, and no SKILL.md. Everything else that real files get wrong but whose meaning is
 * clear is accepted with a warning that says what to change.
 */
import { descriptionSection, firstParagraph } from './body-prose.js';
import { decodeUtf8, type SplitSkillMd, splitFrontmatter } from './frontmatter.js';
import {
  BundleError,
  type BundleIssue,
  type BundleLimits,
  type NormalizedBundle,
  type ParsedSkill,
} from './types.js';

export { descriptionSection, firstParagraph } from './body-prose.js';

export const SKILL_MD = 'SKILL.md';
export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 1024;
export const MAX_COMPATIBILITY_LENGTH = 500;
/** The frontmatter keys the Agent Skills spec defines; any other key is kept and warned about. */
export const SPEC_KEYS: readonly string[] = [
  'name',
  'description',
  'license',
  'compatibility',
  'metadata',
  'allowed-tools',
];

/** Unknown keys named in the warning; a machine-generated frontmatter can have thousands. */
const MAX_LISTED_KEYS = 20;
const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export interface ParseContext {
  /** The folder the upload was wrapped in: the name to use when the frontmatter has none. */
  folderName?: string;
  /** The `?name=` query: preferred over the folder name, and must agree with the frontmatter. */
  nameOverride?: string;
  /** Largest frontmatter block parsed (BundleLimits.maxFrontmatterBytes); unbounded when absent. */
  maxFrontmatterBytes?: number;
}

/** Collects every problem of one file so they can all be reported at once. */
class Findings {
  readonly errors: BundleIssue[] = [];
  readonly warnings: BundleIssue[] = [];

  error(path: string, detail: string): void {
    this.errors.push({ path, detail });
  }

  warn(path: string, detail: string): void {
    this.warnings.push({ path, detail });
  }
}

export function isValidSkillName(name: string): boolean {
  return name.length <= MAX_NAME_LENGTH && NAME_PATTERN.test(name);
}

/** A spec-valid name derived from free text ('Ahrefs Automation' -> 'ahrefs-automation'), if any. */
export function suggestName(raw: string): string | undefined {
  const slug = raw
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_NAME_LENGTH)
    .replace(/-+$/, '');
  return slug === '' ? undefined : slug;
}

/**
 * Finds SKILL.md at the root of a normalised bundle and validates it. Throws BundleError 422 when
 * it is missing or invalid, 413 when it is over `limits.maxSkillMdBytes`.
 */
export function validateBundle(
  bundle: NormalizedBundle,
  opts: { nameOverride?: string; limits: BundleLimits },
): ParsedSkill {
  const skillMd = bundle.files.find((file) => file.path === SKILL_MD);
  if (!skillMd) throw missingSkillMd(bundle);
  if (skillMd.bytes.length > opts.limits.maxSkillMdBytes) {
    throw skillMdTooLarge(skillMd.bytes.length, opts.limits.maxSkillMdBytes);
  }
  const context: ParseContext = {
    folderName: bundle.folderName,
    nameOverride: opts.nameOverride,
    maxFrontmatterBytes: opts.limits.maxFrontmatterBytes,
  };
  try {
    const skill = parseSkillMd(skillMd.bytes, context);
    return { ...skill, warnings: [...bundle.warnings, ...skill.warnings] };
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    throw new BundleError(error.status, error.title, error.message, error.errors, [
      ...bundle.warnings,
      ...error.warnings,
    ]);
  }
}

/** Parses and validates one SKILL.md; throws BundleError(422) listing every error found. */
export function parseSkillMd(bytes: Uint8Array, ctx: ParseContext): ParsedSkill {
  const split = splitFrontmatter(decodeUtf8(bytes), { maxFrontmatterBytes: ctx.maxFrontmatterBytes });
  const findings = new Findings();
  findings.warnings.push(...split.warnings);
  const { data } = split;

  const name = resolveName(split, ctx, findings);
  const description = resolveDescription(split, findings);
  checkCompatibility(data.compatibility, findings);
  checkLicense(data.license, findings);
  checkAllowedTools(data['allowed-tools'], findings);
  const metadata = normalizeMetadata(split, findings);
  warnAboutUnknownKeys(data, findings);
  if (split.body.trim() === '') {
    findings.warn(
      SKILL_MD,
      'SKILL.md has no Markdown body after the frontmatter; add the instructions the agent should follow',
    );
  }
  if (findings.errors.length > 0) throw invalidSkill(findings);

  const frontmatter: Record<string, unknown> = { name, description, ...data };
  frontmatter.name = name;
  frontmatter.description = description;
  if (metadata.changed) frontmatter.metadata = metadata.value;
  return {
    name: name!,
    description: description!,
    frontmatter,
    body: split.body,
    metadataVersion: metadataVersionOf(metadata.value),
    warnings: findings.warnings,
    declaresNameAndDescription:
      split.hasFrontmatter && data.name === name && data.description === description,
  };
}

// --- name ------------------------------------------------------------------------------------

function resolveName(split: SplitSkillMd, ctx: ParseContext, findings: Findings): string | undefined {
  const raw = split.data.name;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    return fallbackName(split, ctx, findings);
  }
  const name = nameAsText(raw, split, findings);
  if (name === undefined) return undefined;
  const problem = nameProblem(name);
  if (problem) findings.error(`${SKILL_MD}#name`, problem);
  if (ctx.nameOverride !== undefined && ctx.nameOverride !== name) {
    findings.error(
      `${SKILL_MD}#name`,
      `the ?name= parameter says '${ctx.nameOverride}' but SKILL.md's frontmatter says name: '${name}'; ?name= only names skills whose frontmatter has no name: drop it or make the two match`,
    );
  }
  if (!problem && ctx.folderName !== undefined && ctx.folderName !== name) {
    findings.warn(
      `${SKILL_MD}#name`,
      `the folder is named '${ctx.folderName}' but SKILL.md says name: '${name}'; the skill is published as '${name}' (the Agent Skills spec expects the folder to match the name)`,
    );
  }
  return problem ? undefined : name;
}

function nameAsText(raw: unknown, split: SplitSkillMd, findings: Findings): string | undefined {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean') {
    const text = split.sourceText(['name']) ?? String(raw);
    if (isValidSkillName(text)) {
      findings.warn(
        `${SKILL_MD}#name`,
        `name ${text} is written as a ${typeof raw}; it was read as the text '${text}': quote it (name: "${text}")`,
      );
    }
    return text;
  }
  findings.error(
    `${SKILL_MD}#name`,
    `name must be a single text value such as 'my-skill', not ${describeType(raw)}; write name: my-skill`,
  );
  return undefined;
}

function fallbackName(split: SplitSkillMd, ctx: ParseContext, findings: Findings): string | undefined {
  const source = ctx.nameOverride !== undefined ? 'the ?name= parameter' : 'the folder name';
  const fallback = ctx.nameOverride ?? ctx.folderName;
  const caseHint = caseVariantHint(split.data, 'name');
  if (fallback === undefined) {
    findings.error(
      `${SKILL_MD}#name`,
      `SKILL.md has no 'name' in its frontmatter${caseHint} and the upload has no folder name to use instead; add name: your-skill-name to the frontmatter`,
    );
    return undefined;
  }
  const problem = nameProblem(fallback);
  if (problem) {
    findings.error(
      `${SKILL_MD}#name`,
      `SKILL.md has no 'name' in its frontmatter${caseHint}, and ${source} cannot be used instead: ${problem}`,
    );
    return undefined;
  }
  findings.warn(
    `${SKILL_MD}#name`,
    `SKILL.md has no 'name' in its frontmatter${caseHint}; using '${fallback}' from ${source}: add name: ${fallback} to the frontmatter`,
  );
  return fallback;
}

/** Why a name breaks the spec, as a sentence with the fix; undefined when it is valid. */
function nameProblem(name: string): string | undefined {
  if (isValidSkillName(name)) return undefined;
  const suggestion = suggestName(name);
  const fix = suggestion ? `try '${suggestion}'` : "use only a-z, 0-9 and '-', e.g. 'my-skill'";
  if (name.length > MAX_NAME_LENGTH) {
    return `name '${name}' is ${name.length} characters; the limit is ${MAX_NAME_LENGTH}: ${fix}`;
  }
  if (!/^[a-z0-9-]+$/.test(name)) {
    return `name '${name}' must be lowercase letters, digits and hyphens; ${fix}`;
  }
  if (name.startsWith('-') || name.endsWith('-')) {
    return `name '${name}' must not start or end with a hyphen; ${fix}`;
  }
  return `name '${name}' must not contain consecutive hyphens ('--'); ${fix}`;
}

/** Keys are case-sensitive; a `Name:` key is the likely reason `name` is missing. */
function caseVariantHint(data: Record<string, unknown>, key: string): string {
  const variant = Object.keys(data).find((k) => k !== key && k.toLowerCase() === key);
  return variant ? ` (it has '${variant}', but keys are case-sensitive: write '${key}')` : '';
}

// --- description -----------------------------------------------------------------------------

function resolveDescription(split: SplitSkillMd, findings: Findings): string | undefined {
  const raw = split.data.description;
  const text = descriptionAsText(raw, split, findings);
  if (text === undefined) return undefined;
  const description = text.trim();
  if (description === '') return descriptionFromBody(split, findings);
  const length = characterCount(description);
  if (length > MAX_DESCRIPTION_LENGTH) {
    findings.error(
      `${SKILL_MD}#description`,
      `description is ${length} characters; the limit is ${MAX_DESCRIPTION_LENGTH}: shorten it to what the skill does and when to use it, and move the details into the body`,
    );
    return undefined;
  }
  return description;
}

/** The description as text: '' when absent, undefined (with an error) when it cannot be text. */
function descriptionAsText(raw: unknown, split: SplitSkillMd, findings: Findings): string | undefined {
  if (raw === undefined || raw === null) return '';
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean') {
    const text = split.sourceText(['description']) ?? String(raw);
    findings.warn(
      `${SKILL_MD}#description`,
      `description is written as a ${typeof raw}; it was read as the text '${text}': quote it and say what the skill does and when to use it`,
    );
    return text;
  }
  findings.error(
    `${SKILL_MD}#description`,
    `description must be text, not ${describeType(raw)}; write it as one line or as a folded block (description: >) and quote values that contain ': '`,
  );
  return undefined;
}

function descriptionFromBody(split: SplitSkillMd, findings: Findings): string | undefined {
  const caseHint = caseVariantHint(split.data, 'description');
  const section = descriptionSection(split.body);
  const paragraph = section ?? firstParagraph(split.body);
  if (paragraph === undefined) {
    findings.error(
      `${SKILL_MD}#description`,
      `SKILL.md has no 'description' in its frontmatter${caseHint} and no paragraph of text in its body to use instead; add description: what the skill does and when to use it`,
    );
    return undefined;
  }
  const used = section === undefined ? "the body's first paragraph is" : "the body's Description section is";
  findings.warn(
    `${SKILL_MD}#description`,
    `SKILL.md has no 'description' in its frontmatter${caseHint}; ${used} used instead: add a description saying what the skill does and when to use it`,
  );
  return truncateAtWord(paragraph, MAX_DESCRIPTION_LENGTH);
}

/** Cuts to `max` characters at a word boundary, marking the cut with an ellipsis. */
function truncateAtWord(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const head = chars.slice(0, max - 1).join('');
  const lastSpace = head.lastIndexOf(' ');
  const cut = lastSpace > head.length / 2 ? head.slice(0, lastSpace) : head;
  return `${cut.trimEnd()}…`;
}

/** Characters as the spec counts them: Unicode code points, not UTF-16 units. */
function characterCount(text: string): number {
  return [...text].length;
}

// --- the other spec keys ------------------------------------------------------------------------

function checkCompatibility(value: unknown, findings: Findings): void {
  if (value === undefined) return;
  const path = `${SKILL_MD}#compatibility`;
  if (typeof value !== 'string') {
    findings.warn(path, `compatibility should be text, not ${describeType(value)}; it is kept as written`);
    return;
  }
  const length = characterCount(value);
  if (length > MAX_COMPATIBILITY_LENGTH) {
    findings.warn(
      path,
      `compatibility is ${length} characters; the Agent Skills spec allows ${MAX_COMPATIBILITY_LENGTH}: shorten it (it is kept as written)`,
    );
  }
}

function checkLicense(value: unknown, findings: Findings): void {
  if (value === undefined || typeof value === 'string') return;
  findings.warn(
    `${SKILL_MD}#license`,
    `license should be text such as 'MIT' or 'Proprietary. See LICENSE.txt', not ${describeType(value)}; it is kept as written`,
  );
}

function checkAllowedTools(value: unknown, findings: Findings): void {
  if (value === undefined || typeof value === 'string') return;
  if (Array.isArray(value) && value.every((tool) => typeof tool === 'string')) return;
  findings.warn(
    `${SKILL_MD}#allowed-tools`,
    `allowed-tools should be a space-separated string or a list of tool names, not ${describeType(value)}; it is kept as written`,
  );
}

interface NormalizedMetadata {
  value: unknown;
  /** Whether `value` differs from what the frontmatter holds (values were coerced to strings). */
  changed: boolean;
}

/** The spec's metadata is a string->string map; scalars are turned back into the text written. */
function normalizeMetadata(split: SplitSkillMd, findings: Findings): NormalizedMetadata {
  const metadata = split.data.metadata;
  const path = `${SKILL_MD}#metadata`;
  if (metadata === undefined) return { value: undefined, changed: false };
  if (!isPlainObject(metadata)) {
    findings.warn(
      path,
      `metadata should be a mapping of key: "text value" lines, not ${describeType(metadata)}; it is kept as written`,
    );
    return { value: metadata, changed: false };
  }
  const coercedKeys: string[] = [];
  const entries = Object.entries(metadata).map(([key, value]): [string, string] => {
    if (typeof value === 'string') return [key, value];
    coercedKeys.push(key);
    return [key, metadataValueAsText(value, split.sourceText(['metadata', key]))];
  });
  if (coercedKeys.length === 0) return { value: metadata, changed: false };
  const normalized = Object.fromEntries(entries);
  const listed = coercedKeys.map((key) => `'${key}' -> '${normalized[key]}'`).join(', ');
  findings.warn(
    path,
    `metadata values must be strings; ${listed} ${coercedKeys.length === 1 ? 'was' : 'were'} converted to text: quote ${coercedKeys.length === 1 ? 'it' : 'them'} in SKILL.md`,
  );
  return { value: normalized, changed: true };
}

function metadataValueAsText(value: unknown, source: string | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return source ?? String(value);
}

function metadataVersionOf(metadata: unknown): string | undefined {
  if (!isPlainObject(metadata)) return undefined;
  const version = metadata.version;
  return typeof version === 'string' && version.trim() !== '' ? version.trim() : undefined;
}

function warnAboutUnknownKeys(data: Record<string, unknown>, findings: Findings): void {
  const unknown = Object.keys(data).filter((key) => !SPEC_KEYS.includes(key));
  if (unknown.length === 0) return;
  const shown = unknown.slice(0, MAX_LISTED_KEYS).map((key) => `'${key}'`);
  const more = unknown.length - shown.length;
  const listed = more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
  findings.warn(
    SKILL_MD,
    `frontmatter ${unknown.length === 1 ? 'key' : 'keys'} ${listed} ${unknown.length === 1 ? 'is' : 'are'} not part of the Agent Skills spec; kept and returned as written (agents other than the one they are meant for ignore them)`,
  );
}

// --- refusals -----------------------------------------------------------------------------------

function invalidSkill(findings: Findings): BundleError {
  const details = findings.errors.map((issue) => issue.detail);
  const message =
    details.length === 1
      ? `SKILL.md is not a valid skill: ${details[0]}`
      : `SKILL.md has ${details.length} problems: ${details.join('; ')}`;
  return new BundleError(422, 'Invalid skill', message, findings.errors, findings.warnings);
}

function missingSkillMd(bundle: NormalizedBundle): BundleError {
  const paths = bundle.files.map((file) => file.path);
  const wrongCase = paths.find((path) => path.toLowerCase() === 'skill.md');
  const nested = paths.filter((path) => path.endsWith('/SKILL.md'));
  let hint = 'add a SKILL.md with name and description frontmatter at the top of the bundle';
  if (wrongCase) hint = `found '${wrongCase}': rename it to SKILL.md (the name is case-sensitive)`;
  else if (nested.length > 0) {
    const shown = nested.slice(0, 3).join("', '");
    hint = `found '${shown}'${nested.length > 3 ? ' and more' : ''} deeper in the bundle: publish each skill folder on its own`;
  }
  const detail = `no SKILL.md at the root of the bundle; ${hint}`;
  return new BundleError(422, 'No SKILL.md', detail, [{ path: SKILL_MD, detail }], bundle.warnings);
}

function skillMdTooLarge(size: number, limit: number): BundleError {
  const detail = `SKILL.md is ${size} bytes; the limit is ${limit} bytes (${formatBytes(limit)}), configurable on the server with SKILLREG_MAX_SKILL_MD_BYTES: keep SKILL.md short and move long material into references/ files`;
  return new BundleError(413, 'SKILL.md too large', detail, [{ path: SKILL_MD, detail }]);
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

// --- helpers ------------------------------------------------------------------------------------

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}
