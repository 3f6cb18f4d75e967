import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeTarGz } from '../../src/bundle/archive-write.js';
import type { BundleFile } from '../../src/bundle/types.js';
import { adminAuth, createTestApp, type TestApp } from './context.js';
import { listening } from './http.js';

/** The service listening on a port of 127.0.0.1, with a folder of its own for what a test writes. */
export interface LiveApp extends TestApp {
  /** Base URL, `http://127.0.0.1:<port>`: what the CLI and other real clients are pointed at. */
  url: string;
  /** A fresh folder under the system's temporary folder (outside the repository and its node_modules). */
  work: string;
  /** Stops the service, drops its database and removes `work`. */
  close(): Promise<void>;
}

/**
 * The set-up of the tests that drive the service from outside (the CLI, real clients): the real app
 * on its own database, listening, and a temporary folder named `<prefix>XXXXXX`.
 *
 *   let ctx: LiveApp;
 *   beforeAll(async () => { ctx = await liveApp('skillreg-cli-'); });
 *   afterAll(() => ctx?.close());
 */
export async function liveApp(prefix: string, env: Record<string, string> = {}): Promise<LiveApp> {
  const app = await createTestApp(env);
  try {
    const url = await listening(app.app);
    const work = await mkdtemp(path.join(tmpdir(), prefix));
    return {
      ...app,
      url,
      work,
      async close() {
        await app.close();
        await rm(work, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await app.close();
    throw error;
  }
}

/**
 * Publishes `bundle` to a listening registry as a gzipped tar (which keeps the executable bit), as the
 * admin, at `{base}/skills{query}`; fails the test unless it is accepted.
 */
export async function publishTarball(
  base: string,
  bundle: BundleFile[],
  query = '',
): Promise<{ version: string }> {
  const res = await fetch(`${base}/skills${query}`, {
    method: 'POST',
    headers: { ...adminAuth, 'content-type': 'application/gzip' },
    body: Buffer.from(await writeTarGz(bundle)),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`publish to ${base} answered ${res.status}: ${text}`);
  return JSON.parse(text) as { version: string };
}
