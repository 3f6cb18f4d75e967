/**
 * The agent loops in examples/ against the real registry and a scripted fake model that speaks just
 * enough of the Anthropic Messages API and the OpenAI Chat Completions API, recording what the SDKs send.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent as runAnthropicAgent } from '../../examples/anthropic-agent.js';
import { runAgent as runOpenAiAgent } from '../../examples/openai-agent.js';
import { runSkillTool } from '../../examples/registry-tools.js';
import { files, publish, skillMd, uniqueName } from '../helpers/bundles.js';
import { createTestApp, type TestApp } from '../helpers/context.js';
import { listening } from '../helpers/http.js';

interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are inspected loosely
  body: any;
}

interface FakeModel {
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Answers POST `path` with the scripted responses in order, recording every request. */
async function startFakeModel(path: string, script: readonly object[]): Promise<FakeModel> {
  const requests: RecordedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: text ? JSON.parse(text) : undefined,
      });
      const next =
        request.method === 'POST' && request.url === path ? script[requests.length - 1] : undefined;
      const status = next ? 200 : request.url === path ? 500 : 404;
      const payload = next ?? {
        error: { type: 'fake_model', message: `no scripted answer for ${request.url}` },
      };
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(payload));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

// ---- scripted answers, typed by the SDKs so the fake stays faithful ----------------------------

function anthropicMessage(
  content: Anthropic.ContentBlock[],
  stopReason: Anthropic.StopReason,
  index: number,
): Anthropic.Message {
  return {
    id: `msg_fake_${index}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: {
      input_tokens: 100,
      output_tokens: 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: null,
      inference_geo: null,
      output_tokens_details: null,
      server_tool_use: null,
      service_tier: 'standard',
      speed: null,
    },
  };
}

function anthropicToolUse(id: string, name: string, input: Record<string, unknown>): Anthropic.ToolUseBlock {
  return { type: 'tool_use', id, name, input, caller: { type: 'direct' } };
}

function anthropicText(text: string): Anthropic.TextBlock {
  return { type: 'text', text, citations: null };
}

function openAiCompletion(
  message: OpenAI.Chat.ChatCompletionMessage,
  finishReason: OpenAI.Chat.ChatCompletion.Choice['finish_reason'],
  index: number,
): OpenAI.Chat.ChatCompletion {
  return {
    id: `chatcmpl-fake-${index}`,
    object: 'chat.completion',
    created: 1_700_000_000 + index,
    model: 'gpt-test',
    choices: [{ index: 0, finish_reason: finishReason, logprobs: null, message }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  };
}

function openAiToolCall(id: string, name: string, args: unknown): OpenAI.Chat.ChatCompletionMessageToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}

// ---- the registry ------------------------------------------------------------------------------

const QUESTION = 'How do I file an expense report?';
const FINAL_ANSWER = 'Fill in the form from references/form.md and send it to finance.';
const FILE_PATH = 'references/form.md';
const FILE_TEXT = '# Expense form\n\n| field | value |\n| --- | --- |\n| amount | ... |\n\nÜnïcödé ✓\n';

let ctx: TestApp;
let registryUrl: string;
let skillName: string;

beforeAll(async () => {
  ctx = await createTestApp();
  skillName = uniqueName('expenses');
  const body = `# Expenses\n\nTo file an expense report, read ${FILE_PATH} and follow it step by step.\n`;
  const res = await publish(
    ctx.app,
    files({
      'SKILL.md': skillMd({
        name: skillName,
        description: 'Filing expense reports. Use for any expense question.',
        body,
      }),
      [FILE_PATH]: FILE_TEXT,
    }),
  );
  expect(res.statusCode).toBe(201);
  registryUrl = await listening(ctx.app);
});
afterAll(async () => ctx?.close());

/** What the registry answers the loop's own requests with (same origin, so the same links). */
async function registryText(path: string): Promise<string> {
  const response = await fetch(`${registryUrl}${path}`);
  expect(response.status).toBe(200);
  return response.text();
}

