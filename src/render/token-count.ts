import { countTokens as countO200k } from 'gpt-tokenizer';

/**
 * Token counts use OpenAI's o200k_base BPE (gpt-tokenizer, pure JS, no network). Claude's tokenizer
 * is not public; o200k is the closest widely used modern vocabulary, so budgets are estimates that
 * err by a few percent rather than the ~25% of a characters/4 rule.
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

export function countTokens(text: string): number {
  // Skill text may legitimately contain strings such as "<|endoftext|>"; count them as text.
  return countO200k(text, PLAIN_TEXT);
}

/** The layer-1 cost of a skill: what one catalogue entry adds to a system prompt. */
export function countCatalogueEntryTokens(name: string, description: string): number {
  return countTokens(`<skill>\n<name>${name}</name>\n<description>${description}</description>\n</skill>\n`);
}
