import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestApp, type TestApp } from './context.js';
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
