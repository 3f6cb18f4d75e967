/**
 * The search-first wording, tested with the agent loops in examples/ and a fake model that follows
 * the system prompt literally: it loads a listed skill that fits the request, else, when the prompt
 * tells it to, calls search_skills with the request and loads the first result. A request whose skill
 * the budgeted prompt does not list must end in search_skills, then load_skill of that skill.
 */
// biome-ignore-all lint/suspicious/noExplicitAny: provider request bodies are read loosely
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent as runAnthropicAgent } from '../../examples/anthropic-agent.js';
import { runAgent as runOpenAiAgent } from '../../examples/openai-agent.js';
import { uniqueName } from '../helpers/bundles.js';
import { adminAuth, createTestApp, type TestApp } from '../helpers/context.js';
import { listening } from '../helpers/http.js';

interface Turn {
  system: string;
  question: string;
  tools: string[];
  /** The last tool call and what it answered, when the last message is a tool result. */
  last?: { tool: string; result: string };
}

type Decision = { call: string; input: Record<string, unknown> } | { answer: string };

const WORDS = /[a-z]{4,}/g;

/** What a model that follows the fragment's instructions to the letter does next. */
function literalModel(turn: Turn): Decision {
  if (turn.last?.tool === 'search_skills') {
    const first = turn.last.result.split('\n')[0]!.split(' — ')[0]!.trim();
    return { call: 'load_skill', input: { name: first } };
  }
  if (turn.last?.tool === 'load_skill')
    return { answer: `Following the skill: ${turn.last.result.slice(0, 60)}` };
  const asked = new Set(turn.question.toLowerCase().match(WORDS) ?? []);
  for (const [, name, description] of turn.system.matchAll(
    /<name>([^<]+)<\/name>\s*<description>([^<]*)<\/description>/g,
  )) {
    const shared = (description!.toLowerCase().match(WORDS) ?? []).filter((word) => asked.has(word));
    if (new Set(shared).size >= 3) return { call: 'load_skill', input: { name: name! } };
  }
  if (/call the search_skills tool/.test(turn.system) && turn.tools.includes('search_skills')) {
    return { call: 'search_skills', input: { query: turn.question } };
  }
  return { answer: 'No skill fits; answering directly.' };
}

