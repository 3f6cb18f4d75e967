import { isModelInvocable } from '../render/prompt.js';

/**
 * Who may see a skill, following Claude Code's flags, for every face alike. Model-facing lists (the
 * prompt, tools, MCP list_skills) leave out `disable-model-invocation: true`: only a person may start
 * such a skill (loading it by its exact name still works: a person asked for it). Lists people pick
 * from (MCP resources) keep those and leave out `user-invocable: false` (model-only background skills).
 */
export { isModelInvocable };

export function userInvocable(frontmatter: Record<string, unknown>): boolean {
  return !isFalse(frontmatter['user-invocable']);
}

function isFalse(value: unknown): boolean {
  return value === false || (typeof value === 'string' && value.trim().toLowerCase() === 'false');
}
