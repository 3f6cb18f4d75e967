import { writeTarGz } from '../bundle/archive-write.js';

/** The file the tarball's `bin` runs, and the name of the download at /cli/skillreg.mjs. */
export const CLI_FILE = 'skillreg.mjs';

/**
 * The package's name. It is installed from the registry's URL, never by name, but npm still files it
 * under this name: `npm update -g` / `npm outdated -g` ask the public registry for it, and would swap in
 * whoever published it there. A name with capitals cannot be published to npmjs.com (new names are
 * lowercase only) yet installs from a tarball, so nobody can take it; `private` keeps npm's own
 * publish from trying.
 */
export const CLI_PACKAGE_NAME = 'skillreg-CLI';

/** The Node.js versions the bundle runs on (esbuild targets the lowest). */
export const CLI_NODE_RANGE = '>=20';

/** The package.json of the tarball: the bundle as its only file and bin, no dependencies. */
export function cliManifest(version: string): Record<string, unknown> {
  return {
    name: CLI_PACKAGE_NAME,
    version,
    description:
      'The skillreg CLI of skill-registry, served by the registry itself (GET /cli): publish, sync, pull, validate and verify Agent Skills.',
    license: 'MIT',
    private: true,
    type: 'module',
    bin: { skillreg: CLI_FILE },
    files: [CLI_FILE],
    engines: { node: CLI_NODE_RANGE },
  };
}

/**
 * An npm package tarball (`package/package.json`, `package/skillreg.mjs`) of the bundled CLI, so
 * `npm install -g <registry>/cli/skillreg.tgz` and `npx --package <registry>/cli/skillreg.tgz skillreg`
 * work with nothing fetched from a package registry. Byte-for-byte the same for the same bundle (fixed
 * mtimes, owners and gzip header: src/bundle/archive-write.ts).
 */
export function packCliTarball(version: string, bundle: Buffer): Promise<Buffer> {
  const manifest = Buffer.from(`${JSON.stringify(cliManifest(version), null, 2)}\n`);
  return writeTarGz(
    [
      { path: 'package.json', bytes: manifest, mode: 0o644 },
      { path: CLI_FILE, bytes: bundle, mode: 0o755 },
    ],
    { prefix: 'package' },
  );
}
