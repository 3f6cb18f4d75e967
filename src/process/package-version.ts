import { readFileSync } from 'node:fs';

/**
 * Defined by the build of the standalone CLI (src/cli-dist/bundle.ts), which bakes in the version read
 * here: no package.json sits beside a downloaded file.
 */
declare const SKILLREG_BUNDLED_VERSION: string | undefined;

let version: string | undefined;

function readVersion(): string {
  if (typeof SKILLREG_BUNDLED_VERSION === 'string') return SKILLREG_BUNDLED_VERSION;
  try {
    // src/process/ and dist/process/ alike sit two folders below the package's root.
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return (JSON.parse(text) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * The version of the code this process runs: package.json's, read once. The server says it (GET /,
 * GET /cli), the CLI prints it (`skillreg -V`, its user agent) and the served CLI is built with it.
 */
export function packageVersion(): string {
  version ??= readVersion();
  return version;
}