describe('examples/anthropic-agent.ts', () => {
  it('puts the fragment in one system prompt, loads layer 2 and 3 through the tools, and answers', async () => {
    const model = await startFakeModel('/v1/messages', [
      anthropicMessage(
        [
          anthropicText('Let me load the skill.'),
          anthropicToolUse('toolu_01', 'load_skill', { name: skillName }),
        ],
        'tool_use',
        1,
      ),
      anthropicMessage(
        [anthropicToolUse('toolu_02', 'read_skill_file', { name: skillName, path: FILE_PATH })],
        'tool_use',
        2,
      ),
      anthropicMessage([anthropicText(FINAL_ANSWER)], 'end_turn', 3),
    ]);
    try {
      const client = new Anthropic({ apiKey: 'test-anthropic-key', baseURL: model.baseUrl, maxRetries: 0 });
      const answer = await runAnthropicAgent({
        question: QUESTION,
        registryUrl,
        client,
        model: 'claude-test',
      });
      expect(answer).toBe(FINAL_ANSWER);

      const [first, second, third, ...rest] = model.requests;
      expect(rest).toEqual([]);
      expect(first?.headers['x-api-key']).toBe('test-anthropic-key');

      // One system prompt, a string, carrying the fragment with the skill.
      const fragment = await registryText('/prompt');
      expect(fragment).toContain('<available_skills>');
      expect(typeof first?.body.system).toBe('string');
      expect(first?.body.system).toContain(fragment);
      expect(first?.body.system).toContain(`<name>${skillName}</name>`);
      expect(first?.body.messages).toEqual([{ role: 'user', content: QUESTION }]);

      // Exactly the /tools definitions, the skill in load_skill's enum.
      const tools = JSON.parse(await registryText('/tools?provider=anthropic'));
      expect(first?.body.tools).toEqual(tools);
      expect(first?.body.tools.map((tool: { name: string }) => tool.name)).toEqual([
        'load_skill',
        'read_skill_file',
        'search_skills',
      ]);
      expect(first?.body.tools[0].input_schema.properties.name.enum).toContain(skillName);

      // load_skill answered with the body (layer 2), after echoing the assistant turn.
      const body = await registryText(`/skills/${skillName}/content`);
      expect(body).toContain(`read ${FILE_PATH}`);
      expect(body).not.toContain('description:');
      expect(second?.body.messages).toHaveLength(3);
      expect(second?.body.messages[1]).toEqual({
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me load the skill.', citations: null },
          {
            type: 'tool_use',
            id: 'toolu_01',
            name: 'load_skill',
            input: { name: skillName },
            caller: { type: 'direct' },
          },
        ],
      });
      expect(second?.body.messages[2]).toEqual({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: body }],
      });
      expect(second?.body.system).toBe(first?.body.system);

      // read_skill_file answered with the file (layer 3).
      expect(third?.body.messages).toHaveLength(5);
      expect(third?.body.messages[4]).toEqual({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_02', content: FILE_TEXT }],
      });
    } finally {
      await model.close();
    }
  });
});

describe('examples/openai-agent.ts', () => {
  it('puts the fragment in one system message, loads layer 2 and 3 through the tools, and answers', async () => {
    const model = await startFakeModel('/v1/chat/completions', [
      openAiCompletion(
        {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [openAiToolCall('call_1', 'load_skill', { name: skillName, version: null })],
        },
        'tool_calls',
        1,
      ),
      openAiCompletion(
        {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [openAiToolCall('call_2', 'read_skill_file', { name: skillName, path: FILE_PATH })],
        },
        'tool_calls',
        2,
      ),
      openAiCompletion({ role: 'assistant', content: FINAL_ANSWER, refusal: null }, 'stop', 3),
    ]);
    try {
      const client = new OpenAI({ apiKey: 'test-openai-key', baseURL: `${model.baseUrl}/v1`, maxRetries: 0 });
      const answer = await runOpenAiAgent({ question: QUESTION, registryUrl, client, model: 'gpt-test' });
      expect(answer).toBe(FINAL_ANSWER);

      const [first, second, third, ...rest] = model.requests;
      expect(rest).toEqual([]);
      expect(first?.headers.authorization).toBe('Bearer test-openai-key');

      // Exactly one system message, first, carrying the fragment with the skill.
      const fragment = await registryText('/prompt');
      const messages = first?.body.messages as { role: string; content: unknown }[];
      expect(messages.filter((message) => message.role === 'system')).toHaveLength(1);
      expect(messages.map((message) => message.role)).toEqual(['system', 'user']);
      expect(messages[0]?.content).toContain(fragment);
      expect(messages[0]?.content).toContain(`<name>${skillName}</name>`);
      expect(messages[1]).toEqual({ role: 'user', content: QUESTION });

      // Exactly the /tools definitions (strict), the skill in load_skill's enum.
      const tools = JSON.parse(await registryText('/tools?provider=openai'));
      expect(first?.body.tools).toEqual(tools);
      expect(first?.body.tools[0].function.name).toBe('load_skill');
      expect(first?.body.tools[0].function.parameters.properties.name.enum).toContain(skillName);

      // load_skill (version: null, as strict mode sends it) answered with the body (layer 2).
      const body = await registryText(`/skills/${skillName}/content`);
      expect(second?.body.messages).toHaveLength(4);
      expect(second?.body.messages[2]).toMatchObject({
        role: 'assistant',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'load_skill' } }],
      });
      expect(second?.body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: body });

      // read_skill_file answered with the file (layer 3).
      expect(third?.body.messages).toHaveLength(6);
      expect(third?.body.messages[5]).toEqual({ role: 'tool', tool_call_id: 'call_2', content: FILE_TEXT });
      expect(
        third?.body.messages.filter((message: { role: string }) => message.role === 'system'),
      ).toHaveLength(1);
    } finally {
      await model.close();
    }
  });
});

