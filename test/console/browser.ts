import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ADMIN_TOKEN } from '../helpers/context.js';

// The web console in a real Chromium (Debian's, driven by playwright-core). Screenshots land in
// test-artifacts/console/.

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumInstalled = existsSync(CHROMIUM);
if (!chromiumInstalled) {
  console.log(
    `[console] skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
  );
}
const ARTIFACTS = path.resolve('test-artifacts/console');

export async function launchChromium(): Promise<Browser> {
  await mkdir(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
}

/** A page in a context of its own (its own sessionStorage); close the context when done. */
export async function freshPage(
  browser: Browser,
  viewport = { width: 1280, height: 900 },
): Promise<{ page: Page; context: BrowserContext }> {
  const context = await browser.newContext({ viewport });
  return { page: await context.newPage(), context };
}

/**
 * A suite's Chromium: each page in a context of its own (freshPage); close() closes the contexts still
 * open, then the browser.
 */
export class ConsoleBrowser {
  readonly #contexts: BrowserContext[] = [];

  private constructor(private readonly browser: Browser) {}

  static async launch(): Promise<ConsoleBrowser> {
    return new ConsoleBrowser(await launchChromium());
  }

  async open(viewport?: { width: number; height: number }): Promise<Page> {
    const { page, context } = await freshPage(this.browser, viewport);
    this.#contexts.push(context);
    return page;
  }

  async close(): Promise<void> {
    for (const context of this.#contexts) await context.close().catch(() => {});
    await this.browser.close();
  }
}

export async function signIn(page: Page, token = ADMIN_TOKEN): Promise<void> {
  await page.getByRole('form', { name: 'Sign in' }).getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Signed in as').waitFor();
}

/** A screenshot of the whole page, or with `fullPage: false` of what the viewport shows. */
export async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage });
}

/** How far the page scrolls sideways (0: not at all). */
export async function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = document.scrollingElement ?? document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
}

/** Requests the page made that failed (4xx/5xx or not answered), and console errors, from now on. */
export function watchFailures(page: Page): { requests: string[]; console: string[] } {
  const seen = { requests: [] as string[], console: [] as string[] };
  page.on('response', (response) => {
    if (response.status() >= 400) seen.requests.push(`${response.status()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => seen.requests.push(`failed ${request.url()}`));
  page.on('console', (message) => {
    if (message.type() === 'error') seen.console.push(message.text());
  });
  page.on('pageerror', (error) => seen.console.push(error.message));
  return seen;
}

/** axe-core's serious and critical violations on the page as it stands. */
export async function axeViolations(page: Page): Promise<string[]> {
  const source = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(source);
  const results = (await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is a global the evaluated source defines
    const axe = (globalThis as any).axe;
    return axe.run(document, { resultTypes: ['violations'] });
  })) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
