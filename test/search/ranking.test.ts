/**
 * Ranking behaviour of the search index on small fixed catalogues: each case would fail if the
 * feature it names (stemming, typos, CJK, long requests, field weights, replacement) broke.
 */
import { describe, expect, it } from 'vitest';
import { analyze, splitBody } from '../../src/search/analyze.js';
import {
  ANALYZER_VERSION,
  decodeTerms,
  encodeTerms,
  isCurrentTerms,
  type SearchableSkill,
  searchDocument,
} from '../../src/search/document.js';
import { SearchIndex } from '../../src/search/search-index.js';

function indexOf(skills: SearchableSkill[]): SearchIndex {
  const index = new SearchIndex();
  for (const skill of skills) index.put(searchDocument(skill));
  return index;
}

/** A body of `lines` numbered steps of `words`: length without meaning. */
function filler(lines: number, words: string): string {
  return Array.from({ length: lines }, (_, at) => `Step ${at}: ${words}.`).join('\n');
}

function ranked(index: SearchIndex, query: string, limit = 10): string[] {
  return index.search(query, { limit }).map((hit) => hit.name);
}

const CATALOGUE: SearchableSkill[] = [
  {
    name: 'gh-fix-ci',
    description: 'Debug and fix failing GitHub Actions checks on a pull request.',
    body: '# Fixing CI\n\nRead the failing job logs with `gh run view`, find the first error, fix it.',
  },
  {
    name: 'resume-tailor',
    description: 'Rewrite a resume or CV so it fits a specific job posting.',
    body: '## Steps\n\nRead the job description, match the candidate experience to it.',
  },
  {
    name: 'slide-builder',
    description: 'Turn spreadsheets and CSV files into a presentation deck.',
    body: '## Charts\n\nOne chart per slide; summarise each table.',
  },
  {
    name: 'single-cell-analysis',
    description: 'Cluster single-cell RNA-seq data and find marker genes.',
    body: '## Workflow\n\nNormalise counts, reduce dimensions, cluster with Leiden.',
  },
  {
    name: 'batch-rename',
    description: '在数百个文件中统一重命名接口，并拆分为可并行的小任务。',
    body: '## 步骤\n\n先列出所有调用点，然后分组并行修改。',
  },
];

describe('analysis', () => {
  it('stems English words so that forms of one word meet, and drops stop words', () => {
    expect(analyze('Testing the tests')).toEqual(analyze('tested test'));
    expect(analyze('why is my run red')).toEqual(['run', 'red']);
  });

  it('cuts Chinese runs into overlapping character pairs', () => {
    expect(analyze('单细胞数据')).toEqual(['单细', '细胞', '胞数', '数据']);
    expect(analyze('重命名 API')).toEqual(['重命', '命名', 'api']);
  });

  it('separates headings from the rest of the body, ignoring # inside fenced code', () => {
    const { headings, text } = splitBody('# Title\ntext\n```sh\n# a shell comment\n```\n## Next');
    expect(headings).toBe('Title\nNext');
    expect(text).toContain('# a shell comment');
  });

  it('stores and reads back the same term counts, and refuses those of another analyzer version', () => {
    const document = searchDocument(CATALOGUE[0]!);
    const stored = encodeTerms(document.terms);
    expect(decodeTerms(stored)).toEqual(document.terms);
    expect(decodeTerms(`0${stored.slice(stored.indexOf('\n'))}`)).toBeUndefined();
  });
});

