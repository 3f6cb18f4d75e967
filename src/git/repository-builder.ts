import { spawn } from 'node:child_process';
import { copyFile, link, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  blobId,
  EXECUTABLE_MODE,
  FILE_MODE,
  type GitFile,
  type GitSignature,
  signatureLine,
} from './objects.js';

/**
 * Writes a bare repository with git's own fast-import: the registry describes commits and refs, git writes
 * the objects (one pack). The commit ids fast-import reports are compared with those src/git/objects.ts
 * computed, so a repository never advertises a commit other than the one marketplace.json pins.
 */

export interface CommitSpec {
  /** The id src/git/objects.ts computed for it: fast-import must arrive at the same. */
  id: string;
  files: readonly GitFile[];
  /** Subtrees already in the repository (from an earlier build whose pack was carried over), by path. */
  trees?: readonly { path: string; id: string }[];
  parents?: readonly string[];
  author: GitSignature;
  message: string;
}

export interface RepositorySpec {
  commits: readonly CommitSpec[];
  /** Full ref name ("refs/tags/v1.0.0", "refs/heads/latest") to a commit id among `commits`. */
  refs: ReadonlyMap<string, string>;
  /** The ref HEAD names ("refs/heads/latest"). */
  head: string;
}

/** Git without the machine's or the user's configuration, and without prompts. */
export function gitEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
    ...extra,
  };
}

/** Runs git with `input` on stdin; resolves with stdout, rejects with stderr. */
export function runGit(args: string[], options: { cwd?: string; input?: AsyncIterable<Uint8Array> } = {}) {
  return new Promise<string>((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: options.cwd,
      env: gitEnvironment(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', (error) =>
      reject(
        (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? new Error('git is not installed: the git faces run git (apt-get install git)')
          : error,
      ),
    );
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`git ${args[0]} exited ${code}: ${stderr.trim().slice(0, 2000)}`));
    });
    child.stdin.on('error', () => {}); // an early exit is reported by 'close'
    if (!options.input) {
      child.stdin.end();
      return;
    }
    (async () => {
      for await (const chunk of options.input!) {
        if (!child.stdin.write(chunk)) await new Promise((resolve) => child.stdin.once('drain', resolve));
      }
      child.stdin.end();
    })().catch((error) => {
      child.kill();
      reject(error);
    });
  });
}

/**
 * Creates `directory` as a bare repository holding `spec`. With `objectsFrom` (another bare repository
 * of this process), its objects are linked in first, so that `spec` may graft its trees by id.
 */
export async function buildRepository(
  directory: string,
  spec: RepositorySpec,
  options: { objectsFrom?: string } = {},
): Promise<void> {
  await mkdir(directory, { recursive: true });
  await runGit(['init', '--quiet', '--bare', directory]);
  if (options.objectsFrom)
    await linkObjects(path.join(options.objectsFrom, 'objects'), path.join(directory, 'objects'));
  await importInto(directory, spec);
}

/** Hard-links every object file (packs and loose objects; they never change) of one repository into another. */
async function linkObjects(from: string, to: string): Promise<void> {
  for (const entry of await readdir(from, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const relative = path.relative(from, path.join(entry.parentPath, entry.name));
    if (relative.startsWith('info')) continue;
    await mkdir(path.dirname(path.join(to, relative)), { recursive: true });
    await link(path.join(from, relative), path.join(to, relative)).catch(
      async (error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') return;
        if (error.code === 'EXDEV' || error.code === 'EPERM')
          await copyFile(path.join(from, relative), path.join(to, relative));
        else throw error;
      },
    );
  }
}

/** Adds `spec`'s commits and refs to the bare repository at `directory` and points HEAD. */
export async function importInto(directory: string, spec: RepositorySpec): Promise<void> {
  await runGit(['fast-import', '--quiet', '--done'], { cwd: directory, input: fastImportStream(spec) });
  const written = new Map<string, string>();
  const refs = await runGit(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: directory });
  for (const line of refs.split('\n')) {
    const [id, ref] = line.split(' ');
    if (id && ref) written.set(ref, id);
  }
  for (const [ref, id] of spec.refs) {
    if (written.get(ref) !== id) {
      throw new Error(`git wrote ${ref} as ${written.get(ref)} where the registry computed ${id}`);
    }
  }
  await writeFile(path.join(directory, 'HEAD'), `ref: ${spec.head}\n`);
}

async function* fastImportStream(spec: RepositorySpec): AsyncGenerator<Uint8Array> {
  const written = new Set<string>();
  const byId = new Map<string, number>();
  let mark = 0;
  for (const commit of spec.commits) {
    mark += 1;
    byId.set(commit.id, mark);
    // Blobs inline in the M lines would need their size first; writing each distinct blob once keeps the
    // stream small when versions share files.
    const lines: string[] = [];
    for (const file of commit.files) {
      const id = blobId(file.bytes);
      if (!written.has(id)) {
        written.add(id);
        yield Buffer.from(`blob\ndata ${file.bytes.byteLength}\n`);
        yield file.bytes;
        yield Buffer.from('\n');
      }
      lines.push(`M ${file.executable ? EXECUTABLE_MODE : FILE_MODE} ${id} ${quotePath(file.path)}\n`);
    }
    for (const tree of commit.trees ?? []) lines.push(`M 040000 ${tree.id} ${quotePath(tree.path)}\n`);
    const who = signatureLine(commit.author);
    const message = Buffer.from(commit.message, 'utf8');
    // A private ref per commit: fast-import needs one, and the real refs are set after.
    yield Buffer.from(
      `commit refs/registry-build/${mark}\nmark :${mark}\nauthor ${who}\ncommitter ${who}\ndata ${message.byteLength}\n`,
    );
    yield message;
    yield Buffer.from('\n');
    const [first, ...merges] = commit.parents ?? [];
    if (first) yield Buffer.from(`from ${byId.has(first) ? `:${byId.get(first)}` : first}\n`);
    for (const parent of merges)
      yield Buffer.from(`merge ${byId.has(parent) ? `:${byId.get(parent)}` : parent}\n`);
    yield Buffer.from(lines.join(''));
    yield Buffer.from('\n');
  }
  for (const [ref, id] of spec.refs) {
    const target = byId.get(id);
    yield Buffer.from(`reset ${ref}\nfrom ${target ? `:${target}` : id}\n\n`);
  }
  // The private refs go again: `reset` to the null id deletes a branch fast-import created.
  for (let index = 1; index <= mark; index++) {
    yield Buffer.from(
      `reset refs/registry-build/${index}\nfrom 0000000000000000000000000000000000000000\n\n`,
    );
  }
  yield Buffer.from('done\n');
}

/** A path as fast-import reads it: C-style quoted when it holds a quote, a backslash, a newline or a leading quote. */
function quotePath(filePath: string): string {
  if (!/["\\\n]/.test(filePath) && !filePath.startsWith('"')) return filePath;
  return `"${filePath.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}
