/**
 * A minimal agent loop on the OpenAI Chat Completions API that uses the skill registry:
 *   npx tsx examples/openai-agent.ts "your question"
 * Environment: SKILLREG_URL (http://127.0.0.1:3000), SKILLREG_TOKEN (only with read auth),
 * OPENAI_API_KEY, OPENAI_BASE_URL (optional, any compatible server), OPENAI_MODEL (gpt-5.4-mini).
 */
import OpenAI from 'openai';
import { fetchPrompt, fetchTools, isMain, promptSettings, runSkillTool } from './registry-tools.js';

const DEFAULT_MODEL = 'gpt-5.4-mini';
const SYSTEM = 'You are a helpful assistant. Answer concisely.';

export interface RunAgentOptions {
  question: string;
  registryUrl: string;
  registryToken?: string;
  /** GET /prompt?budget= and mode= (see Registry in registry-tools.ts). */
  budget?: number;
  mode?: 'list' | 'search';
  client: OpenAI;
  model?: string;
  /** Model calls at most before giving up. */
  maxTurns?: number;
  /** Progress lines (each tool call). */
  log?: (line: string) => void;
}

export async function runAgent(options: RunAgentOptions): Promise<string> {
  const { question, client, model = DEFAULT_MODEL, maxTurns = 10, log } = options;
  const registry = {
    url: options.registryUrl,
    token: options.registryToken,
    budget: options.budget,
    mode: options.mode,
  };

  // Layer 1: the catalogue goes into the one system message; the tools let the model load more.
  const [fragment, tools] = await Promise.all([
    fetchPrompt(registry),
    fetchTools<OpenAI.Chat.ChatCompletionTool>(registry, 'openai'),
  ]);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: `${SYSTEM}\n\n${fragment}` },
    { role: 'user', content: question },
  ];

  for (let turn = 0; turn < maxTurns; turn++) {
    const completion = await client.chat.completions.create({ model, messages, tools });
    const message = completion.choices[0]?.message;
    if (!message) throw new Error('the model answered no choice');
    messages.push(message);

    const calls = (message.tool_calls ?? []).filter((call) => call.type === 'function');
    if (calls.length === 0) return message.content ?? '';

    // Layers 2 and 3: load_skill answers the SKILL.md body, read_skill_file one bundled file.
    for (const call of calls) {
      log?.(`-> ${call.function.name} ${call.function.arguments}`);
      let input: unknown;
      try {
        input = JSON.parse(call.function.arguments);
      } catch {
        input = undefined;
      }
      const result =
        input === undefined
          ? { content: 'Error: the arguments are not valid JSON' }
          : await runSkillTool(registry, call.function.name, input);
      messages.push({ role: 'tool', tool_call_id: call.id, content: result.content });
    }
  }
  throw new Error(`no final answer after ${maxTurns} model calls`);
}

async function main(): Promise<void> {
  const question = process.argv.slice(2).join(' ').trim();
  if (!question) {
    console.error('usage: npx tsx examples/openai-agent.ts "your question"');
    process.exitCode = 2;
    return;
  }
  const answer = await runAgent({
    question,
    registryUrl: process.env.SKILLREG_URL ?? 'http://127.0.0.1:3000',
    registryToken: process.env.SKILLREG_TOKEN,
    ...promptSettings(process.env),
    client: new OpenAI(), // reads OPENAI_API_KEY and OPENAI_BASE_URL
    model: process.env.OPENAI_MODEL || undefined,
    log: (line) => console.error(line),
  });
  console.log(answer);
}

if (isMain(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