describe('examples/registry-tools.ts', () => {
  it('runs search_skills through GET /search, one line per result', async () => {
    const registry = { url: registryUrl };
    const other = uniqueName('receipts');
    const res = await publish(
      ctx.app,
      files({
        'SKILL.md': skillMd({
          name: other,
          description: 'Scanning receipts.',
          body: '# Receipts\n\nAttach them to the expense report.\n',
        }),
      }),
    );
    expect(res.statusCode).toBe(201);
    const query = 'help me file an expense report';
    const found = await runSkillTool(registry, 'search_skills', { query });
    expect(found.isError).toBe(false);
    const { results } = JSON.parse(await registryText(`/search?q=${encodeURIComponent(query)}`)) as {
      results: { name: string; description: string; why: string }[];
    };
    expect(results.map((result) => result.name).slice(0, 2)).toEqual([skillName, other]);
    expect(found.content.split('\n')).toEqual(
      results.map((result) => `${result.name} — ${result.description} (${result.why})`),
    );
    expect(found.content.split('\n')[0]).toMatch(
      new RegExp(
        `^${skillName} — Filing expense reports\\. Use for any expense question\\. \\(.*expense.*\\)$`,
      ),
    );
    // OpenAI's strict mode sends limit: null for the default; a number limits.
    expect(await runSkillTool(registry, 'search_skills', { query, limit: null })).toEqual(found);
    const one = await runSkillTool(registry, 'search_skills', { query, limit: 1 });
    expect(one.content.split('\n')).toHaveLength(1);
    expect(one.content.startsWith(`${skillName} — `)).toBe(true);

    const none = await runSkillTool(registry, 'search_skills', { query: 'qqqqzzzzxxxxvvvvwwww' });
    expect(none).toEqual({ content: expect.stringMatching(/^No skill matches/), isError: false });
    const empty = await runSkillTool(registry, 'search_skills', { query: '  ' });
    expect(empty).toEqual({ content: expect.stringContaining('the search query is empty'), isError: true });
    expect(await runSkillTool(registry, 'search_skills', {})).toEqual({
      content: 'Error: `query` must be a string',
      isError: true,
    });
  });

  it('turns registry errors into tool errors the model can read', async () => {
    const registry = { url: registryUrl };
    const missingFile = await runSkillTool(registry, 'read_skill_file', { name: skillName, path: 'nope.md' });
    expect(missingFile.isError).toBe(true);
    expect(missingFile.content).toMatch(/^Error: .*nope\.md/);
    const unknownSkill = await runSkillTool(registry, 'load_skill', { name: `${skillName}-missing` });
    expect(unknownSkill).toMatchObject({ isError: true });
    expect(await runSkillTool(registry, 'expenses', { name: skillName })).toEqual({
      content: 'Error: unknown tool expenses',
      isError: true,
    });
  });
});