/** A fake provider endpoint that answers each request with the literal model's decision. */
async function startModel(
  path: string,
  parse: (body: any) => Turn,
  reply: (decision: Decision, index: number) => object,
): Promise<{
  baseUrl: string;
  calls: { tool: string; input: Record<string, unknown> }[];
  systems: string[];
  close(): Promise<void>;
}> {
  const calls: { tool: string; input: Record<string, unknown> }[] = [];
  const systems: string[] = [];
  let index = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url !== path) {
        response.writeHead(404).end();
        return;
      }
      const turn = parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      systems.push(turn.system);
      const decision = literalModel(turn);
      if ('call' in decision) calls.push({ tool: decision.call, input: decision.input });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(reply(decision, index++)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    calls,
    systems,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function anthropicTurn(body: any): Turn {
  const messages = body.messages as any[];
  const question = messages[0].content as string;
  const last = messages.at(-1);
  let lastCall: Turn['last'];
  if (Array.isArray(last.content) && last.content[0]?.type === 'tool_result') {
    const assistant = messages.at(-2).content as any[];
    const use = assistant.find((block) => block.type === 'tool_use');
    lastCall = { tool: use.name, result: String(last.content[0].content) };
  }
  return { system: body.system, question, tools: body.tools.map((tool: any) => tool.name), last: lastCall };
}

function openAiTurn(body: any): Turn {
  const messages = body.messages as any[];
  const last = messages.at(-1);
  let lastCall: Turn['last'];
  if (last.role === 'tool') {
    const call = messages.at(-2).tool_calls.find((item: any) => item.id === last.tool_call_id);
    lastCall = { tool: call.function.name, result: String(last.content) };
  }
  return {
    system: messages[0].content,
    question: messages[1].content,
    tools: body.tools.map((tool: any) => tool.function.name),
    last: lastCall,
  };
}

function anthropicReply(decision: Decision, index: number): object {
  const content =
    'call' in decision
      ? [{ type: 'tool_use', id: `toolu_${index}`, name: decision.call, input: decision.input }]
      : [{ type: 'text', text: decision.answer }];
  return {
    id: `msg_${index}`,
    type: 'message',
    role: 'assistant',
    model: 'literal',
    content,
    stop_reason: 'call' in decision ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

function openAiReply(decision: Decision, index: number): object {
  const message =
    'call' in decision
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: `call_${index}`,
              type: 'function',
              function: { name: decision.call, arguments: JSON.stringify(decision.input) },
            },
          ],
        }
      : { role: 'assistant', content: decision.answer };
  return {
    id: `chatcmpl-${index}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'literal',
    choices: [{ index: 0, finish_reason: 'call' in decision ? 'tool_calls' : 'stop', message }],
  };
}

describe('search-first prompts with the example agent loops', () => {
  let ctx: TestApp;
  let registryUrl: string;
  const target = uniqueName('board-deck');
  const others = Array.from({ length: 30 }, (_, at) => uniqueName(`helper-${at}`));
  const QUESTION = 'Turn the quarterly spreadsheet figures into a board presentation deck for Monday.';

  const publish = (name: string, description: string, body: string) =>
    ctx.app.inject({
      method: 'POST',
      url: '/skills',
      headers: { ...adminAuth, 'content-type': 'text/markdown' },
      payload: `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`,
    });

  beforeAll(async () => {
    ctx = await createTestApp({ SKILLREG_RATE_LIMIT_WRITES: '0' });
    registryUrl = await listening(ctx.app);
    for (const [at, name] of others.entries()) {
      const topic = [
        'kubernetes rollouts',
        'invoice parsing',
        'unit test triage',
        'sql tuning',
        'log search',
      ][at % 5];
      const status = (
        await publish(
          name,
          `Helps with ${topic}: step-by-step checks, scripts and templates for ${topic} work.`,
          'Steps.',
        )
      ).statusCode;
      expect(status).toBe(201);
      // Used by agents: budgets keep the most loaded skills.
      expect((await ctx.app.inject(`/skills/${name}/content`)).statusCode).toBe(200);
    }
    const body = 'Build one slide per sheet: BOARD-DECK-INSTRUCTIONS.';
    expect(
      (await publish(target, 'Turn quarterly spreadsheets into a board presentation deck.', body)).statusCode,
    ).toBe(201);
    await ctx.app.registry.repositories.loads.flush();
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('Anthropic: a request whose skill is not listed ends in search_skills, then load_skill', async () => {
    const model = await startModel('/v1/messages', anthropicTurn, anthropicReply);
    try {
      const answer = await runAnthropicAgent({
        question: QUESTION,
        registryUrl,
        budget: 400,
        client: new Anthropic({ apiKey: 'test', baseURL: model.baseUrl, maxRetries: 0 }),
      });
      expect(model.systems[0]).not.toContain(target);
      expect(model.systems[0]).toContain('search_skills');
      expect(model.calls.map((call) => call.tool)).toEqual(['search_skills', 'load_skill']);
      expect(model.calls[1]!.input).toEqual({ name: target });
      expect(answer).toContain('BOARD-DECK-INSTRUCTIONS');
    } finally {
      await model.close();
    }
  });

  it('OpenAI: the same with mode=search, whatever fits', async () => {
    const model = await startModel('/chat/completions', openAiTurn, openAiReply);
    try {
      const answer = await runOpenAiAgent({
        question: QUESTION,
        registryUrl,
        budget: 400,
        mode: 'search',
        client: new OpenAI({ apiKey: 'test', baseURL: model.baseUrl, maxRetries: 0 }),
      });
      expect(model.systems[0]).not.toContain(target);
      expect(model.calls.map((call) => call.tool)).toEqual(['search_skills', 'load_skill']);
      expect(model.calls[1]!.input).toEqual({ name: target });
      expect(answer).toContain('BOARD-DECK-INSTRUCTIONS');
    } finally {
      await model.close();
    }
  });

  it('loads a listed skill directly when one fits, without searching', async () => {
    const model = await startModel('/v1/messages', anthropicTurn, anthropicReply);
    try {
      await runAnthropicAgent({
        question: 'Help with kubernetes rollouts: step-by-step checks for the rollout work.',
        registryUrl,
        budget: 400,
        client: new Anthropic({ apiKey: 'test', baseURL: model.baseUrl, maxRetries: 0 }),
      });
      expect(model.calls.map((call) => call.tool)).toEqual(['load_skill']);
    } finally {
      await model.close();
    }
  });
});
