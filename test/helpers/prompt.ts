/** What tests of GET /prompt share: the JSON layout's shape and strict readers of the fragment. */
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

export interface PromptJson {
  prompt: string;
  tokens: number;
  included: { name: string; version: string; location: string; tokens: { entry: number; body: number } }[];
  omitted: { name: string; reason: string }[];
  omittedCount: number;
  searchFirst: boolean;
}

/** GET <mount>/prompt?format=json&<query>, which must answer 200. */
export async function promptJsonOf(app: FastifyInstance, query: string, mount = ''): Promise<PromptJson> {
  const res = await app.inject(`${mount}/prompt?format=json${query ? `&${query}` : ''}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The omitted line of a search-first fragment naming `names` (prompt-render.ts omittedLine). */
export function namesLine(names: readonly string[]): string {
  return `Also available but not described here, to save space (load them by name): ${names.join(', ')}.\n`;
}

interface XmlElement {
  tag: string;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * A deliberately strict little XML reader for the <available_skills> block: elements without
 * attributes, text with only the five predefined entities. Throws on anything malformed, so a raw
 * `<` or `&` in a description fails the test.
 */
function parseXml(source: string): XmlElement {
  const root: XmlElement = { tag: '#root', children: [], text: '' };
  const stack = [root];
  const token = /<(\/?)([a-z_]+)>|([^<]+)/gy;
  let match: RegExpExecArray | null;
  let consumed = 0;
  // biome-ignore lint/suspicious/noAssignInExpressions: a tokenizer loop
  while ((match = token.exec(source)) !== null) {
    consumed = token.lastIndex;
    const top = stack[stack.length - 1]!;
    if (match[3] !== undefined) {
      // `]]>` is the one sequence character data may not hold raw (XML 1.0, CharData).
      if (match[3].includes(']]>')) throw new Error('raw ]]> in character data');
      top.text += match[3].replace(/&([a-z]+);|&/g, (whole, name?: string) => {
        const value = name === undefined ? undefined : ENTITIES[name];
        if (value === undefined) throw new Error(`bad entity near ${whole}`);
        return value;
      });
    } else if (match[1] === '') {
      const element = { tag: match[2]!, children: [], text: '' };
      top.children.push(element);
      stack.push(element);
    } else {
      if (top.tag !== match[2]) throw new Error(`</${match[2]}> closes <${top.tag}>`);
      stack.pop();
    }
  }
  if (consumed !== source.length)
    throw new Error(`unparseable XML at ${consumed}: ${source.slice(consumed, consumed + 20)}`);
  if (stack.length !== 1) throw new Error('unclosed element');
  return root;
}

export function availableSkills(prompt: string): { name: string; description: string; location: string }[] {
  const match = /<available_skills>[\s\S]*<\/available_skills>/.exec(prompt);
  expect(match, prompt).not.toBeNull();
  const [block] = parseXml(match![0]).children;
  expect(block!.tag).toBe('available_skills');
  return block!.children.map((skill) => {
    expect(skill.tag).toBe('skill');
    expect(skill.children.map((child) => child.tag)).toEqual(['name', 'description', 'location']);
    const [name, description, location] = skill.children.map((child) => child.text);
    return { name: name!, description: description!, location: location! };
  });
}
