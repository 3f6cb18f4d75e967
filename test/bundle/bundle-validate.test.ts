import matter from 'gray-matter';
import { describe, expect, it } from 'vitest';
import { decodeUtf8, splitFrontmatter } from '../../src/bundle/frontmatter.js';
import { BundleError, DEFAULT_LIMITS, type NormalizedBundle } from '../../src/bundle/types.js';
import {
  descriptionSection,
  firstParagraph,
  parseSkillMd,
  suggestName,
  validateBundle,
} from '../../src/bundle/validate.js';

const utf8 = (text: string) => new TextEncoder().encode(text);
const parse = (text: string, ctx: { folderName?: string; nameOverride?: string } = {}) =>
  parseSkillMd(utf8(text), ctx);

function refusal(fn: () => unknown): BundleError {
  try {
    fn();
  } catch (error) {
    if (error instanceof BundleError) return error;
    throw error;
  }
  throw new Error('expected a BundleError, nothing was thrown');
}

const details = (issues: { detail: string }[]) => issues.map((issue) => issue.detail).join('\n');

function skill(frontmatter: string, body = '# Title\n\nDo the thing.\n'): string {
  return `---\n${frontmatter}\n---\n${body}`;
}

describe('name', () => {
  it('accepts a spec-valid name and keeps it', () => {
    const parsed = parse(skill('name: pdf-tools\ndescription: Work with PDFs.'));
    expect(parsed.name).toBe('pdf-tools');
    expect(parsed.frontmatter.name).toBe('pdf-tools');
    expect(parsed.warnings).toEqual([]);
  });

  it('refuses a name with capitals and spaces, suggesting a slug', () => {
    const error = refusal(() => parse(skill('name: Ahrefs Automation\ndescription: SEO.')));
    expect(error.status).toBe(422);
    expect(error.errors).toEqual([
      {
        path: 'SKILL.md#name',
        detail:
          "name 'Ahrefs Automation' must be lowercase letters, digits and hyphens; try 'ahrefs-automation'",
      },
    ]);
  });

  it.each([
    ['-lead', 'must not start or end with a hyphen', 'lead'],
    ['trail-', 'must not start or end with a hyphen', 'trail'],
    ['double--dash', "consecutive hyphens ('--')", 'double-dash'],
    ['a'.repeat(65), 'the limit is 64', 'a'.repeat(64)],
    ['under_score', 'lowercase letters, digits and hyphens', 'under-score'],
  ])('refuses %s', (name, problem, suggestion) => {
    const error = refusal(() => parse(skill(`name: "${name}"\ndescription: d`)));
    expect(error.errors[0]!.detail).toContain(problem);
    expect(error.errors[0]!.detail).toContain(`try '${suggestion}'`);
  });

  it('suggests names by slugifying', () => {
    expect(suggestName('Ahrefs Automation')).toBe('ahrefs-automation');
    expect(suggestName('  Café  Déjà-Vu!! ')).toBe('cafe-deja-vu');
    expect(suggestName('IDOR Vulnerability Testing')).toBe('idor-vulnerability-testing');
    expect(suggestName('数据分析')).toBeUndefined();
    expect(suggestName(`${'a'.repeat(63)} b`)).toBe('a'.repeat(63));
  });

  it('coerces a numeric name with a warning', () => {
    const parsed = parse(skill('name: 2048\ndescription: A game.'));
    expect(parsed.name).toBe('2048');
    expect(details(parsed.warnings)).toContain('written as a number');
  });

  it('refuses a name that is a list', () => {
    const error = refusal(() => parse(skill('name: [a, b]\ndescription: d')));
    expect(error.errors[0]!.detail).toContain('not a list');
  });

  it('falls back to ?name= then the folder name, with a warning', () => {
    const text = skill('description: d');
    const fromOverride = parse(text, { nameOverride: 'from-query', folderName: 'from-folder' });
    expect(fromOverride.name).toBe('from-query');
    expect(details(fromOverride.warnings)).toContain('?name= parameter');
    const fromFolder = parse(text, { folderName: 'from-folder' });
    expect(fromFolder.name).toBe('from-folder');
    expect(fromFolder.frontmatter.name).toBe('from-folder');
    expect(details(fromFolder.warnings)).toContain('add name: from-folder');
  });

  it('refuses a missing name with nothing to fall back on', () => {
    const error = refusal(() => parse(skill('description: d')));
    expect(error.errors[0]!.detail).toContain('add name: your-skill-name');
  });

  it('refuses an invalid folder-name fallback with a suggestion', () => {
    const error = refusal(() => parse(skill('description: d'), { folderName: 'My Skill' }));
    expect(error.errors[0]!.detail).toContain("try 'my-skill'");
  });

  it('points at a wrongly cased Name key', () => {
    const parsed = parse(skill('Name: x\ndescription: d'), { folderName: 'x' });
    expect(details(parsed.warnings)).toContain("it has 'Name', but keys are case-sensitive");
  });

  it('refuses ?name= that contradicts the frontmatter', () => {
    const error = refusal(() => parse(skill('name: alpha\ndescription: d'), { nameOverride: 'beta' }));
    expect(error.status).toBe(422);
    expect(error.errors[0]!.detail).toContain("?name= parameter says 'beta'");
  });

  it('only warns when the folder name differs', () => {
    const parsed = parse(skill('name: alpha\ndescription: d'), { folderName: 'alpha-folder' });
    expect(parsed.name).toBe('alpha');
    expect(details(parsed.warnings)).toContain("the folder is named 'alpha-folder'");
  });
});

