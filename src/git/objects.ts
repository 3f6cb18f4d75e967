import { createHash } from 'node:crypto';

/**
 * Git's object model, as far as the registry's read-only repositories need it: blob, tree and commit ids
 * computed here exactly as git computes them (SHA-1 of "<type> <size>\0<body>"). The registry knows a
 * version's commit id without running git (marketplace.json pins it as `sha`), and every replica computes
 * the same one from the same stored version. The repositories themselves are written by git's own
 * fast-import (src/git/repository-builder.ts), which checks that it arrived at the same ids.
 */

/** A file as git stores it: a path below the repository root, its bytes, and whether it is executable. */
export interface GitFile {
  path: string;
  bytes: Uint8Array;
  executable: boolean;
}

/** The identity and time a commit is made with: fixed, so that the same input gives the same commit id. */
export interface GitSignature {
  name: string;
  email: string;
  /** Seconds since the epoch; the zone is always +0000. */
  seconds: number;
}

/** A tree already known by its id, placed at `path` (a folder) of a commit's tree. */
export interface GitSubtree {
  path: string;
  id: string;
}

export interface CommitInput {
  files: readonly GitFile[];
  /** Folders given by their tree id rather than their files. */
  trees?: readonly GitSubtree[];
  parents?: readonly string[];
  author: GitSignature;
  message: string;
}

export interface Commit {
  id: string;
  treeId: string;
}

function objectId(type: 'blob' | 'tree' | 'commit', body: Uint8Array): Buffer {
  return createHash('sha1').update(`${type} ${body.byteLength}\0`).update(body).digest();
}

export function blobId(bytes: Uint8Array): string {
  return objectId('blob', bytes).toString('hex');
}

export const FILE_MODE = '100644';
export const EXECUTABLE_MODE = '100755';

interface Directory {
  entries: Map<string, Directory | GitFile | { treeId: string }>;
}

/**
 * The id of the tree holding `files` (their parent directories implied, as git has no empty ones) and
 * the `trees` given by id.
 */
export function treeId(files: readonly GitFile[], trees: readonly GitSubtree[] = []): string {
  const root: Directory = { entries: new Map() };
  const placed: (GitFile | (GitSubtree & { treeId: string }))[] = [
    ...files,
    ...trees.map((tree) => ({ ...tree, treeId: tree.id })),
  ];
  for (const file of placed) {
    const parts = file.path.split('/');
    let directory = root;
    for (const part of parts.slice(0, -1)) {
      let next = directory.entries.get(part);
      if (next === undefined) {
        next = { entries: new Map() };
        directory.entries.set(part, next);
      }
      if (!('entries' in next)) throw new Error(`'${file.path}' is below a file of the same name`);
      directory = next;
    }
    directory.entries.set(parts.at(-1)!, 'treeId' in file ? { treeId: file.treeId } : file);
  }
  return hashDirectory(root).toString('hex');
}

function hashDirectory(directory: Directory): Buffer {
  const entries = [...directory.entries].map(([name, entry]) =>
    'entries' in entry
      ? { name, mode: '40000', id: hashDirectory(entry), order: `${name}/` }
      : 'treeId' in entry
        ? { name, mode: '40000', id: Buffer.from(entry.treeId, 'hex'), order: `${name}/` }
        : {
            name,
            mode: entry.executable ? EXECUTABLE_MODE : FILE_MODE,
            id: objectId('blob', entry.bytes),
            order: name,
          },
  );
  // Git orders a tree's entries by name bytes, a directory's name as if it ended in '/'.
  entries.sort((a, b) => Buffer.compare(Buffer.from(a.order), Buffer.from(b.order)));
  const body = Buffer.concat(
    entries.flatMap((entry) => [Buffer.from(`${entry.mode} ${entry.name}\0`), entry.id]),
  );
  return objectId('tree', body);
}

/** "Name <email> seconds +0000", as a commit's author and committer lines end. */
export function signatureLine(signature: GitSignature): string {
  return `${signature.name} <${signature.email}> ${signature.seconds} +0000`;
}

/** A commit's id and its tree's, author and committer being the same signature. */
export function commitOf(input: CommitInput): Commit {
  const tree = treeId(input.files, input.trees);
  const who = signatureLine(input.author);
  const lines = [`tree ${tree}`, ...(input.parents ?? []).map((parent) => `parent ${parent}`)];
  const body = `${lines.join('\n')}\nauthor ${who}\ncommitter ${who}\n\n${input.message}`;
  return { id: objectId('commit', Buffer.from(body, 'utf8')).toString('hex'), treeId: tree };
}
