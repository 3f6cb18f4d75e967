import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, putView, type TestApp } from '../helpers/context.js';

// CONTRACT.md "Trusted publishing and shadowing": a publish whose description is a near-duplicate of
// another servable skill's, in its namespace or in a namespace a view layers with it, gets a low
// `shadowing/near-duplicate` finding naming that skill; it never blocks. Every test has namespaces of
// its own, so no other test's skills are ever compared.

interface Finding {
  rule: string;
  severity: string;
  path: string;
  line: number;
  detail: string;
}

const RULE = 'shadowing/near-duplicate';

async function publishInto(
  app: FastifyInstance,
  namespace: string,
  name: string,
  description: string,
  body = `# ${name}\n\nFollow the steps.\n`,
): Promise<LightMyRequestResponse> {
  const res = await publish(app, files({ 'SKILL.md': skillMd({ name, description, body }) }), {
    query: `namespace=${namespace}`,
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res;
}

const shadowingOf = (res: LightMyRequestResponse): Finding[] =>
  (res.json().scan.findings as Finding[]).filter((finding) => finding.rule === RULE);

describe('shadowing at publish', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx?.close());

  it('flags a reworded description in the same namespace, naming the other skill; the skill is still served', async () => {
    const ns = uniqueName('shadow');
    const first = uniqueName('pdf-tools');
    const second = uniqueName('pdf-helper');
    const original = await publishInto(
      ctx.app,
      ns,
      first,
      'Extract text and tables from PDF files, fill in PDF forms, and merge or split PDF documents.',
    );
    expect(shadowingOf(original)).toEqual([]);

    const reworded = await publishInto(
      ctx.app,
      ns,
      second,
      'Use this skill when working with PDFs: pulling text and tables out of them, filling forms, and merging or splitting documents.',
    );
    expect(reworded.statusCode).toBe(201);
    expect(reworded.json().scan.verdict).not.toBe('block');
    const [finding, ...more] = shadowingOf(reworded);
    expect(more).toEqual([]);
    expect(finding).toMatchObject({ rule: RULE, severity: 'low', path: 'SKILL.md', line: 0 });
    expect(finding!.detail).toContain(`'${first}' in namespace '${ns}'`);
    expect(finding!.detail).toMatch(/similarity 0\.\d\d/);

    // Stored with the version: GET /skills/{name} shows it, and the skill is served like any other.
    const detail = await ctx.app.inject({ url: `/namespaces/${ns}/skills/${second}` });
    expect(detail.statusCode).toBe(200);
    expect(detail.json().scan.findings).toContainEqual(finding);
    const content = await ctx.app.inject({ url: `/namespaces/${ns}/skills/${second}/content` });
    expect(content.statusCode).toBe(200);
    const listed = (await ctx.app.inject({ url: `/namespaces/${ns}/skills` })).json();
    expect(listed.items.map((item: { name: string }) => item.name).sort()).toEqual([first, second].sort());

    // Publishing the same content again changes nothing: 200, the version it was.
    const again = await publishInto(
      ctx.app,
      ns,
      second,
      'Use this skill when working with PDFs: pulling text and tables out of them, filling forms, and merging or splitting documents.',
    );
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ name: second, version: '1.0.0', created: false });
  });

  it('leaves alone a skill that merely shares the topic, and a new version of the same skill', async () => {
    const ns = uniqueName('shadow');
    const extract = uniqueName('pdf-extract');
    await publishInto(ctx.app, ns, extract, 'Extract text and tables from PDF files.');
    const forms = await publishInto(ctx.app, ns, uniqueName('pdf-forms'), 'Fill in and sign PDF forms.');
    expect(shadowingOf(forms)).toEqual([]);
    // Its own earlier version says the same: a skill never shadows itself.
    const next = await publishInto(
      ctx.app,
      ns,
      extract,
      'Extract the text and the tables of PDF files.',
      '# Extract\n\nA new version.\n',
    );
    expect(next.json()).toMatchObject({ version: '1.0.1', created: true });
    expect(shadowingOf(next)).toEqual([]);
  });

  it('names at most five skills, the closest first', async () => {
    const ns = uniqueName('shadow');
    const description = 'Summarize meeting transcripts into decisions, action items and owners.';
    for (let copy = 0; copy < 6; copy++) await publishInto(ctx.app, ns, uniqueName('minutes'), description);
    const reworded = await publishInto(
      ctx.app,
      ns,
      uniqueName('minutes'),
      'Turn a meeting transcript into a summary of the decisions made, the action items and who owns each one.',
    );
    const findings = shadowingOf(reworded);
    expect(findings).toHaveLength(5);
    const similarities = findings.map((finding) => Number(/similarity (\d\.\d\d)/.exec(finding.detail)![1]));
    expect(similarities).toEqual([...similarities].sort((a, b) => b - a));
  });

  it('compares across namespaces only where a view holds both', async () => {
    const org = uniqueName('shadow-org');
    const team = uniqueName('shadow-team');
    const original = uniqueName('commit-messages');
    await publishInto(ctx.app, org, original, 'Write conventional commit messages from the staged diff.');

    const apart = await publishInto(
      ctx.app,
      team,
      uniqueName('commit-writer'),
      'Generates a commit message in the Conventional Commits format based on the staged changes.',
    );
    expect(shadowingOf(apart)).toEqual([]);

    const view = uniqueName('shadow-view');
    expect((await putView(ctx.app, view, [org, team])).statusCode).toBeLessThan(300);
    const layered = await publishInto(
      ctx.app,
      team,
      uniqueName('commit-author'),
      'Use when committing: draft a Conventional Commits message for the staged changes.',
    );
    const findings = shadowingOf(layered);
    expect(
      findings.some((finding) =>
        finding.detail.includes(`'${original}' in namespace '${org}' (view '${view}')`),
      ),
    ).toBe(true);
    expect(findings.every((finding) => finding.severity === 'low')).toBe(true);
    expect(layered.json().scan.verdict).toBe('pass');

    // Once the view is gone, the namespaces are apart again.
    const deleted = await ctx.app.inject({ method: 'DELETE', url: `/views/${view}`, headers: adminAuth });
    expect(deleted.statusCode).toBeLessThan(300);
    const after = await publishInto(
      ctx.app,
      team,
      uniqueName('commit-drafter'),
      'Draft Conventional Commits messages for whatever is staged.',
    );
    expect(shadowingOf(after).filter((finding) => finding.detail.includes(`namespace '${org}'`))).toEqual([]);
  });
});

