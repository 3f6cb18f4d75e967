import { describe, expect, it } from 'vitest';
import { folderOf, headingSlug, resolveLink } from '../../src/console/app/links.js';

// How the console reads the links of a skill's markdown (rendering and clicking: console-skill.test.ts).

const files = new Set([
  'SKILL.md',
  'references/api.md',
  'references/deep/notes.md',
  'scripts/x.py',
  'a b.md',
]);

describe('resolveLink', () => {
  it('resolves relative paths to files of the bundle, from the folder of the document', () => {
    expect(resolveLink('references/api.md', '', files)).toEqual({
      kind: 'file',
      path: 'references/api.md',
      fragment: '',
    });
    expect(resolveLink('./scripts/x.py', '', files)).toMatchObject({ kind: 'file', path: 'scripts/x.py' });
    expect(resolveLink('references/../scripts/x.py', '', files)).toMatchObject({ path: 'scripts/x.py' });
    expect(resolveLink('../scripts/x.py', 'references', files)).toMatchObject({ path: 'scripts/x.py' });
    expect(resolveLink('deep/notes.md#Usage', 'references', files)).toEqual({
      kind: 'file',
      path: 'references/deep/notes.md',
      fragment: 'Usage',
    });
    expect(resolveLink('../SKILL.md', 'references', files)).toMatchObject({ path: 'SKILL.md' });
    expect(resolveLink('/scripts/x.py', 'references', files)).toMatchObject({ path: 'scripts/x.py' });
    expect(resolveLink('a%20b.md?plain=1', '', files)).toMatchObject({ path: 'a b.md' });
  });

  it('keeps fragments of the same document, and web and mail links external', () => {
    expect(resolveLink('#error-codes', '', files)).toEqual({ kind: 'fragment', fragment: 'error-codes' });
    expect(resolveLink('https://example.com/x', '', files)).toEqual({
      kind: 'external',
      href: 'https://example.com/x',
    });
    expect(resolveLink('mailto:a@example.com', '', files)).toMatchObject({ kind: 'external' });
    expect(resolveLink('//cdn.example.com/x', '', files)).toMatchObject({ kind: 'external' });
  });

  it('makes links that leave the bundle, miss, name a folder or use another scheme inert, saying why', () => {
    expect(resolveLink('../other/SKILL.md', '', files)).toMatchObject({
      kind: 'inert',
      label: 'outside the skill',
    });
    expect(resolveLink('../../x', 'references', files)).toMatchObject({ label: 'outside the skill' });
    expect(resolveLink('references/nope.md', '', files)).toMatchObject({
      kind: 'inert',
      label: 'missing',
      reason: 'references/nope.md is not a file of this version',
    });
    expect(resolveLink('references/', '', files)).toMatchObject({ label: 'folder' });
    expect(resolveLink('javascript:alert(1)', '', files)).toMatchObject({ kind: 'inert' });
    expect(resolveLink('data:text/html,x', '', files)).toMatchObject({ kind: 'inert' });
    expect(resolveLink('%E0%A4%A.md', '', files)).toMatchObject({ kind: 'inert', label: 'broken' });
  });
});

describe('headingSlug and folderOf', () => {
  it('makes anchors as GitHub does, numbering repeats', () => {
    const seen = new Map<string, number>();
    expect(headingSlug('Error codes', seen)).toBe('error-codes');
    expect(headingSlug('Error codes', seen)).toBe('error-codes-1');
    expect(headingSlug('What’s new? (v2)', seen)).toBe('whats-new-v2');
    expect(headingSlug('Überblick', seen)).toBe('überblick');
  });

  it('gives the folder of a bundle path', () => {
    expect(folderOf('SKILL.md')).toBe('');
    expect(folderOf('references/deep/notes.md')).toBe('references/deep');
  });
});
