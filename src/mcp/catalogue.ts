import type { Scope } from '../namespaces.js';
import type { SkillReadService } from '../services/skill-reads.js';
import type { CatalogueItem } from '../storage/catalogue-repository.js';

export const SKILL_MD = 'SKILL.md';
/** Catalogue entries read per page (the catalogue's largest page). */
export const PAGE = 500;

/**
 * Catalogue items from `cursor` on, a page at a time, until `wanted` are read; the cursor of the rest
 * when there is more. A cursor this registry did not issue is a 400 (a tool error, or invalid params).
 */
export async function catalogue(
  reads: SkillReadService,
  scope: Scope,
  query: { q?: string; tag?: string; cursor?: string },
  wanted: number,
): Promise<{ items: CatalogueItem[]; nextCursor?: string }> {
  const items: CatalogueItem[] = [];
  let cursor = query.cursor || undefined;
  do {
    const page = await reads.catalogueItems(scope, {
      q: query.q?.trim() || undefined,
      tag: query.tag?.trim() || undefined,
      limit: Math.min(PAGE, wanted - items.length),
      cursor,
    });
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && items.length < wanted);
  return cursor === undefined ? { items } : { items, nextCursor: cursor };
}