describe('description', () => {
  it('accepts folded and quoted descriptions', () => {
    const folded = parse(skill('name: a\ndescription: >\n  First line\n  second line.\n'));
    expect(folded.description).toBe('First line second line.');
    const literal = parse(skill('name: a\ndescription: |\n  Line one.\n  Line two.'));
    expect(literal.description).toBe('Line one.\nLine two.');
    const single = parse(skill("name: a\ndescription: 'It''s: quoted'"));
    expect(single.description).toBe("It's: quoted");
    const double = parse(skill('name: a\ndescription: "Use when: \\"x\\""'));
    expect(double.description).toBe('Use when: "x"');
  });

  it('refuses a description over 1024 characters, saying how long it is', () => {
    const error = refusal(() => parse(skill(`name: a\ndescription: ${'x'.repeat(1187)}`)));
    expect(error.errors).toEqual([
      {
        path: 'SKILL.md#description',
        detail: expect.stringContaining('description is 1187 characters; the limit is 1024: shorten it'),
      },
    ]);
  });

  it('counts characters, not UTF-16 units', () => {
    const parsed = parse(skill(`name: a\ndescription: ${'😀'.repeat(1024)}`));
    expect([...parsed.description]).toHaveLength(1024);
  });

  it('uses the first paragraph of the body when description is missing', () => {
    const body =
      '# Heading\n\n```\ncode\n```\n\nThis **skill** does [things](http://x)\nacross lines.\n\nSecond.';
    const parsed = parse(skill('name: a', body));
    expect(parsed.description).toBe('This skill does things across lines.');
    expect(parsed.frontmatter.description).toBe(parsed.description);
    expect(details(parsed.warnings)).toContain("no 'description'");
  });

  it('prefers the text under a heading named Description to the first paragraph', () => {
    const body = [
      '# PDF tools',
      '',
      'An introduction that is not the description.',
      '',
      '## Description',
      '',
      'Fills, merges and splits **PDF** forms.',
      'Use when a user hands over a PDF.',
      '',
      '- Works offline',
      '',
      '## Usage',
      '',
      'Run the script.',
    ].join('\n');
    const parsed = parse(skill('name: a', body));
    expect(parsed.description).toBe(
      'Fills, merges and splits PDF forms. Use when a user hands over a PDF. Works offline',
    );
    expect(parsed.frontmatter.description).toBe(parsed.description);
    expect(details(parsed.warnings)).toContain("no 'description'");
    expect(details(parsed.warnings)).toContain('Description section');
    // Without such a heading, the first paragraph, as before.
    const plain = parse(skill('name: a', body.replace('## Description', '## Summary')));
    expect(plain.description).toBe('An introduction that is not the description.');
    expect(details(plain.warnings)).toContain('first paragraph');
  });

  it('finds the Description heading at any level and in any letter case, and skips code', () => {
    const cases: [string, string | undefined][] = [
      ['# Title\n\nIntro.\n\n### DESCRIPTION\nDeep text.\n', 'Deep text.'],
      ['# description:\n\nWith a colon.\n# Next\n\nNot this.', 'With a colon.'],
      ['Intro.\n\nDescription\n-----------\n\nSetext text.\n\nUsage\n=====\nNo.', 'Setext text.'],
      ['Intro.\r\n\r\n## Description\r\n\r\nCRLF text.\r\n', 'CRLF text.'],
      ['```\n## Description\nIn code.\n```\n\n## Description ##\n\nAfter code.', 'After code.'],
      // A heading with no prose under it: the first paragraph instead.
      ['Intro line.\n\n## Description\n\n## Usage\n\nRun.', undefined],
      ['# Title\n\n## Descriptions of things\n\nNot a Description heading.', undefined],
    ];
    for (const [body, expected] of cases) {
      expect(descriptionSection(body), body).toBe(expected);
    }
    expect(parse(skill('name: a', cases[5]![0])).description).toBe('Intro line.');
  });

  it('cuts a long Description section at a word boundary, within the limit', () => {
    const parsed = parse(
      skill('name: a', `# T\n\n## Description\n\n${'word '.repeat(100)}\n\n${'more '.repeat(300)}\n`),
    );
    expect([...parsed.description].length).toBeLessThanOrEqual(1024);
    expect(parsed.description).toMatch(/^word word .* more more.*…$/);
  });

  it('cuts a long first paragraph at a word boundary', () => {
    const parsed = parse(skill('name: a', `${'word '.repeat(400)}\n`));
    expect([...parsed.description].length).toBeLessThanOrEqual(1024);
    expect(parsed.description).toMatch(/word…$/);
  });

  it('refuses a missing description when the body has no prose', () => {
    const error = refusal(() => parse(skill('name: a', '# Only a heading\n')));
    expect(error.errors[0]!.detail).toContain("no 'description'");
  });

  it('coerces a numeric description with a warning', () => {
    const parsed = parse(skill('name: a\ndescription: 42'));
    expect(parsed.description).toBe('42');
    expect(details(parsed.warnings)).toContain('written as a number');
  });

  it('finds the first paragraph in Markdown', () => {
    expect(firstParagraph('# T\n\n> - Quoted `code` item\n')).toBe('Quoted code item');
    expect(firstParagraph('<!-- c -->\n---\n| a | b |\n\nText')).toBe('Text');
    expect(firstParagraph('```\nonly code\n```')).toBeUndefined();
  });
});