describe('ranking', () => {
  const index = indexOf(CATALOGUE);

  it('finds a skill from a task described in other words', () => {
    expect(ranked(index, 'why is my github actions run red')[0]).toBe('gh-fix-ci');
    expect(ranked(index, 'turn these CSVs into a slide deck')[0]).toBe('slide-builder');
    expect(ranked(index, 'rewrite my CV to fit this job posting')[0]).toBe('resume-tailor');
  });

  it('reads a whole paragraph of context, well past 200 characters', () => {
    const paragraph =
      'I have been asked by my manager to prepare for an interview next week. The company posted a job ' +
      'for a data engineer and my current resume is written for analyst roles, so I need to rewrite it so ' +
      'that it fits this particular job posting without inventing anything I have not done.';
    expect(paragraph.length).toBeGreaterThan(200);
    expect(ranked(index, paragraph)[0]).toBe('resume-tailor');
  });

  it('tolerates typos by reading unknown words as the closest known spelling', () => {
    const [first] = index.search('clustr my singel-cell data', { limit: 3 });
    expect(first?.name).toBe('single-cell-analysis');
    expect(first?.matched.filter((term) => term.corrected).map((term) => term.query)).toEqual(
      expect.arrayContaining(['clustr']),
    );
  });

  it('searches the words as written, and only them, when literal (the shadowing lookup)', () => {
    // A misspelling is not read as the closest known word, and no related word is searched.
    expect(index.search('clustr singel', { limit: 3, literal: true })).toEqual([]);
    const hits = index.search('cluster single-cell data', { limit: 3, literal: true });
    expect(hits[0]?.name).toBe('single-cell-analysis');
    expect(hits.every((hit) => hit.matched.length === 0)).toBe(true);
  });

  it('matches Chinese requests against Chinese skills without spaces', () => {
    expect(ranked(index, '把这个接口在三百个文件里统一改名，拆成小块并行做')[0]).toBe('batch-rename');
  });

  it('weights the name and description above the body', () => {
    const fields = indexOf([
      { name: 'log-reader', description: 'Read server logs.', body: 'Mentions kubernetes once.' },
      { name: 'kubernetes-deploy', description: 'Deploy services to Kubernetes.', body: 'Steps.' },
    ]);
    expect(ranked(fields, 'kubernetes')).toEqual(['kubernetes-deploy', 'log-reader']);
  });

  it('ranks a skill matching more of the request above one repeating a single word', () => {
    const coverage = indexOf([
      { name: 'pdf-a', description: 'PDF PDF PDF tools for PDF files.', body: 'pdf pdf pdf pdf' },
      { name: 'pdf-forms', description: 'Fill PDF forms and extract form fields.', body: '' },
    ]);
    expect(ranked(coverage, 'fill the form fields of a pdf')[0]).toBe('pdf-forms');
  });

  it('says which words matched in which field', () => {
    const [hit] = index.search('fix failing github checks', { limit: 1 });
    const byWord = Object.fromEntries(hit!.matched.map((term) => [term.query, term.fields]));
    expect(byWord.github).toEqual(expect.arrayContaining(['description']));
    expect(byWord.failing).toEqual(expect.arrayContaining(['description', 'body']));
  });

  it('answers nothing for words no skill holds, and for stop words alone', () => {
    expect(ranked(index, 'xyzzy plugh')).toEqual([]);
    expect(ranked(index, 'the and of')).toEqual([]);
  });

  it('honours accept() and the limit', () => {
    expect(ranked(index, 'data files', 1)).toHaveLength(1);
    const hits = index.search('data files', { limit: 10, accept: (name) => name !== 'slide-builder' });
    expect(hits.map((hit) => hit.name)).not.toContain('slide-builder');
  });
});

describe('related words (the lexicon)', () => {
  const related = indexOf([
    {
      name: 'pr-reviewer',
      description: 'Code review of a change before it merges: correctness, tests, style.',
      body: '',
    },
    { name: 'playwright-runner', description: 'Run Playwright specs and report results.', body: '' },
    {
      name: 'login-hardening',
      description: 'Find attack risks in a login endpoint and harden it.',
      body: '',
    },
    { name: 'resume-tailor', description: 'Rewrite a resume so it fits a job posting.', body: '' },
  ]);

  it('finds a skill described with other words for the same job', () => {
    expect(ranked(related, 'have someone go over my change before I merge it')[0]).toBe('pr-reviewer');
    expect(ranked(related, 'update my CV for this job')[0]).toBe('resume-tailor');
  });

  it('lets a request in Chinese reach a skill described in English, and says through which words', () => {
    const [hit] = related.search('帮我看看这个登录接口有没有被攻击的风险，给出加固建议', { limit: 1 });
    expect(hit?.name).toBe('login-hardening');
    expect(hit?.matched.find((term) => term.related === 'attack')?.query).toBe('攻击');
  });

  it("ranks the request's own words above related ones", () => {
    const own = indexOf([
      { name: 'audit-trail', description: 'Audit a repository for licence problems.', body: '' },
      { name: 'review-board', description: 'Review a repository for licence problems.', body: '' },
    ]);
    expect(ranked(own, 'review the licences in this repository')).toEqual(['review-board', 'audit-trail']);
    const [, second] = own.search('review the licences in this repository', { limit: 2 });
    expect(second?.matched.find((term) => term.related !== undefined)).toMatchObject({
      query: 'review',
      related: 'audit',
    });
  });

  it('leaves a request alone when none of its phrases is in the lexicon', () => {
    expect(ranked(related, 'sourdough starter')).toEqual([]);
  });
});

