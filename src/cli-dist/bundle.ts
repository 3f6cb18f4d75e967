import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';
import { packageVersion } from '../process/package-version.js';
import { thirdPartyNotices } from './licenses.js';

/**
 * The CLI's entry and the folder it sits in: src/cli/standalone.ts when the server runs its TypeScript
 * (tests, `npm run dev`), dist/cli/standalone.js when it runs compiled (`npm start`, the image, which
 * has no src/cli). Either way the bundle is made of the very code this server runs.
 */
function findEntry(): { entry: string; codeRoot: string } {
  for (const name of ['standalone.ts', 'standalone.js']) {
    const entry = fileURLToPath(new URL(`../cli/${name}`, import.meta.url));
    if (existsSync(entry)) return { entry, codeRoot: path.dirname(path.dirname(entry)) };
  }
  throw new Error('the CLI entry (src/cli/standalone.ts or dist/cli/standalone.js) is missing');
}

/**
 * The modules of the server that CLI commands import lazily, and what the command says in their stead:
 * the standalone CLI talks to a registry, it is not one (no database driver, no Fastify).
 */
const SERVER_ONLY: Record<string, { command: string; exports: string[] }> = {
  server: { command: 'serve', exports: ['startServer'] },
  'scripts/migrate': { command: 'migrate', exports: ['runMigrations'] },
};

export const NEEDS_FULL_PACKAGE = (command: string) =>
  `skillreg ${command} needs the full package: clone the repository or use the container image`;

function serverStubs(codeRoot: string): Plugin {
  return {
    name: 'skillreg-server-stubs',
    setup(builder) {
      builder.onResolve({ filter: /^\.\.?\// }, (args) => {
        const target = path
          .relative(codeRoot, path.resolve(args.resolveDir, args.path))
          .split(path.sep)
          .join('/')
          .replace(/\.[cm]?[jt]s$/, '');
        return SERVER_ONLY[target] ? { path: target, namespace: 'server-only' } : undefined;
      });
      builder.onLoad({ filter: /.*/, namespace: 'server-only' }, (args) => {
        const { command, exports } = SERVER_ONLY[args.path]!;
        const message = JSON.stringify(NEEDS_FULL_PACKAGE(command));
        return {
          loader: 'js',
          contents: exports
            .map((name) => `export async function ${name}() { throw new Error(${message}); }`)
            .join('\n'),
        };
      });
    },
  };
}

/**
 * Packages and source folders that belong to the server alone. Finding one in the bundle means a CLI
 * module started importing the server eagerly: the build fails rather than ship it (or its secrets'
 * handling) inside a download.
 */
const SERVER_PACKAGES = [
  'fastify',
  '@fastify',
  'pg',
  '@electric-sql',
  'drizzle-orm',
  'esbuild',
  'preact',
  '@modelcontextprotocol',
];
const SERVER_MODULES = ['app', 'http/', 'db/', 'storage/', 'console/', 'mcp/'];

/** Inputs are named relative to the project folder (absWorkingDir): `src/cli/main.ts`, `node_modules/x/...`. */
function serverInputs(metafile: Metafile, codeRoot: string): string[] {
  const codeFolder = `${path.basename(codeRoot)}/`;
  return Object.keys(metafile.inputs).filter((input) => {
    const inPackage = /(?:^|\/)node_modules\/(@[^/]+|[^/]+)/.exec(input)?.[1];
    if (inPackage) return SERVER_PACKAGES.includes(inPackage);
    if (!input.startsWith(codeFolder)) return false;
    const module = input.slice(codeFolder.length).replace(/\.[cm]?[jt]s$/, '');
    return SERVER_MODULES.some((prefix) =>
      prefix.endsWith('/') ? module.startsWith(prefix) : module === prefix,
    );
  });
}

export interface CliBundle {
  /** The version baked in: `skillreg -V` prints it. */
  version: string;
  /** One ES module, `node skillreg.mjs <command>`, every dependency inlined. */
  source: Buffer;
}

/**
 * Bundles the `skillreg` CLI into one self-contained ES module with esbuild (as the console is bundled,
 * in memory, so there is no build step and nothing built is committed).
 *
 * - CommonJS dependencies (secretlint, gray-matter, yauzl...) call `require` for Node's built-ins, which
 *   an ES module lacks: the banner defines one from `createRequire`.
 * - The version is compiled in (`SKILLREG_BUNDLED_VERSION`, read by src/process/package-version.ts,
 *   the same reader that gives this server's own version), since no package.json sits beside a
 *   downloaded file.
 * - `serve` and `migrate` answer one line instead of bundling the server (see SERVER_ONLY).
 * - The output depends on the code alone (paths relative to the code's folder, no timestamps), so
 *   every replica serves the same bytes under the same ETag.
 */
export async function buildCliBundle(): Promise<CliBundle> {
  const { entry, codeRoot } = findEntry();
  const version = packageVersion();
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: path.dirname(codeRoot),
    bundle: true,
    write: false,
    outfile: 'skillreg.mjs',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    // Error classes keep their names: messages and `instanceof`-free checks read `error.name`.
    keepNames: true,
    // Every bundled package's whole license text is appended instead (src/cli-dist/licenses.ts).
    legalComments: 'none',
    metafile: true,
    charset: 'utf8',
    banner: {
      js: "import { createRequire as __skillregCreateRequire } from 'node:module'; const require = __skillregCreateRequire(import.meta.url);",
    },
    define: { SKILLREG_BUNDLED_VERSION: JSON.stringify(version) },
    plugins: [serverStubs(codeRoot)],
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error('the CLI bundle produced no JavaScript');
  const leaked = serverInputs(result.metafile, codeRoot);
  if (leaked.length > 0) {
    throw new Error(`the CLI bundle would include the server's code: ${leaked.slice(0, 5).join(', ')}`);
  }
  const notices = thirdPartyNotices(result.metafile, path.dirname(codeRoot));
  return { version, source: Buffer.concat([output.contents, Buffer.from(notices)]) };
}