describe('every error at once', () => {
  it('lists a bad name and an over-long description together', () => {
    const error = refusal(() => parse(skill(`name: Bad Name\ndescription: ${'y'.repeat(2000)}`)));
    expect(error.status).toBe(422);
    expect(error.errors.map((issue) => issue.path)).toEqual(['SKILL.md#name', 'SKILL.md#description']);
    expect(error.message).toContain('2 problems');
  });
});

describe('other keys', () => {
  it('warns about a long compatibility but accepts it', () => {
    const parsed = parse(skill(`name: a\ndescription: d\ncompatibility: ${'c'.repeat(501)}`));
    expect(details(parsed.warnings)).toContain('compatibility is 501 characters');
  });

  it('coerces non-string metadata values to the text written', () => {
    const parsed = parse(
      skill(
        'name: a\ndescription: d\nmetadata:\n  version: 1.0\n  count: 28\n  beta: true\n  updated: 2026-03-05\n  people:\n    - name: X',
      ),
    );
    expect(parsed.frontmatter.metadata).toEqual({
      version: '1.0',
      count: '28',
      beta: 'true',
      updated: '2026-03-05',
      people: '[{"name":"X"}]',
    });
    expect(parsed.metadataVersion).toBe('1.0');
    expect(details(parsed.warnings)).toContain("'count' -> '28'");
  });

  it('keeps metadata that is not a map, with a warning', () => {
    const parsed = parse(skill('name: a\ndescription: d\nmetadata: just text'));
    expect(parsed.frontmatter.metadata).toBe('just text');
    expect(parsed.metadataVersion).toBeUndefined();
    expect(details(parsed.warnings)).toContain('metadata should be a mapping');
  });

  it('keeps license, allowed-tools and unknown keys verbatim, warning once about the unknown ones', () => {
    const parsed = parse(
      skill(
        [
          'name: a',
          'description: d',
          'license: MIT',
          'allowed-tools: [Read, Bash]',
          'context: fork',
          'disable-model-invocation: true',
          'argument-hint: "[file]"',
          'hooks:',
          '  PreToolUse: [{ matcher: Bash }]',
          'version: 1.2.0',
        ].join('\n'),
      ),
    );
    expect(parsed.frontmatter).toEqual({
      name: 'a',
      description: 'd',
      license: 'MIT',
      'allowed-tools': ['Read', 'Bash'],
      context: 'fork',
      'disable-model-invocation': true,
      'argument-hint': '[file]',
      hooks: { PreToolUse: [{ matcher: 'Bash' }] },
      version: '1.2.0',
    });
    const unknown = parsed.warnings.filter((w) => w.detail.includes('not part of the Agent Skills spec'));
    expect(unknown).toHaveLength(1);
    expect(unknown[0]!.detail).toContain(
      "'context', 'disable-model-invocation', 'argument-hint', 'hooks', 'version'",
    );
  });

  it('keeps timestamps and yes/no as strings (YAML 1.2 core schema)', () => {
    const parsed = parse(skill('name: a\ndescription: d\ndate_added: 2024-01-02\nrisk: no'));
    expect(parsed.frontmatter.date_added).toBe('2024-01-02');
    expect(parsed.frontmatter.risk).toBe('no');
  });

  it('does not let a __proto__ key touch prototypes', () => {
    const parsed = parse(skill('name: a\ndescription: d\n__proto__:\n  polluted: true'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(parsed.frontmatter)).toBe(Object.prototype);
    expect(Object.hasOwn(parsed.frontmatter, '__proto__')).toBe(true);
  });
});

describe('body and encoding', () => {
  it('handles a BOM and CRLF line endings', () => {
    const text =
      '\uFEFF---\r\nname: crlf\r\ndescription: >\r\n  Folded\r\n  text\r\n---\r\n# T\r\n\r\nBody.\r\n';
    const parsed = parse(text);
    expect(parsed.name).toBe('crlf');
    expect(parsed.description).toBe('Folded text');
    expect(parsed.body).toBe('# T\n\nBody.\n');
  });

  it('returns the body after the frontmatter untouched otherwise', () => {
    const parsed = parse('---\nname: a\ndescription: d\n---   \n\n## Steps\n---\nmore\n');
    expect(parsed.body).toBe('\n## Steps\n---\nmore\n');
  });

  it('warns about an empty body', () => {
    const parsed = parse('---\nname: a\ndescription: d\n---\n');
    expect(parsed.body).toBe('');
    expect(details(parsed.warnings)).toContain('no Markdown body');
  });

  it('treats a file without frontmatter as body only', () => {
    const parsed = parse('# Tool\n\nDoes things.\n', { folderName: 'tool' });
    expect(parsed.name).toBe('tool');
    expect(parsed.description).toBe('Does things.');
    expect(parsed.body).toBe('# Tool\n\nDoes things.\n');
  });

  it('treats empty frontmatter as no keys', () => {
    const split = splitFrontmatter('---\n---\nBody text.\n');
    expect(split).toMatchObject({ hasFrontmatter: true, data: {}, body: 'Body text.\n' });
    const parsed = parse('---\n# only a comment\n---\nBody text.\n', { folderName: 'x' });
    expect(parsed.description).toBe('Body text.');
  });

  it('refuses invalid UTF-8 with its position', () => {
    const bytes = new Uint8Array([...utf8('---\nname: a\n'), 0xff, 0xfe, ...utf8('\n---\n')]);
    const error = refusal(() => parseSkillMd(bytes, {}));
    expect(error.status).toBe(422);
    expect(error.errors[0]!.detail).toMatch(
      /^SKILL\.md is not valid UTF-8 .*offset 12, line 3.*re-save it as UTF-8/,
    );
    expect(decodeUtf8(utf8('\uFEFFok'))).toBe('ok');
  });
});

describe('frontmatter safety', () => {
  it.each(['js', 'javascript', 'coffee', 'json', 'toml'])(
    'refuses ---%s frontmatter without evaluating it',
    (lang) => {
      const marker = `__skillreg_evaluated_${lang}`;
      const text = `---${lang}\n{ name: (globalThis.${marker} = true, 'x'), description: 'd' }\n---\nBody\n`;
      const error = refusal(() => parse(text));
      expect(error.status).toBe(422);
      expect(error.errors[0]!.detail).toContain(`frontmatter language '${lang}' is not allowed`);
      expect(error.errors[0]!.detail).toContain('write YAML frontmatter between --- lines');
      expect((globalThis as Record<string, unknown>)[marker]).toBeUndefined();
    },
  );

  it('refuses a js block that would throw if evaluated, with the same 422', () => {
    const error = refusal(() => parse("---js\n(() => { throw new Error('ran') })()\n---\n"));
    expect(error.errors[0]!.detail).toContain("frontmatter language 'js'");
  });

  it('always passes options to gray-matter, so nothing lands in its global cache', () => {
    parse(skill('name: cached\ndescription: d'));
    const { cache } = matter as unknown as { cache: Record<string, unknown> };
    expect(Object.keys(cache)).toHaveLength(0);
  });

  it('accepts an explicit ---yaml opener', () => {
    expect(parse('---yaml\nname: a\ndescription: d\n---\nB').name).toBe('a');
  });

  it('refuses a billion-laughs alias bomb by counting its aliases', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    // Refused by counting the aliases, before anything expands them (unrefused, it would not finish).
    const error = refusal(() => parse(skill(`name: bomb\ndescription: d\n${levels.join('\n')}`)));
    expect(error.status).toBe(422);
    expect(error.errors[0]!.detail).toContain('aliases');
  });

  it('refuses frontmatter that is a list or a scalar', () => {
    expect(refusal(() => parse(skill('- a\n- b'))).errors[0]!.detail).toContain('it is a list');
    expect(refusal(() => parse(skill('just words'))).errors[0]!.detail).toContain('single string value');
  });

  it('refuses unparseable YAML naming line and column', () => {
    const error = refusal(() => parse(skill('name: a\ndescription: "unterminated\nlicense: MIT')));
    expect(error.status).toBe(422);
    expect(error.errors[0]!.detail).toMatch(/not valid YAML at line \d+, column \d+: Missing closing "quote/);
  });

  it('refuses tab indentation', () => {
    const error = refusal(() => parse(skill('name: a\nmetadata:\n\tauthor: x\ndescription: d')));
    expect(error.errors[0]!.detail).toContain('line 4');
  });

  it('refuses an unclosed frontmatter block', () => {
    const error = refusal(() => parse('---\nname: a\ndescription: d\n'));
    expect(error.errors[0]!.detail).toContain('never closes it');
  });

  it('reads an unquoted value containing ": " as text, with a warning', () => {
    const parsed = parse(skill('name: a\ndescription: Use when: you need X # comment\nlicense: MIT'));
    expect(parsed.description).toBe('Use when: you need X');
    expect(parsed.frontmatter.license).toBe('MIT');
    expect(parsed.warnings).toContainEqual({
      path: 'SKILL.md#description',
      detail: expect.stringContaining("SKILL.md line 3: the value of 'description' contains ': '"),
    });
  });

  it('repairs multi-line plain values and reserved first characters', () => {
    const parsed = parse(
      skill('name: a\ndescription: Use when: you need X\n  and more: here\nmetadata:\n  note: `tick` mark'),
    );
    expect(parsed.description).toBe('Use when: you need X and more: here');
    expect(parsed.frontmatter.metadata).toEqual({ note: '`tick` mark' });
  });

  it('reads duplicate keys last-wins with a warning, but refuses two different names', () => {
    const parsed = parse(skill('name: a\ndescription: one\ndescription: two'));
    expect(parsed.description).toBe('two');
    expect(details(parsed.warnings)).toContain("repeats the key 'description' (first at line 3)");
    const nested = parse(skill('name: a\ndescription: d\nmetadata:\n  k: 1\n  k: 2'));
    expect(nested.frontmatter.metadata).toEqual({ k: '2' });
    expect(details(nested.warnings)).toContain("repeats the key 'k'");
    expect(parse(skill('name: a\nname: a\ndescription: d')).name).toBe('a');
    const error = refusal(() => parse(skill('name: a\nname: b\ndescription: d')));
    expect(error.errors[0]!.detail).toContain("'a', 'b'");
  });
});

describe('bounded work', () => {
  const manyKeys = (chars: number) => {
    const lines: string[] = [];
    for (let size = 0; size < chars; size += lines.at(-1)!.length + 1) lines.push(`k${lines.length}: v`);
    return lines.join('\n');
  };

  it('parses a 1 MiB frontmatter of thousands of keys in bounded time, listing only some of them', () => {
    const started = performance.now();
    const parsed = parse(skill(`name: a\ndescription: d\n${manyKeys(1_000_000)}`));
    // A guard against quadratic parsing (minutes), loose enough for a loaded CI machine; the figure
    // itself is not a target.
    expect(performance.now() - started).toBeLessThan(30_000);
    const unknown = parsed.warnings.find((w) => w.detail.includes('not part of the Agent Skills spec'));
    expect(unknown!.detail).toMatch(/and \d+ more/);
  }, 60_000);

  it('does not try to repair a large frontmatter', () => {
    const text = skill(`name: a\ndescription: Use when: x\n${manyKeys(100_000)}`);
    expect(refusal(() => parse(text)).errors[0]!.detail).toContain('line 3');
  });
});

describe('validateBundle', () => {
  const bundle = (
    files: Record<string, string>,
    extra: Partial<NormalizedBundle> = {},
  ): NormalizedBundle => ({
    files: Object.entries(files).map(([path, text]) => ({ path, bytes: utf8(text), mode: 0o644 })),
    warnings: [],
    ...extra,
  });

  it('validates the root SKILL.md and merges bundle warnings first', () => {
    const note = { path: '__MACOSX/', detail: 'dropped macOS metadata' };
    const parsed = validateBundle(
      bundle({ 'SKILL.md': skill('name: a\ndescription: d'), 'scripts/x.py': '' }, { warnings: [note] }),
      { limits: DEFAULT_LIMITS },
    );
    expect(parsed.warnings[0]).toEqual(note);
  });

  it('keeps bundle warnings on a refusal', () => {
    const note = { path: 'x', detail: 'y' };
    const error = refusal(() =>
      validateBundle(bundle({ 'SKILL.md': skill('name: A B\ndescription: d') }, { warnings: [note] }), {
        limits: DEFAULT_LIMITS,
      }),
    );
    expect(error.warnings).toContainEqual(note);
  });

  it('refuses a bundle without SKILL.md, pointing at near misses', () => {
    const none = refusal(() => validateBundle(bundle({ 'README.md': 'x' }), { limits: DEFAULT_LIMITS }));
    expect(none.status).toBe(422);
    expect(none.errors[0]!.detail).toMatch(/^no SKILL\.md at the root/);
    const lower = refusal(() => validateBundle(bundle({ 'skill.md': 'x' }), { limits: DEFAULT_LIMITS }));
    expect(lower.errors[0]!.detail).toContain("found 'skill.md': rename it to SKILL.md");
    const nested = refusal(() => validateBundle(bundle({ 'a/SKILL.md': 'x' }), { limits: DEFAULT_LIMITS }));
    expect(nested.errors[0]!.detail).toContain("found 'a/SKILL.md'");
  });

  it('refuses an oversized SKILL.md with 413 naming the limit', () => {
    const limits = { ...DEFAULT_LIMITS, maxSkillMdBytes: 100 };
    const error = refusal(() =>
      validateBundle(bundle({ 'SKILL.md': skill('name: a\ndescription: d', 'x'.repeat(200)) }), { limits }),
    );
    expect(error.status).toBe(413);
    expect(error.errors[0]!.detail).toContain('the limit is 100 bytes');
  });

  it('passes the folder name and ?name= through', () => {
    const files = { 'SKILL.md': skill('description: d') };
    expect(validateBundle(bundle(files, { folderName: 'folder' }), { limits: DEFAULT_LIMITS }).name).toBe(
      'folder',
    );
    expect(
      validateBundle(bundle(files, { folderName: 'folder' }), { limits: DEFAULT_LIMITS, nameOverride: 'q' })
        .name,
    ).toBe('q');
  });
});