describe('related words in another language (translations)', () => {
  const catalogue = indexOf([
    {
      name: 'requesting-code-review',
      description: 'Use before merging to check that the work meets its requirements.',
      body: '# Requesting code review\n\nDispatch a reviewer.',
    },
    {
      name: 'release-notes',
      description: 'Write release notes from merged changes.',
      body: `${filler(30, 'group the changes by area')}\nLink each known issue.`,
    },
    {
      name: 'changelog-bot',
      description: 'Keep a changelog file current.',
      body: `${filler(30, 'append an entry for each change')}\nMention the request that asked for it.`,
    },
    {
      name: 'board-game-rules',
      description: '桌游规则设计与评审：平衡性评审、玩家反馈。',
      body: '## 规则\n\n回合、卡牌、计分。',
    },
    {
      name: 'cn-security-audit',
      description: '安全审计与代码审查，覆盖漏洞、加固与威胁建模。',
      body: '## Security\n\nOWASP checks.',
    },
  ]);
  const request = 'review my pull request for security issues';

  it('ranks a skill only a Chinese word for "review" matched after all the request matched otherwise', () => {
    const hits = catalogue.search(request, { limit: 10 });
    expect(hits.at(-1)?.name).toBe('board-game-rules');
    // Still found, and said why: a request in one language can reach a skill in the other.
    expect(hits.at(-1)?.matched.map((term) => term.related)).toEqual(['评审']);
    expect(hits.map((hit) => hit.name)).toContain('changelog-bot');
  });

  it('counts the translations of one phrase once, however many a skill holds', () => {
    const others = [
      { name: 'pr-reviewer', description: 'Review a pull request before it merges.', body: '' },
      { name: 'web-security', description: 'Security checklist for web services.', body: '' },
    ];
    const scoreWith = (description: string) => {
      const index = indexOf([...others, { name: 'cn-review', description, body: '' }]);
      return index.search(request, { limit: 5 }).find((hit) => hit.name === 'cn-review')!.score;
    };
    const one = scoreWith('代码审查清单。Security checklist.');
    const many = scoreWith('代码审查、审查、评审、审稿清单。Security checklist.');
    expect(many).toBeLessThan(one * 1.1);
  });

  it('counts translations in full beside a word of the request the skill also holds', () => {
    const [hit] = catalogue.search('安全 security', { limit: 1 });
    expect(hit?.name).toBe('cn-security-audit');
    const alone = catalogue.search('代码审查', { limit: 5 }).map((found) => found.name);
    // A request in Chinese reaches the English skill through the translation of its one phrase.
    expect(alone).toContain('requesting-code-review');
    expect(alone[0]).toBe('cn-security-audit');
  });

  it("makes the translations' per-slot arrays for the first request that has some, and grows them", () => {
    const index = indexOf([
      { name: 'web-security', description: 'Security checklist for web services.', body: '' },
      { name: 'board-game-rules', description: '桌游规则设计与评审。', body: '' },
    ]);
    expect(ranked(index, 'security checklist')).toEqual(['web-security']);
    const plain = index.stats().slotBytes;
    expect(ranked(index, request)).toEqual(['web-security', 'board-game-rules']);
    expect(index.stats().slotBytes).toBeGreaterThan(plain);
    // Slots past the arrays' first size: a skill only a translation reaches is still found there.
    for (let i = 0; i < 300; i++)
      index.put(searchDocument({ name: `garden-${i}`, description: 'Notes on growing tomatoes.', body: '' }));
    index.put(searchDocument({ name: 'zz-cn-checklist', description: '评审清单。', body: '' }));
    const hits = index.search(request, { limit: 10 });
    expect(hits.map((hit) => hit.name).sort()).toEqual([
      'board-game-rules',
      'web-security',
      'zz-cn-checklist',
    ]);
    expect(hits.find((hit) => hit.name === 'zz-cn-checklist')!.score).toBeGreaterThan(0);
  });
});

