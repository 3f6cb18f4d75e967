import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER } from '../../src/db/client.js';
import { promptEntryTokens } from '../../src/render/prompt.js';
import { renderSkillXml } from '../../src/render/skill-content.js';
import { countTokens } from '../../src/render/token-count.js';
import { escapeXmlAttribute, escapeXmlText } from '../../src/render/xml.js';
import { backfillPromptTokens } from '../../src/server.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';
import { availableSkills, type PromptJson } from '../helpers/prompt.js';

// The XML that agents read escapes only what XML requires: in text `&`, `<` and the `>` of `]]>`;
// in a double-quoted attribute `&`, `<` and `"`. Descriptions with arrows, quotes and apostrophes
// read as written, the fragment still parses, and its token counts (stored at publish) stay exact.

const DESCRIPTION = `Turns A -> B, keeps "quotes" & 'apostrophes', compares x < y > z and ends with ]]> intact.`;

describe('escaping', () => {
  it('escapes text and attributes as XML 1.0 requires, nothing more', () => {
    expect(escapeXmlText(`a -> b "c" 'd' & <e> ]]>`)).toBe(`a -> b "c" 'd' &amp; &lt;e> ]]&gt;`);
    expect(escapeXmlAttribute(`a > "b" 'c' & <d>`)).toBe(`a > &quot;b&quot; 'c' &amp; &lt;d>`);
    expect(renderSkillXml('n', 'x -> "y"')).toBe('<skill name="n">\nx -> "y"\n</skill>\n');
  });
});

describe('GET /prompt XML text', () => {
  let ctx: TestApp;
  const name = uniqueName('arrows');
  const plain = uniqueName('plain');

  beforeAll(async () => {
    ctx = await createTestApp();
    for (const [skill, description] of [
      [name, DESCRIPTION],
      [plain, 'Formats tables neatly.'],
    ] as const) {
      const res = await publish(ctx.app, files({ 'SKILL.md': skillMd({ name: skill, description }) }));
      expect(res.statusCode, res.body).toBe(201);
    }
  });
  afterAll(async () => ctx?.close());

  it('keeps arrows, quotes and apostrophes as written, parses, and counts exactly', async () => {
    const res = await ctx.app.inject(`/prompt?name=${name},${plain}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(
      `<description>Turns A -> B, keeps "quotes" &amp; 'apostrophes', compares x &lt; y > z and ends with ]]&gt; intact.</description>`,
    );
    expect(res.body).not.toMatch(/&(?:gt|quot|apos);(?<!]]&gt;)/);
    // A strict reader (five entities only, no raw `<`, `&` or `]]>` in text) gives the description back.
    const listed = availableSkills(res.body);
    expect(listed.find((skill) => skill.name === name)!.description).toBe(DESCRIPTION);
    expect(Number(res.headers['x-prompt-tokens'])).toBe(countTokens(res.body));
    const json = (
      await ctx.app.inject(`/prompt?format=json&name=${name},${plain}&budget=0`)
    ).json() as PromptJson;
    expect(json.tokens).toBe(countTokens(json.prompt));
  });

  it('stores entry counts of the new escaping, and the migration clears counts stored under the old one', async () => {
    const { db } = ctx.database;
    const read = async (skill: string) =>
      (
        (await db.execute(sql`select tokens_prompt_xml as xml, tokens_prompt_markdown as markdown,
          tokens_prompt_name as listed from skill_versions where name = ${skill}`)) as unknown as {
          rows: { xml: number | null; markdown: number | null; listed: number | null }[];
        }
      ).rows[0];
    expect(await read(name)).toEqual(promptEntryTokens(name, DESCRIPTION));
    // Counts as a registry before the change stored them (escaping `>`, quotes and apostrophes).
    await db.execute(sql`update skill_versions set tokens_prompt_xml = tokens_prompt_xml + 9
      where name in (${name}, ${plain})`);
    const stalePlain = await read(plain);
    const migration = readFileSync(path.join(MIGRATIONS_FOLDER, '0013_prompt_xml_escaping.sql'), 'utf8');
    await db.execute(sql.raw(migration));
    expect(await read(name)).toEqual({ xml: null, markdown: null, listed: null });
    // A description with nothing whose escaping changed keeps its counts.
    expect(await read(plain)).toEqual(stalePlain);
    await backfillPromptTokens(ctx.app);
    expect(await read(name)).toEqual(promptEntryTokens(name, DESCRIPTION));
  });
});
