import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CataloguePage, SearchResponse, SkillDetail, View } from '../../src/client/index.js';
import { uniqueName } from '../helpers/bundles.js';
import { cliInProcess } from '../helpers/cli-output.js';
import { ADMIN_TOKEN } from '../helpers/context.js';
import { startFlakyProxy } from '../helpers/flaky-proxy.js';
import { type LiveApp, liveApp } from '../helpers/live-app.js';

/**
 * The commands that browse and manage a registry (list, search, info, tag, yank, view) against the
 * live service, in process (cli-binary.test.ts runs the real binary).
 */

let ctx: LiveApp;
/** Two namespaces: `team` holds three skills, `override` a newer copy of one of them. */
const team = uniqueName('team');
const override = uniqueName('override');
const [alpha, beta, gamma] = ['alpha', 'beta', 'gamma'].map((word) => `${word}-${team}`) as [
  string,
  string,
  string,
];

const global = () => ['--url', ctx.url, '--token', ADMIN_TOKEN];
async function cli(args: string[]) {
  return cliInProcess([...args, ...global()]);
}

async function skillFolder(root: string, name: string, description: string, body = ''): Promise<string> {
  const folder = path.join(root, name);
  await mkdir(folder, { recursive: true });
  await writeFile(
    path.join(folder, 'SKILL.md'),
    `---\nname: ${name}\ndescription: "${description}"\n---\n# ${name}\n\n${body || description}\n`,
  );
  return folder;
}

beforeAll(async () => {
  ctx = await liveApp('skillreg-cli-commands-');
  const teamTree = path.join(ctx.work, 'team');
  await skillFolder(teamTree, alpha, 'Turns spreadsheets into slide decks.', '## Slides\n\nUse charts.');
  await skillFolder(teamTree, beta, 'Reviews pull requests for security problems.');
  await skillFolder(teamTree, gamma, 'Extracts tables from PDF files.');
  const first = await cli(['sync', teamTree, '--namespace', team]);
  expect(first.code, first.stderr).toBe(0);
  // A second version of alpha, and beta again in the other namespace (a view's higher layer).
  await skillFolder(teamTree, alpha, 'Turns spreadsheets into slide decks, with speaker notes.');
  const second = await cli(['publish', path.join(teamTree, alpha), '--namespace', team]);
  expect(second.code, second.stderr).toBe(0);
  const overrideFolder = await skillFolder(
    path.join(ctx.work, 'override'),
    beta,
    'Reviews pull requests (team rules).',
  );
  const third = await cli(['publish', overrideFolder, '--namespace', override, '--version', '5.0.0']);
  expect(third.code, third.stderr).toBe(0);
}, 120_000);

afterAll(() => ctx?.close());