describe('where the words are', () => {
  it("ranks a skill named with the request's words above one whose body repeats them", () => {
    const index = indexOf([
      {
        name: 'requesting-code-review',
        description: 'Use before merging, to check the work against its plan.',
        body: 'Dispatch a reviewer with the diff.',
      },
      {
        name: 'team-handbook',
        description: 'How the platform team works day to day.',
        body: `## Code review requests\n\n${filler(20, 'open a code review request when it is done')}`,
      },
    ]);
    expect(ranked(index, 'request a code review')).toEqual(['requesting-code-review', 'team-handbook']);
  });

  it('counts words found only deep in a body as less of the request than words of the description', () => {
    const index = indexOf([
      {
        name: 'billing-extract',
        description: 'Extract the totals of scanned invoices.',
        body: 'Open the file, find the table.',
      },
      { name: 'csv-tools', description: 'Clean CSV files.', body: '' },
      {
        name: 'office-manual',
        description: 'Everything about the office.',
        body:
          `${filler(2, 'coffee, printers and desks')}\nScanned PDF invoices go to finance; ` +
          'their totals are checked monthly by the accountant before the audit.',
      },
    ]);
    expect(ranked(index, 'totals of scanned pdf invoices for the accountant')).toEqual([
      'billing-extract',
      'office-manual',
    ]);
  });
});

describe('updates', () => {
  it('replaces a skill under its name and forgets a removed one', () => {
    const index = indexOf(CATALOGUE);
    index.put(searchDocument({ name: 'gh-fix-ci', description: 'Bake sourdough bread.', body: '' }));
    expect(ranked(index, 'pull request')).not.toContain('gh-fix-ci');
    expect(ranked(index, 'sourdough')).toEqual(['gh-fix-ci']);
    index.remove('resume-tailor');
    expect(ranked(index, 'resume job posting')).not.toContain('resume-tailor');
    expect(index.size).toBe(CATALOGUE.length - 1);
  });

  it('keeps answering the same after many replacements compact the index', () => {
    const index = indexOf(CATALOGUE);
    const before = ranked(index, 'cluster marker genes');
    for (let round = 0; round < 200; round++) {
      index.put(searchDocument({ name: `churn-${round % 7}`, description: `Churn ${round}.`, body: '' }));
    }
    expect(ranked(index, 'cluster marker genes')).toEqual(before);
    expect(index.stats().slots).toBeLessThan(200);
    const scores = index.search('cluster marker genes', { limit: 1 }).map((hit) => hit.score);
    expect(scores[0]).toBeGreaterThan(0);
  });
});

