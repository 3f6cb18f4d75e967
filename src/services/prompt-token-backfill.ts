import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { promptEntryTokens } from '../render/prompt.js';
import type { CatalogueRepository } from '../storage/catalogue-repository.js';

/**
 * Token counts stored with each version, so that no rendering tokenizes the catalogue: the counts of
 * the version's own parts of a /prompt entry (render/prompt.ts explains the parts).
 */

/** The stored prompt entry counts of a new version (null columns when its entry is counted whole). */
export function promptTokenColumns(name: string, description: string) {
  const counts = promptEntryTokens(name, description);
  return {
    tokensPromptXml: counts?.xml ?? null,
    tokensPromptMarkdown: counts?.markdown ?? null,
    tokensPromptName: counts?.listed ?? null,
  };
}

/**
 * Stores the prompt entry counts of tagged versions that have none (stored before the counts
 * existed), `batch` at a time, giving the event loop a turn after each batch. Answers how many
 * versions got counts. Names whose entries are counted whole keep none and are not asked for again.
 */
export async function fillPromptTokens(catalogue: CatalogueRepository, batch = 100): Promise<number> {
  let filled = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows = await catalogue.versionsWithoutPromptTokens(after, batch);
    if (rows.length === 0) return filled;
    after = rows.at(-1)!.id;
    const counted = rows.flatMap((row) => {
      const counts = promptEntryTokens(row.name, row.description);
      return counts ? [{ id: row.id, ...counts }] : [];
    });
    await catalogue.storePromptTokens(counted);
    filled += counted.length;
    await yieldToEventLoop();
  }
}