describe('list, search and info', () => {
  it('list prints the catalogue as a table, --json as the registry answers it, and pages with --all', async () => {
    const table = await cli(['list', '--namespace', team]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+VERSION\s+TAGS\s+SCAN\s+DESCRIPTION$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 4))).toEqual([
      [alpha, '1.0.1', 'latest', 'pass'],
      [beta, '1.0.0', 'latest', 'pass'],
      [gamma, '1.0.0', 'latest', 'pass'],
    ]);
    expect(table.stderr).toBe('');

    const limited = await cli(['list', '--namespace', team, '--limit', '2', '--json']);
    expect(limited.code, limited.stderr).toBe(0);
    const page = JSON.parse(limited.stdout) as CataloguePage;
    expect(page.items.map((item) => item.name)).toEqual([alpha, beta]);
    expect(page.nextCursor).toEqual(expect.any(String));
    const direct = (await ctx.app.inject(`/namespaces/${team}/skills?limit=2`)).json() as CataloguePage;
    expect(page).toEqual(direct);
    const cut = await cli(['list', '--namespace', team, '--limit', '2']);
    expect(cut.stdout.trim().split('\n')).toHaveLength(3);
    expect(cut.stderr).toContain('2 skills listed; there are more: pass --all');

    // --all follows nextCursor page after page (pages of one here, seen through a recording proxy).
    const proxy = await startFlakyProxy(ctx.url);
    try {
      const all = await cliInProcess([
        'list',
        '--all',
        '--limit',
        '1',
        '--json',
        '--namespace',
        team,
        '--url',
        proxy.url,
      ]);
      expect(all.code, all.stderr).toBe(0);
      const every = JSON.parse(all.stdout) as CataloguePage;
      expect(every.items.map((item) => item.name)).toEqual([alpha, beta, gamma]);
      expect(every.nextCursor).toBeNull();
      const reads = proxy.seen.map((request) => request.path);
      expect(reads).toHaveLength(3);
      expect(reads.slice(1).every((read) => read.includes('cursor='))).toBe(true);
    } finally {
      await proxy.close();
    }

    const tagged = await cli(['list', '--namespace', team, '--tag', 'no-such-tag']);
    expect(tagged.code).toBe(0);
    expect(tagged.stdout).toBe('');
    expect(tagged.stderr).toContain("no skills with dist-tag 'no-such-tag'");
  });

  it('search ranks skills for a task in plain words and says why each matched', async () => {
    const run = await cli([
      'search',
      'extract',
      'tables',
      'from',
      'pdf',
      '--namespace',
      team,
      '--limit',
      '2',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`^1\\. ${gamma}@1\\.0\\.0  Extracts tables from PDF files\\.$`, 'm'),
    );
    expect(run.stdout).toMatch(/^ {3}why: .*tables/m);
    const json = await cli(['search', 'extract tables from pdf', '--namespace', team, '--json']);
    const answer = JSON.parse(json.stdout) as SearchResponse;
    expect(answer.query).toBe('extract tables from pdf');
    expect(answer.results[0]).toMatchObject({ name: gamma, version: '1.0.0', why: expect.any(String) });
    expect(answer).toEqual(
      (await ctx.app.inject(`/namespaces/${team}/search?q=extract%20tables%20from%20pdf`)).json(),
    );
    const none = await cli(['search', 'zzqxv', '--namespace', team]);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain("no skill matches 'zzqxv'");
  });

  it('info shows versions, dist-tags, files and the scan verdict; --version and --tag choose one', async () => {
    const run = await cli(['info', alpha, '--namespace', team]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^${alpha}@1\\.0\\.1  \\(namespace ${team}\\)$`, 'm'));
    expect(run.stdout).toContain('  Turns spreadsheets into slide decks, with speaker notes.');
    expect(run.stdout).toMatch(/^dist-tags +latest -> 1\.0\.1$/m);
    expect(run.stdout).toMatch(/^scan +pass \(rules \S+, 0 findings\)$/m);
    expect(run.stdout).toMatch(/^VERSION\s+PUBLISHED\s+TAGS\s+YANKED\s+DIGEST$/m);
    expect(run.stdout).toMatch(/^1\.0\.1\s+\S+\s+latest\s+sha256:/m);
    expect(run.stdout).toMatch(/^1\.0\.0\s+\S+\s+-\s+sha256:/m);
    expect(run.stdout).toMatch(/^SKILL\.md\s+\d+\s+sha256:[0-9a-f]{64}$/m);

    const json = await cli(['info', alpha, '--namespace', team, '--version', '1.0.0', '--json']);
    const detail = JSON.parse(json.stdout) as SkillDetail;
    expect(detail).toEqual(
      (await ctx.app.inject(`/namespaces/${team}/skills/${alpha}?version=1.0.0`)).json(),
    );
    expect(detail.description).toBe('Turns spreadsheets into slide decks.');

    const both = await cli(['info', alpha, '--version', '1.0.0', '--tag', 'latest']);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/--version.*cannot be used with.*--tag/);
    const missing = await cli(['info', 'no-such-skill-here', '--namespace', team]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^404 .*no-such-skill-here/m);
  });
});

describe('tag and yank', () => {
  it('tag points a dist-tag at a version, yank withdraws one; both in the namespace named', async () => {
    // A namespace and skill of this test's own, with versions 1.0.0 and 1.0.1.
    const namespace = uniqueName('tags');
    const name = uniqueName('tagged');
    const root = path.join(ctx.work, 'tags');
    for (const description of ['First.', 'Second.']) {
      const published = await cli([
        'publish',
        await skillFolder(root, name, description),
        '--namespace',
        namespace,
      ]);
      expect(published.code, published.stderr).toBe(0);
    }
    const tagged = await cli(['tag', name, 'stable', '1.0.0', '--namespace', namespace]);
    expect(tagged.code, tagged.stderr).toBe(0);
    expect(tagged.stdout.trim()).toBe(`${name}: stable -> 1.0.0 (new tag)`);
    const moved = await cli(['tag', name, 'stable', '1.0.1', '--namespace', namespace, '--json']);
    expect(JSON.parse(moved.stdout)).toEqual({
      name,
      tag: 'stable',
      version: '1.0.1',
      previous: '1.0.0',
    });
    const detail = (await ctx.app.inject(`/namespaces/${namespace}/skills/${name}`)).json() as SkillDetail;
    expect(detail.distTags).toEqual({ latest: '1.0.1', stable: '1.0.1' });
    const info = await cli(['info', name, '--tag', 'stable', '--namespace', namespace]);
    expect(info.stdout).toMatch(/^dist-tags +latest -> 1\.0\.1, stable -> 1\.0\.1$/m);

    const yanked = await cli(['yank', name, '1.0.1', '--namespace', namespace]);
    expect(yanked.code, yanked.stderr).toBe(0);
    expect(yanked.stdout.trim()).toBe(`yanked ${name}@1.0.1; latest is 1.0.0`);
    const again = await cli(['yank', name, '1.0.1', '--namespace', namespace, '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ alreadyYanked: true, latest: '1.0.0' });
    const listed = (await ctx.app.inject(`/namespaces/${namespace}/skills`)).json() as CataloguePage;
    expect(listed.items.find((item) => item.name === name)?.version).toBe('1.0.0');
    // Not in the default namespace: the same name there is unknown.
    const unknown = await cli(['yank', name, '1.0.0']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^404 /m);
    // Views are read-only: the write commands take --namespace only.
    const viaView = await cli(['tag', name, 'stable', '1.0.0', '--view', 'x']);
    expect(viaView.code).toBe(1);
    expect(viaView.stderr).toContain("unknown option '--view'");
  });
});

describe('view', () => {
  it('put, get, list and delete a view; list, search and info read through it with --view', async () => {
    const name = uniqueName('view');
    const put = await cli(['view', 'put', name, team, override, '--description', 'Team skills, overridden']);
    expect(put.code, put.stderr).toBe(0);
    expect(put.stdout.trim()).toBe(`created view ${name}: ${team} < ${override}`);
    const replaced = await cli([
      'view',
      'put',
      name,
      team,
      override,
      '--description',
      'Team skills',
      '--json',
    ]);
    expect(JSON.parse(replaced.stdout)).toMatchObject({
      name,
      layers: [team, override],
      description: 'Team skills',
    });

    const got = await cli(['view', 'get', name]);
    expect(got.stdout).toMatch(new RegExp(`^view ${name}: ${team} < ${override}\\n {2}Team skills\\n`));
    const gotJson = JSON.parse((await cli(['view', 'get', name, '--json'])).stdout) as View;
    expect(gotJson).toEqual((await ctx.app.inject(`/views/${name}`)).json());
    const listed = await cli(['view', 'list']);
    expect(listed.stdout).toMatch(/^VIEW\s+LAYERS \(LOWEST FIRST\)\s+DESCRIPTION$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${name}\\s+${team} < ${override}\\s+Team skills$`, 'm'));
    const listedJson = JSON.parse((await cli(['view', 'list', '--json'])).stdout) as { items: View[] };
    expect(listedJson.items.map((view) => view.name)).toContain(name);

    const catalogue = await cli(['list', '--view', name]);
    expect(catalogue.code, catalogue.stderr).toBe(0);
    expect(catalogue.stdout).toMatch(/^NAME\s+VERSION\s+TAGS\s+NAMESPACE\s+SCAN\s+DESCRIPTION$/m);
    expect(catalogue.stdout).toMatch(
      new RegExp(`^${beta}\\s+5\\.0\\.0\\s+latest\\s+${override}\\s+pass\\s+`, 'm'),
    );
    expect(catalogue.stdout).toMatch(new RegExp(`^${gamma}\\s+1\\.0\\.0\\s+latest\\s+${team}\\s+`, 'm'));
    const info = await cli(['info', beta, '--view', name]);
    expect(info.stdout).toMatch(
      new RegExp(
        `^${beta}@5\\.0\\.0  \\(namespace ${override}; resolved from ${override}; hides ${team}@1\\.0\\.0\\)$`,
        'm',
      ),
    );
    const search = JSON.parse(
      (await cli(['search', 'review pull requests', '--view', name, '--json'])).stdout,
    ) as SearchResponse;
    expect(search.results[0]).toMatchObject({ name: beta, version: '5.0.0', namespace: override });
    const conflict = await cli(['list', '--view', name, '--namespace', team]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/cannot be used with/);

    const deleted = await cli(['view', 'delete', name]);
    expect(deleted.stdout.trim()).toBe(`deleted view ${name}`);
    const gone = await cli(['view', 'get', name]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^404 /m);
    const badLayer = await cli(['view', 'put', name, 'no-such-namespace-here']);
    expect(badLayer.code).toBe(1);
    expect(badLayer.stderr).toMatch(/^422 .*no-such-namespace-here/m);
  });
});