describe('shadowing when reads need a token (SKILLREG_READ_AUTH=true)', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
  });
  afterAll(async () => ctx?.close());

  async function tokenFor(namespaces?: string[]): Promise<Record<string, string>> {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/tokens',
      headers: adminAuth,
      payload: { name: uniqueName('publisher'), scopes: ['publish'], ...(namespaces ? { namespaces } : {}) },
    });
    expect(res.statusCode, res.body).toBe(201);
    return { authorization: `Bearer ${res.json().secret}` };
  }

  it('never names a skill in a namespace the publishing token may not read', async () => {
    const hidden = uniqueName('shadow-hidden');
    const team = uniqueName('shadow-team');
    const secret = uniqueName('release-notes');
    await publishInto(
      ctx.app,
      hidden,
      secret,
      'Write release notes from the merged pull requests since the last tag.',
    );
    await publishInto(ctx.app, team, uniqueName('placeholder'), 'Resize images for the web.');
    const view = uniqueName('shadow-view');
    expect((await putView(ctx.app, view, [hidden, team])).statusCode).toBeLessThan(300);

    const description =
      'Use when releasing: draft the release notes from pull requests merged since the previous tag.';
    const publishAs = async (headers: Record<string, string>) => {
      const body = skillMd({
        name: uniqueName('notes'),
        description,
        body: '# Notes\n\nFollow the steps.\n',
      });
      const res = await publish(ctx.app, files({ 'SKILL.md': body }), {
        query: `namespace=${team}`,
        headers,
      });
      expect(res.statusCode, res.body).toBe(201);
      return shadowingOf(res);
    };
    // Limited to the team's namespace: the hidden skill is neither named nor hinted at.
    const limited = await publishAs(await tokenFor([team]));
    expect(JSON.stringify(limited)).not.toContain(secret);
    expect(limited).toEqual([]);
    // A token that may read both is told, as anywhere else.
    const both = await publishAs(await tokenFor([team, hidden]));
    expect(both.some((finding) => finding.detail.includes(`'${secret}' in namespace '${hidden}'`))).toBe(
      true,
    );
  });
});
