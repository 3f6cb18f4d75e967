import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/context.js';
import { listening } from '../helpers/http.js';
import {
  axeViolations,
  ConsoleBrowser,
  chromiumInstalled as enabled,
  shot,
  signIn,
  watchFailures,
} from './browser.js';

// Signing in and what each page says to someone who may not use it, in Chromium, against a registry
// where every read needs a token (SKILLREG_READ_AUTH=true) and one where reads are public.

let closed: TestApp;
let closedBase: string;
let open: TestApp;
let openBase: string;
let chromium: ConsoleBrowser;

const skillName = uniqueName('console-private');
let reader: { name: string; secret: string; id: string };

async function createToken(app: TestApp, body: Record<string, unknown>) {
  const res = await app.app.inject({
    method: 'POST',
    url: '/tokens',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { name: string; secret: string; id: string };
}

beforeAll(async () => {
  if (!enabled) return;
  closed = await createTestApp({ SKILLREG_READ_AUTH: 'true' });
  closedBase = await listening(closed.app);
  open = await createTestApp();
  openBase = await listening(open.app);
  const bundle = files({
    'SKILL.md': skillMd({
      name: skillName,
      description: 'Only for people holding a token.',
      body: '# Private\n\nSee [the notes](references/notes.md#limits).\n',
    }),
    'references/notes.md': '# Notes\n\n## Limits\n\nAt most three a day.\n',
  });
  expect((await publish(closed.app, bundle)).statusCode).toBe(201);
  reader = await createToken(closed, { name: uniqueName('console-reader'), scopes: ['read'] });
  chromium = await ConsoleBrowser.launch();
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await closed?.close();
  await open?.close();
});

describe.skipIf(!enabled)('signing in and pages that need a token (Chromium)', () => {
  it('refuses a bogus token at sign-in, saying why, and keeps nothing', async () => {
    const page = await chromium.open();
    await page.goto(`${openBase}/ui`);
    await page.getByRole('form', { name: 'Sign in' }).getByLabel('Token').fill('skr_bogus-token-0123456789');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'This token was refused (401)' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('not known to this registry');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.getByText('Signed in as').count()).toBe(0);
    await shot(page, 'signin-refused');
    expect(await axeViolations(page)).toEqual([]);

    // A good token signs in, and the header names it with its scopes.
    const good = await createToken(open, { name: uniqueName('console-good'), scopes: ['read', 'publish'] });
    await signIn(page, good.secret);
    await page.getByText(`Signed in as ${good.name} (read, publish)`).waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);
  }, 60_000);

  it('tells an anonymous or under-scoped reader what token a page needs, without failing requests', async () => {
    const page = await chromium.open();
    const failures = watchFailures(page);
    for (const [route, says] of [
      ['/ui/tokens', 'Sign in with an admin token to see tokens (top right).'],
      ['/ui/audit', 'Sign in with an admin token to see the audit log (top right).'],
      ['/ui/quarantine', 'Sign in with an admin token to review the quarantine (top right).'],
    ] as const) {
      await page.goto(`${openBase}${route}`);
      await page.getByRole('note').filter({ hasText: says }).waitFor();
      await page.waitForLoadState('networkidle');
    }
    await page.goto(`${openBase}/ui/namespaces`);
    await page
      .getByRole('note')
      .filter({ hasText: 'Sign in with an admin token to create or edit views' })
      .waitFor();
    expect(await page.getByRole('button', { name: 'New view' }).count()).toBe(0);
    await page.waitForLoadState('networkidle');
    expect(failures).toEqual({ requests: [], console: [] });
    await shot(page, 'anonymous-tokens');

    // A token that falls short is told what it lacks.
    await page.goto(`${openBase}/ui/tokens`);
    const limited = await createToken(open, {
      name: uniqueName('console-ci'),
      scopes: ['admin'],
      namespaces: ['team-a'],
    });
    await signIn(page, limited.secret);
    await page
      .getByRole('note')
      .filter({
        hasText: `The token ${limited.name} (admin; namespaces team-a) cannot see tokens: that takes an admin token not limited to namespaces.`,
      })
      .waitFor();
    await page.waitForLoadState('networkidle');
    expect(failures).toEqual({ requests: [], console: [] });
  }, 60_000);

  it('with SKILLREG_READ_AUTH=true says the catalogue needs a token, then reads it signed in', async () => {
    const page = await chromium.open();
    const failures = watchFailures(page);
    for (const route of ['/ui', `/ui/skills/${skillName}`, '/ui/usage', '/ui/namespaces']) {
      await page.goto(`${closedBase}${route}`);
      await page
        .getByRole('note')
        .filter({ hasText: 'This registry needs a token for every read' })
        .waitFor();
      await page.waitForLoadState('networkidle');
    }
    expect(failures).toEqual({ requests: [], console: [] });
    await shot(page, 'read-auth-anonymous');

    await page.goto(`${closedBase}/ui`);
    await signIn(page, reader.secret);
    await page.getByRole('link', { name: skillName }).click();
    const markdown = page.getByRole('document', { name: 'SKILL.md', exact: true });
    await markdown.getByRole('heading', { name: 'Private' }).waitFor();
    // The linked file is read with the session's token: the link stayed in this tab.
    await markdown.getByRole('link', { name: 'the notes' }).click();
    await page.getByRole('region', { name: 'File viewer' }).getByText('At most three a day.').waitFor();
    expect(new URL(page.url()).pathname).toBe(`/ui/skills/${skillName}/files/references/notes.md`);
    await page.getByText(`Signed in as ${reader.name}`).waitFor();
    const panel = page.getByRole('region', { name: 'Install / use' });
    expect(await panel.textContent()).toContain('This registry needs a token to read');
    expect(await panel.locator('code').allTextContents()).toContain(
      `curl -fL -H "Authorization: Bearer $SKILLREG_TOKEN" -o ${skillName}-1.0.0.tar.gz '${closedBase}/skills/${skillName}/bundle?version=1.0.0'`,
    );

    // A reload checks the kept token again; once revoked, the tab is signed out and told why.
    await page.reload();
    await page.getByText(`Signed in as ${reader.name}`).waitFor();
    const revoke = await closed.app.inject({
      method: 'DELETE',
      url: `/tokens/${reader.id}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(revoke.statusCode).toBe(204);
    await page.reload();
    await page.getByRole('alert').filter({ hasText: 'The token this tab kept was refused (401)' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.getByRole('note').filter({ hasText: 'This registry needs a token for every read' }).waitFor();
  }, 90_000);
});