describe('terms one skill holds, and versions', () => {
  it('find a word only one skill has, after a second skill gains it, and after the first goes', () => {
    const index = indexOf(CATALOGUE);
    index.put(
      searchDocument({ name: 'kiln-log', description: 'Record each zygomorphic kiln firing.', body: '' }),
    );
    expect(ranked(index, 'zygomorphic')).toEqual(['kiln-log']);
    index.put(searchDocument({ name: 'glaze-notes', description: 'Zygomorphic glaze patterns.', body: '' }));
    expect(ranked(index, 'zygomorphic').sort()).toEqual(['glaze-notes', 'kiln-log']);
    index.remove('kiln-log');
    expect(ranked(index, 'zygomorphic')).toEqual(['glaze-notes']);
    // Compaction renumbers every slot: the word's one remaining posting must follow its skill.
    for (let round = 0; round < 200; round++) {
      index.put(searchDocument({ name: `churn-${round % 7}`, description: `Churn ${round}.`, body: '' }));
    }
    expect(index.stats().slots).toBeLessThan(200);
    expect(ranked(index, 'zygomorphic')).toEqual(['glaze-notes']);
    expect(index.search('zygomorphic', { limit: 1 })[0]!.matched[0]!.fields).toEqual(['description']);
  });

  it('keep the version each skill was put with, through replacement, removal and compaction', () => {
    const index = new SearchIndex();
    index.put(searchDocument({ name: 'pdf-forms', description: 'Fill PDF forms.', body: '' }), '1.0.0');
    index.put(searchDocument({ name: 'csv-tools', description: 'Clean CSV files.', body: '' }), '2.1.0');
    index.put(
      searchDocument({ name: 'pdf-forms', description: 'Fill and sign PDF forms.', body: '' }),
      '1.1.0',
    );
    expect(index.versionOf('pdf-forms')).toBe('1.1.0');
    expect(index.versionOf('csv-tools')).toBe('2.1.0');
    index.remove('csv-tools');
    expect(index.versionOf('csv-tools')).toBeUndefined();
    for (let round = 0; round < 200; round++) {
      index.put(
        searchDocument({ name: `churn-${round % 7}`, description: `Churn ${round}.`, body: '' }),
        `0.0.${round}`,
      );
    }
    expect(index.stats().slots).toBeLessThan(200);
    expect(index.versionOf('pdf-forms')).toBe('1.1.0');
    // Round 199 is the last with 199 % 7 === 3.
    expect(index.versionOf('churn-3')).toBe('0.0.199');
  });
});

describe('spelling after updates', () => {
  it('corrects to a word that arrived after the first correction was looked up', () => {
    const index = indexOf(CATALOGUE);
    expect(ranked(index, 'zygomorfic')).toEqual([]);
    index.put(
      searchDocument({ name: 'kiln-log', description: 'Record each zygomorphic kiln firing.', body: '' }),
    );
    expect(ranked(index, 'zygomorfic')).toEqual(['kiln-log']);
    expect(index.search('zygomorfic', { limit: 1 })[0]!.matched[0]).toMatchObject({
      term: 'zygomorph',
      corrected: true,
    });
  });
});

describe('stored terms', () => {
  it('builds the same index from the stored form as from the document', () => {
    const fromDocuments = indexOf(CATALOGUE);
    const fromStored = new SearchIndex();
    for (const skill of CATALOGUE) {
      const stored = encodeTerms(searchDocument(skill).terms);
      expect(isCurrentTerms(stored)).toBe(true);
      fromStored.putStored(skill.name, stored);
    }
    for (const query of [
      'fix failing github checks',
      '单细胞 数据',
      'resume job posting',
      'slide deck charts',
    ]) {
      expect(fromStored.search(query, { limit: 5 })).toEqual(fromDocuments.search(query, { limit: 5 }));
    }
    expect(fromStored.stats()).toEqual(fromDocuments.stats());
  });
  it('reads counts of several digits, bad counts as 1 and empty fields from the stored form', () => {
    // name: "deploy"; description: "deploy" twice; headings: none; body: "deploy" 12 times and
    // "canary" with a count that is not a number (read as 1, as decodeTerms reads it).
    const stored = `${ANALYZER_VERSION}\ndeploy\ndeploy:2\n\ndeploy:12 canary:x`;
    const fromStored = new SearchIndex();
    fromStored.putStored('deploy-helper', stored);
    const fromDecoded = new SearchIndex();
    fromDecoded.put({ name: 'deploy-helper', terms: decodeTerms(stored)! });
    expect(fromStored.stats()).toEqual(fromDecoded.stats());
    for (const term of ['deploy', 'canary']) {
      expect(fromStored.postingsOf(term)!.at(0)).toBe(fromDecoded.postingsOf(term)!.at(0));
    }
    expect(fromStored.search('deploy canary', { limit: 1 })).toEqual(
      fromDecoded.search('deploy canary', { limit: 1 }),
    );
  });
});
