import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** One built file of the console, as served. */
export interface ConsoleAsset {
  bytes: Buffer;
  contentType: string;
  etag: string;
}

export interface ConsoleAssets {
  'app.js': ConsoleAsset;
  'app.css': ConsoleAsset;
}

/**
 * The console's sources: next to this file when run from src/ (npm start), or under src/ beside
 * dist/ when run compiled (the image copies src/console/app there; tsc does not compile them).
 */
const APP_DIR =
  [new URL('./app/', import.meta.url), new URL('../../src/console/app/', import.meta.url)]
    .map((url) => fileURLToPath(url))
    .find((dir) => existsSync(`${dir}main.tsx`)) ?? fileURLToPath(new URL('./app/', import.meta.url));

function asset(bytes: Buffer | Uint8Array, contentType: string): ConsoleAsset {
  const buffer = Buffer.from(bytes);
  return {
    bytes: buffer,
    contentType,
    etag: `"${createHash('sha256').update(buffer).digest('hex').slice(0, 32)}"`,
  };
}

/**
 * The web console (src/console/app) bundled in memory with esbuild: no build step for whoever runs
 * `npm start`, nothing built is committed, and the bundle is made once per process, on first use.
 */
export async function buildConsoleAssets(): Promise<ConsoleAssets> {
  const result = await build({
    entryPoints: [`${APP_DIR}main.tsx`],
    bundle: true,
    write: false,
    outfile: 'app.js',
    format: 'esm',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  const js = result.outputFiles.find((file) => file.path.endsWith('.js'));
  if (!js) throw new Error('the console bundle produced no JavaScript');
  const css = await readFile(`${APP_DIR}styles.css`);
  return {
    'app.js': asset(js.contents, 'text/javascript; charset=utf-8'),
    'app.css': asset(css, 'text/css; charset=utf-8'),
  };
}
