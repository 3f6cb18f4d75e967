/**
 * Runs the validator over the real-world corpus in ../shared/skill-corpus (absent in a plain clone:
 * the suite is skipped). Every SKILL.md must be either accepted with spec-valid values or refused
 * with a specific reason; no other exception may escape.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { splitFrontmatter } from '../../src/bundle/frontmatter.js';
import {
  BundleError,
  DEFAULT_LIMITS,
  type NormalizedBundle,
  type ParsedSkill,
} from '../../src/bundle/types.js';
import { isValidSkillName, validateBundle } from '../../src/bundle/validate.js';

const corpusRoot = fileURLToPath(new URL('../../../shared/skill-corpus', import.meta.url));
const corpusPresent = existsSync(corpusRoot);

function findSkillMdFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name === 'SKILL.md')
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

const skillFiles = corpusPresent ? findSkillMdFiles(corpusRoot) : [];

/** Generic wording that would mean the validator did not say what is wrong. */
const GENERIC_DETAIL = /^(invalid|error|bad request|validation failed|invalid skill)\.?$/i;

let accepted = 0;
const refusalReasons = new Map<string, number>();

/** A refusal reason with the file-specific parts (quoted values, numbers) blanked out, for counting. */
function reasonKind(detail: string): string {
  return detail
    .replace(/'[^']*'/g, "'…'")
    .replace(/\d+/g, 'N')
    .slice(0, 90);
}

function frontmatterDescription(text: string): string | undefined {
  try {
    const value = splitFrontmatter(text).data.description;
    return typeof value === 'string' && value.trim() !== '' ? value : undefined;
  } catch {
    return undefined;
  }
}

function checkAccepted(skill: ParsedSkill, text: string): void {
  expect(isValidSkillName(skill.name)).toBe(true);
  const length = [...skill.description].length;
  expect(length).toBeGreaterThanOrEqual(1);
  expect(length).toBeLessThanOrEqual(1024);
  expect(skill.frontmatter.name).toBe(skill.name);
  expect(skill.frontmatter.description).toBe(skill.description);
  const written = frontmatterDescription(text);
  if (written !== undefined) expect(skill.description).toBe(written.trim());
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  expect(normalized.endsWith(skill.body)).toBe(true);
  expect(skill.body.startsWith('---\n')).toBe(false);
}

function checkRefused(error: unknown): void {
  expect(error).toBeInstanceOf(BundleError);
  const refusal = error as BundleError;
  expect([413, 422]).toContain(refusal.status);
  expect(refusal.errors.length).toBeGreaterThan(0);
  for (const issue of refusal.errors) {
    expect(issue.path).toMatch(/^SKILL\.md/);
    expect(issue.detail).not.toMatch(GENERIC_DETAIL);
    expect(issue.detail.length).toBeGreaterThan(30);
  }
  for (const issue of refusal.errors) {
    const kind = reasonKind(issue.detail);
    refusalReasons.set(kind, (refusalReasons.get(kind) ?? 0) + 1);
  }
}

describe.skipIf(!corpusPresent)('real-world skill corpus', () => {
  afterAll(() => {
    const refused = skillFiles.length - accepted;
    const reasons = [...refusalReasons.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([reason, count]) => `  ${count} x ${reason}`)
      .join('\n');
    console.log(
      `corpus: ${skillFiles.length} SKILL.md, accepted ${accepted}, refused ${refused}\n${reasons}`,
    );
  });

  it('finds skills in the corpus', () => {
    expect(skillFiles.length).toBeGreaterThan(0);
  });

  it.each(skillFiles.map((file) => [relative(corpusRoot, file), file]))('%s', (_label, file) => {
    const bytes = new Uint8Array(readFileSync(file));
    const bundle: NormalizedBundle = {
      files: [{ path: 'SKILL.md', bytes, mode: 0o644 }],
      folderName: basename(dirname(file)),
      warnings: [],
    };
    let skill: ParsedSkill | undefined;
    try {
      skill = validateBundle(bundle, { limits: DEFAULT_LIMITS });
    } catch (error) {
      checkRefused(error);
      return;
    }
    checkAccepted(skill, new TextDecoder().decode(bytes));
    accepted++;
  });
});
