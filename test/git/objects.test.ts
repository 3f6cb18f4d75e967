import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillsLockHash } from '../../src/bundle/skills-lock-hash.js';
import { commitOf, type GitFile, treeId } from '../../src/git/objects.js';
import { buildRepository } from '../../src/git/repository-builder.js';
import { gitStorable, versionCommit } from '../../src/git/version-commit.js';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

const author = { name: 'skill-registry', email: 'skill-registry@localhost', seconds: 1_767_225_600 };
const folder: GitFile[] = [
  { path: 'SKILL.md', bytes: Buffer.from('---\nname: demo\ndescription: d\n---\nBody\n'), executable: false },
  { path: 'scripts/run.sh', bytes: Buffer.from('#!/bin/sh\necho ran\n'), executable: true },
  // Sorted by git as if directories ended in '/': 'scripts' the tree sorts after 'scripts-x' the file.
  { path: 'scripts-x', bytes: Buffer.from('x'), executable: false },
  { path: 'references/données/résumé.md', bytes: Buffer.from('✓ 日本語\n'), executable: false },
  { path: 'assets/empty.txt', bytes: new Uint8Array(0), executable: false },
  { path: 'we"ird\\name.md', bytes: Buffer.from('quoted path'), executable: false },
];

describe('git object ids computed without git', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'skillreg-git-objects-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('are the ids git itself gives the same tree and commits, parents included', async () => {
    const first = commitOf({ files: folder, author, message: 'demo 1.0.0\n' });
    const moreFiles = [...folder, { path: 'references/b.md', bytes: Buffer.from('b\n'), executable: false }];
    const later = { ...author, seconds: author.seconds + 60 };
    const second = commitOf({
      files: moreFiles,
      author: later,
      message: 'demo 1.1.0\n',
      parents: [first.id],
    });
    const repository = path.join(work, 'ids.git');
    await buildRepository(repository, {
      commits: [
        { id: first.id, files: folder, author, message: 'demo 1.0.0\n' },
        { id: second.id, files: moreFiles, author: later, message: 'demo 1.1.0\n', parents: [first.id] },
      ],
      refs: new Map([
        ['refs/tags/v1.0.0', first.id],
        ['refs/heads/latest', second.id],
      ]),
      head: 'refs/heads/latest',
    });
    expect(git(repository, 'rev-parse', 'v1.0.0', 'v1.0.0^{tree}', 'HEAD', 'HEAD^')).toBe(
      [first.id, first.treeId, second.id, first.id].join('\n'),
    );
    expect(treeId(folder)).toBe(first.treeId);
    // Only the refs asked for: the builder's own refs are gone.
    expect(git(repository, 'for-each-ref', '--format=%(refname)').split('\n')).toEqual([
      'refs/heads/latest',
      'refs/tags/v1.0.0',
    ]);
    expect(git(repository, 'ls-tree', '-r', 'v1.0.0', '--', 'scripts/run.sh')).toMatch(/^100755 blob /);
    // A clone checks the files out as they were given, bytes and executable bit.
    const clone = path.join(work, 'clone');
    git(work, 'clone', '--quiet', repository, clone);
    expect(git(clone, 'status', '--porcelain')).toBe('');
    expect(git(clone, 'log', '--format=%an <%ae> %at %s')).toBe(
      'skill-registry <skill-registry@localhost> 1767225660 demo 1.1.0\nskill-registry <skill-registry@localhost> 1767225600 demo 1.0.0',
    );
  });

  it('give a folder grafted by its tree id the same ids as the folder written out', () => {
    const inner = treeId(folder);
    const outer = [{ path: 'README.md', bytes: Buffer.from('top\n'), executable: false }];
    const nested = folder.map((file) => ({ ...file, path: `plugins/demo/skills/demo/${file.path}` }));
    const written = commitOf({ files: [...outer, ...nested], author, message: 'm\n' });
    const grafted = commitOf({
      files: outer,
      trees: [{ path: 'plugins/demo/skills/demo', id: inner }],
      author,
      message: 'm\n',
    });
    expect(grafted).toEqual(written);
  });

  it('make a version one parentless commit that depends only on the version', () => {
    const files = folder.map((file) => ({
      path: file.path,
      bytes: file.bytes,
      mode: file.executable ? 0o755 : 0o644,
    }));
    const input = { name: 'demo', version: '1.0.0', createdAt: new Date('2026-01-01T00:00:00.750Z'), files };
    const commit = versionCommit(input);
    expect(versionCommit({ ...input, files: [...files].reverse() }).commitId).toBe(commit.commitId);
    expect(commit.author.seconds).toBe(1_767_225_600);
    expect(versionCommit({ ...input, version: '1.0.1' }).commitId).not.toBe(commit.commitId);
    expect(versionCommit({ ...input, createdAt: new Date('2026-01-01T00:00:01Z') }).commitId).not.toBe(
      commit.commitId,
    );
    // Nothing inside a .git folder goes into a repository (git refuses to check such paths out).
    expect(gitStorable('.git/config')).toBe(false);
    expect(gitStorable('assets/.GIT/hooks/x')).toBe(false);
    expect(gitStorable('references/.gitignore')).toBe(true);
    const withDotGit = versionCommit({
      ...input,
      files: [...files, { path: '.git/config', bytes: Buffer.from('x'), mode: 0o644 }],
    });
    expect(withDotGit.commitId).toBe(commit.commitId);
  });
});

describe('skillsLockHash', () => {
  it("is the skills CLI's: sha256 over path then bytes, in localeCompare order, .git and node_modules left out", () => {
    const files = [
      { path: 'b.md', bytes: Buffer.from('B') },
      { path: 'SKILL.md', bytes: Buffer.from('S') },
      { path: 'a/z.md', bytes: Buffer.from('Z') },
      { path: 'node_modules/x/index.js', bytes: Buffer.from('ignored') },
      { path: '.git/HEAD', bytes: Buffer.from('ignored') },
    ];
    // localeCompare puts 'a/z.md' before 'b.md' before 'SKILL.md' (case folded first).
    const expected = execFileSync(
      'sh',
      ['-c', "printf 'a/z.mdZb.mdBSKILL.mdS' | sha256sum | cut -d' ' -f1"],
      { encoding: 'utf8' },
    ).trim();
    expect(skillsLockHash(files)).toBe(expected);
  });
});
