import { createHash } from 'node:crypto';
import { buildCliBundle } from './bundle.js';
import { CLI_FILE, CLI_PACKAGE_NAME, packCliTarball } from './npm-package.js';

/** The two downloads: the bare bundle and the npm package holding it. */
export const CLI_FILES = [CLI_FILE, 'skillreg.tgz'] as const;
export type CliFileName = (typeof CLI_FILES)[number];

export interface CliFile {
  name: CliFileName;
  bytes: Buffer;
  contentType: string;
  /** Hex sha256 of the bytes: what `sha256sum` prints, and what GET /cli publishes for pinning. */
  sha256: string;
  /** The same digest as an RFC 9530 `Repr-Digest` header value. */
  reprDigest: string;
  /** Strong: the bytes are deterministic, so every replica serving the same code gives the same tag. */
  etag: string;
}

export interface CliDistribution {
  version: string;
  /** The npm package name the tarball installs under (`npm ls -g` shows it). */
  packageName: string;
  files: Record<CliFileName, CliFile>;
}

function cliFile(name: CliFileName, bytes: Buffer, contentType: string): CliFile {
  const digest = createHash('sha256').update(bytes).digest();
  const sha256 = digest.toString('hex');
  return {
    name,
    bytes,
    contentType,
    sha256,
    reprDigest: `sha-256=:${digest.toString('base64')}:`,
    etag: `"sha256-${sha256}"`,
  };
}

async function buildDistribution(): Promise<CliDistribution> {
  const bundle = await buildCliBundle();
  const tarball = await packCliTarball(bundle.version, bundle.source);
  return {
    version: bundle.version,
    packageName: CLI_PACKAGE_NAME,
    files: {
      [CLI_FILE]: cliFile(CLI_FILE, bundle.source, 'text/javascript; charset=utf-8'),
      'skillreg.tgz': cliFile('skillreg.tgz', tarball, 'application/gzip'),
    },
  };
}

let built: Promise<CliDistribution> | undefined;

/**
 * The `skillreg` CLI as this registry serves it (GET /cli/...), built from the code the server runs on
 * first request and kept for the life of the process (about 1 MiB), shared by every app the process
 * holds: a replica that is never asked for it never pays for the build, and an upgrade of the server
 * upgrades the CLI it serves.
 */
export function cliDistribution(): Promise<CliDistribution> {
  // A failed build is not kept: the next request tries again.
  built ??= buildDistribution().catch((error: unknown) => {
    built = undefined;
    throw error;
  });
  return built;
}
