import { type CatalogueState, viewChangeKey } from '../cache/catalogue-state.js';
import { coversNamespace, DEFAULT_NAMESPACE } from '../domain/scope.js';
import type { Finding } from '../scan/index.js';
import {
  type DescriptionTerms,
  descriptionSimilarity,
  descriptionTerms,
  lookupWords,
  NEAR_DUPLICATE_THRESHOLD,
  namesEachOther,
} from '../search/near-duplicate.js';
import type { StoredView } from '../storage/views-repository.js';
import type { SkillSearchService } from './skill-search.js';

/**
 * Shadowing (CONTRACT.md "Trusted publishing and shadowing"): a publish whose description is a
 * near-duplicate of another servable skill's, in its namespace or in any namespace a view layers with
 * it, gets a low finding naming that skill, since agents pick between the two by their descriptions.
 * It never blocks.
 *
 * Cheap at any catalogue size: the candidates are the first matches of a literal search (the words as
 * written, nothing related or corrected) by the description in each of those namespaces (the in-memory
 * index every search uses, which holds exactly what `latest` serves: no quarantined, rejected or wholly
 * yanked skill), their descriptions read in one statement, and only they are compared
 * (src/search/near-duplicate.ts).
 */

export const SHADOWING_RULE = 'shadowing/near-duplicate';

/** Findings one publish gets at most: the closest skills, which are the ones worth rewording against. */
export const MAX_SHADOWING_FINDINGS = 5;

/**
 * Skills of each namespace compared with the description: the first matches of a search by its
 * LOOKUP_WORDS longest content words. A rewording keeps most of the other's rare words, which is what
 * ranks a skill first; a search by a whole description would read the long postings of its common
 * words too, and cost several times as much in a large catalogue.
 */
const CANDIDATES_PER_NAMESPACE = 10;
const LOOKUP_WORDS = 8;

/** What a publish is compared as: the skill's name and description. */
export interface ShadowingSubject {
  name: string;
  description: string;
}

/** A skill the subject's description is a near-duplicate of. */
export interface ShadowedSkill {
  namespace: string;
  name: string;
  /** The first view (by name) that layers the two namespaces; none within one namespace. */
  view?: string;
  similarity: number;
}

export interface ShadowingOptions {
  /** Every view, as stored (ViewsRepository.list): a handful of rows. */
  views: () => Promise<StoredView[]>;
  /**
   * What this process knows of the catalogue: with it the views are read once and again only after a
   * view edit (every edit bumps the revision and says which view), not at every publish.
   */
  state?: CatalogueState;
  /** Told when a check fails (the publish goes on without its findings). */
  onError?: (error: unknown) => void;
}

export class ShadowingService {
  /** The views as last read, and the generation they were read in (see allViews). */
  private held: { views: StoredView[]; generation: number } | undefined;
  private generation = 0;

  constructor(
    private readonly search: SkillSearchService,
    private readonly options: ShadowingOptions,
  ) {
    // A view edit, or a change whose key is unknown (a gap found by reading the row), may have
    // changed any view: the next check reads them again.
    options.state?.onChange((event) => {
      if (event.skill === undefined || event.skill.startsWith(viewChangeKey(''))) this.generation += 1;
    });
  }

  /**
   * The findings of a publish of `subject`: one per servable skill its description is a
   * near-duplicate of, closest first, at most MAX_SHADOWING_FINDINGS. Advisory: should the check
   * itself fail, the publish goes on without them. `readable`: the namespaces the publisher may read
   * (a limited token's patterns, when reads need a token); a finding never names a skill elsewhere.
   */
  async findings(
    namespace: string | undefined,
    subject: ShadowingSubject,
    readable?: readonly string[],
  ): Promise<Finding[]> {
    try {
      return (await this.shadowed(namespace, subject, readable))
        .slice(0, MAX_SHADOWING_FINDINGS)
        .map(findingOf);
    } catch (error) {
      this.options.onError?.(error);
      return [];
    }
  }

  /** The skills `subject`, published into `namespace`, is a near-duplicate of, closest first. */
  async shadowed(
    namespace: string | undefined,
    subject: ShadowingSubject,
    readable?: readonly string[],
  ): Promise<ShadowedSkill[]> {
    const own = namespace ?? DEFAULT_NAMESPACE;
    const terms = descriptionTerms(subject.description);
    if (terms.total === 0) return [];
    const words = lookupWords(subject.description, LOOKUP_WORDS);
    const query = words.length > 0 ? words.join(' ') : subject.description;
    const found = (
      await Promise.all(
        [...(await this.neighbours(own))]
          .filter(([layer]) => layer === own || coversNamespace(readable, layer))
          .map(([layer, view]) => this.inNamespace(subject, terms, query, layer, view)),
      )
    ).flat();
    return found
      .filter((skill) => !(skill.namespace === own && skill.name === subject.name))
      .sort(
        (a, b) => b.similarity - a.similarity || compare(a.namespace, b.namespace) || compare(a.name, b.name),
      );
  }

  /**
   * The namespaces whose skills a publish into `namespace` is compared with: itself, and every layer
   * of a view that holds it, each with the first such view by name.
   */
  private async neighbours(namespace: string): Promise<Map<string, string | undefined>> {
    const neighbours = new Map<string, string | undefined>([[namespace, undefined]]);
    for (const view of await this.allViews()) {
      if (!view.layers.includes(namespace)) continue;
      for (const layer of view.layers) if (!neighbours.has(layer)) neighbours.set(layer, view.name);
    }
    return neighbours;
  }

  /** Every view, by name: from memory while no view was edited since it was read. */
  private async allViews(): Promise<StoredView[]> {
    const { state } = this.options;
    if (!state) return sortedViews(await this.options.views());
    // Off the change feed this reads the revision row, which shows any edit made meanwhile.
    await state.current();
    if (this.held && this.held.generation === this.generation) return this.held.views;
    const generation = this.generation;
    const views = sortedViews(await this.options.views());
    this.held = { views, generation };
    return views;
  }

  /** The near-duplicates of `subject` among the first matches of its description in `namespace`. */
  private async inNamespace(
    subject: ShadowingSubject,
    terms: DescriptionTerms,
    query: string,
    namespace: string,
    view: string | undefined,
  ): Promise<ShadowedSkill[]> {
    // One more than wanted: the subject's own earlier version may be among them.
    const items = await this.search.literalMatches(namespace, query, CANDIDATES_PER_NAMESPACE + 1);
    const found: ShadowedSkill[] = [];
    for (const item of items) {
      const similarity = descriptionSimilarity(terms, descriptionTerms(item.description));
      if (similarity < NEAR_DUPLICATE_THRESHOLD) continue;
      if (namesEachOther(subject, item)) continue;
      found.push({ namespace, name: item.name, similarity, ...(view === undefined ? {} : { view }) });
    }
    return found;
  }
}

function findingOf(skill: ShadowedSkill): Finding {
  const where = `namespace '${skill.namespace}'${skill.view === undefined ? '' : ` (view '${skill.view}')`}`;
  return {
    rule: SHADOWING_RULE,
    severity: 'low',
    path: 'SKILL.md',
    line: 0,
    detail: `the description is a near-duplicate of '${skill.name}' in ${where} (similarity ${skill.similarity.toFixed(2)}): agents may pick the wrong one; describe what sets this skill apart`,
  };
}

function sortedViews(views: StoredView[]): StoredView[] {
  return views.sort((a, b) => compare(a.name, b.name));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
