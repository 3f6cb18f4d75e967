/**
 * A minimal agent loop on the Anthropic Messages API that uses the skill registry:
 *   npx tsx examples/anthropic-agent.ts "your question"
 * Environment: SKILLREG_URL (http://127.0.0.1:3000), SKILLREG_TOKEN (only with read auth),
 * ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL (optional), ANTHROPIC_MODEL (claude-sonnet-4-6).
 */
import Anthropic from '@anthropic-ai/sdk';
import { fetchPrompt, fetchTools, isMain, promptSettings, runSkillTool } from './registry-tools.js';

const DEFAULT_MODEL = 'claude-sonnet-4-6';
const SYSTEM = 'You are a helpful assistant. Answer concisely.';

export interface RunAgentOptions {
  question: string;
  registryUrl: string;
  registryToken?: string;
  /** GET /prompt?budget= and mode= (see Registry in registry-tools.ts). */
  budget?: number;
  mode?: 'list' | 'search';
  client: Anthropic;
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

  // Layer 1: the catalogue goes into the one system prompt; the tools let the model load more.
  const [fragment, tools] = await Promise.all([
    fetchPrompt(registry),
    fetchTools<Anthropic.Tool>(registry, 'anthropic'),
  ]);
  const system = `${SYSTEM}\n\n${fragment}`;
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: question }];

  for (let turn = 0; turn < maxTurns; turn++) {
    const response = await client.messages.create({ model, max_tokens: 4096, system, tools, messages });
    messages.push({ role: 'assistant', content: response.content });

    const calls = response.content.filter((block) => block.type === 'tool_use');
    if (response.stop_reason !== 'tool_use' || calls.length === 0) {
      return response.content
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join('');
    }

    // Layers 2 and 3: load_skill answers the SKILL.md body, read_skill_file one bundled file.
    const results = await Promise.all(
      calls.map(async (call): Promise<Anthropic.ToolResultBlockParam> => {
        log?.(`-> ${call.name} ${JSON.stringify(call.input)}`);
        const result = await runSkillTool(registry, call.name, call.input);
        return {
          type: 'tool_result',
          tool_use_id: call.id,
          content: result.content,
          ...(result.isError ? { is_error: true } : {}),
        };
      }),
    );
    messages.push({ role: 'user', content: results });
  }
  throw new Error(`no final answer after ${maxTurns} model calls`);
}

async function main(): Promise<void> {
  const question = process.argv.slice(2).join(' ').trim();
  if (!question) {
    console.error('usage: npx tsx examples/anthropic-agent.ts "your question"');
    process.exitCode = 2;
    return;
  }
  const answer = await runAgent({
    question,
    registryUrl: process.env.SKILLREG_URL ?? 'http://127.0.0.1:3000',
    registryToken: process.env.SKILLREG_TOKEN,
    ...promptSettings(process.env),
    client: new Anthropic(), // reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
    model: process.env.ANTHROPIC_MODEL || undefined,
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
