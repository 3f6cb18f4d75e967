import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredArgumentNames, splitArguments, substituteArguments } from '../../src/render/arguments.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';

describe('splitArguments (shell-style, no expansion)', () => {
  it.each([
    ['a b  c', ['a', 'b', 'c']],
    ['"my widget" React Vue', ['my widget', 'React', 'Vue']],
    ["'single quoted' x", ['single quoted', 'x']],
    ['a\\ b c', ['a b', 'c']],
    ['"say \\"hi\\"" \'it\'"\'"\'s\'', ['say "hi"', "it's"]],
    ['"back\\\\slash" "keep \\n"', ['back\\slash', 'keep \\n']],
    ['pre"fix and"post', ['prefix andpost']],
    ['"" x', ['', 'x']],
    ['  leading\ttabs\nnewlines  ', ['leading', 'tabs', 'newlines']],
    ['"unclosed quote', ['unclosed quote']],
    ["'unclosed single", ['unclosed single']],
    ['$HOME $1', ['$HOME', '$1']],
    ['', []],
    ['   ', []],
  ])('%j', (input, expected) => {
    expect(splitArguments(input)).toEqual(expected);
  });
});

describe('substituteArguments', () => {
  it.each([
    ['whole string', 'Fix $ARGUMENTS now', '"a b" c', 'Fix "a b" c now'],
    [
      'index form',
      'first=$ARGUMENTS[0] second=$ARGUMENTS[1]',
      '"my widget" React',
      'first=my widget second=React',
    ],
    ['shorthand, 0-based', 'first=$0 second=$1', '"my widget" React', 'first=my widget second=React'],
    ['both forms name the same argument', '$ARGUMENTS[1]/$1', 'a b', 'b/b'],
    ['missing index is empty', '[$ARGUMENTS[5]][$7][$0]', 'only', '[][][only]'],
    ['no arguments at all empties indexes', 'x=$0.', '', 'x=.'],
    ['multi-digit index', '$10|$1', 'a b c d e f g h i j k', 'k|b'],
    ['$N followed by a word character is text', 'cost $1a and $ARGUMENTS', 'x', 'cost $1a and x'],
    ['$N followed by punctuation is substituted', '$0.', 'v', 'v.'],
    ['repeated placeholders', '$0 $0 $ARGUMENTS $ARGUMENTS', 'p', 'p p p p'],
    ['no placeholder appends', 'Do the thing.', 'x y', 'Do the thing.\n\nARGUMENTS: x y'],
    ['no placeholder, empty arguments: unchanged', 'Do the thing.', '', 'Do the thing.'],
    ['values are not substituted again', 'got $0 and $1', '\'$1\' "$ARGUMENTS"', 'got $1 and $ARGUMENTS'],
    ['dollar signs in values survive replace()', '$0', "'$& $$ $`'", '$& $$ $`'],
  ])('%s', (_label, body, args, expected) => {
    expect(substituteArguments(body, args)).toBe(expected);
  });

  it('leaves the body alone without arguments', () => {
    expect(substituteArguments('Use $ARGUMENTS and $0', undefined)).toBe('Use $ARGUMENTS and $0');
  });

  it('maps names declared in frontmatter `arguments` to positions', () => {
    const names = declaredArgumentNames({ arguments: ['component', 'from', 'to'] });
    expect(names).toEqual(['component', 'from', 'to']);
    expect(
      substituteArguments(
        'Move $component from $from to $to ($components stays, $missing too)',
        'Search React',
        {
          names,
        },
      ),
    ).toBe('Move Search from React to  ($components stays, $missing too)');
    expect(declaredArgumentNames({ arguments: 'issue, branch' })).toEqual(['issue', 'branch']);
    expect(declaredArgumentNames({ arguments: [{ name: 'issue' }, 3, 'bad-name', 'ARGUMENTS'] })).toEqual([
      'issue',
    ]);
    expect(declaredArgumentNames({})).toEqual([]);
  });
});

describe('GET /skills/{name}/content?arguments=', () => {
  let ctx: TestApp;
  const templated = uniqueName('templated');
  const plain = uniqueName('plain');
  beforeAll(async () => {
    ctx = await createTestApp();
    for (const [name, body] of [
      [templated, 'Fix issue $0 with priority $ARGUMENTS[1]. Everything: $ARGUMENTS <ok>\n'],
      [plain, 'No placeholders here.\n'],
    ] as const) {
      const res = await publish(
        ctx.app,
        files({ 'SKILL.md': skillMd({ name, description: 'Args.', body }) }),
      );
      expect(res.statusCode, res.body).toBe(201);
    }
  });
  afterAll(async () => ctx?.close());

  it('substitutes in markdown, xml and json, and varies the ETag with the arguments', async () => {
    const args = encodeURIComponent('"123 456" high');
    const markdown = await ctx.app.inject(`/skills/${templated}/content?arguments=${args}`);
    expect(markdown.statusCode).toBe(200);
    expect(markdown.body).toBe('Fix issue 123 456 with priority high. Everything: "123 456" high <ok>\n');

    const xml = await ctx.app.inject(`/skills/${templated}/content?format=xml&arguments=${args}`);
    expect(xml.body).toContain('Fix issue 123 456 with priority high. Everything: "123 456" high &lt;ok>');

    const json = await ctx.app.inject(`/skills/${templated}/content?format=json&arguments=${args}`);
    expect(json.json().body).toBe(markdown.body);

    const raw = await ctx.app.inject(`/skills/${templated}/content`);
    expect(raw.body).toContain('$ARGUMENTS[1]');
    const other = await ctx.app.inject(`/skills/${templated}/content?arguments=7`);
    expect(other.body).toContain('Fix issue 7 with priority .');
    const etags = new Set([raw, markdown, other, xml, json].map((res) => String(res.headers.etag)));
    expect(etags.size).toBe(5);

    const cached = await ctx.app.inject({
      url: `/skills/${templated}/content?arguments=${args}`,
      headers: { 'if-none-match': String(markdown.headers.etag) },
    });
    expect(cached.statusCode).toBe(304);
    const changed = await ctx.app.inject({
      url: `/skills/${templated}/content?arguments=7`,
      headers: { 'if-none-match': String(markdown.headers.etag) },
    });
    expect(changed.statusCode).toBe(200);
  });

  it('appends the arguments to a body without placeholders', async () => {
    const res = await ctx.app.inject(`/skills/${plain}/content?arguments=${encodeURIComponent('do it')}`);
    expect(res.body).toBe('No placeholders here.\n\n\nARGUMENTS: do it');
  });
});
