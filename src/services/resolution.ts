import { measured, type ReadCache } from '../cache/read-cache.js';
import { NotFoundError } from '../domain/app-errors.js';
import { layersOf, type Scope, skillKey } from '../domain/scope.js';
import { LATEST, type VersionRecord, type VersionSelector } from '../storage/records.js';
import type { SkillsRepository } from '../storage/skills-repository.js';
import { missingTag, unknownSkill, unknownVersion } from './not-found.js';

/** A selector resolved to one stored version, at the catalogue revision the read saw. */
export interface Resolved {
  /** The namespace the version is in (in a view: the layer it resolved from). */
  namespace: string;
  record: VersionRecord;
  selector: VersionSelector;
  revision: number;
}

/** What one namespace holds for a name and selector: the version, or whether the skill exists at all. */
type Servable = { record: VersionRecord } | { exists: boolean };

/**
 * The one resolution every reader uses: which stored version a (scope, name, selector) means. In a
 * namespace, that namespace's skill; in a view, the last layer holding a servable version for the
 * selector (a skill every version of which is yanked in a higher layer, or that lacks the tag asked
 * for there, falls back to the next lower layer). An exact version is the highest layer holding it.
 *
 * What each namespace holds for a name is kept per skill (misses too), so resolving through a view of
 * three layers costs no query once warm, and a write to the skill in any layer is seen at once.
 */
/**
 * How an exact version is looked up: `immutable` keeps it as the version it is (cached for good);
 * `with-yank` reads its yank flag as it is now.
 */
type ExactVersions = { exact: 'immutable' | 'with-yank' };

export class SkillResolver {
  constructor(
    private readonly skills: SkillsRepository,
    private readonly cache: ReadCache,
  ) {}

  /** Resolves a selector to one stored version, or throws a 404 that says what exists. */
  async resolve(scope: Scope, name: string, selector: VersionSelector = {}): Promise<Resolved> {
    return this.resolveIn(scope, name, selector, { exact: 'immutable' });
  }

  /**
   * Like resolve, with the exact version's yank flag as it is now (resolve keeps exact versions as
   * immutable, which they are but for that flag): for faces that tell a reader a version is yanked.
   */
  async resolveWithYank(scope: Scope, name: string, selector: VersionSelector = {}): Promise<Resolved> {
    return this.resolveIn(scope, name, selector, { exact: 'with-yank' });
  }

  /**
   * In a view, the lower layers whose own version for the selector the resolved one hides, highest
   * first; empty in a namespace.
   */
  async shadowed(scope: Scope, resolved: Resolved): Promise<{ namespace: string; version: string }[]> {
    if (scope.kind === 'namespace') return [];
    const layers = layersOf(scope);
    const shadows: { namespace: string; version: string }[] = [];
    for (let at = layers.lastIndexOf(resolved.namespace) - 1; at >= 0; at--) {
      const found = await this.servable(
        layers[at]!,
        resolved.record.name,
        resolved.selector,
        resolved.revision,
        { exact: 'with-yank' },
      );
      if ('record' in found) shadows.push({ namespace: layers[at]!, version: found.record.version });
    }
    return shadows;
  }

  private async resolveIn(
    scope: Scope,
    name: string,
    selector: VersionSelector,
    how: ExactVersions,
  ): Promise<Resolved> {
    const revision = await this.cache.revision();
    const layers = layersOf(scope);
    let holder: string | undefined;
    for (let at = layers.length - 1; at >= 0; at--) {
      const namespace = layers[at]!;
      const found = await this.servable(namespace, name, selector, revision, how);
      if ('record' in found) return { namespace, record: found.record, selector, revision };
      holder ??= found.exists ? namespace : undefined;
    }
    if (holder === undefined) throw await unknownSkill(name, this.skills, layers);
    throw await this.notServable(holder, name, selector);
  }

  private async servable(
    namespace: string,
    name: string,
    selector: VersionSelector,
    at: number,
    how: ExactVersions,
  ): Promise<Servable> {
    const key = skillKey(namespace, name);
    if (selector.version !== undefined && how.exact === 'immutable') {
      // An exact version's content never changes (nor its yank flag, for content reads), but a rescan
      // may put it in quarantine: the copy serves while no write to the skill came after it.
      const held = this.cache.peekImmutable<HeldVersion>(versionKey(key, selector.version));
      if (held && this.cache.state.isFresh(key, held.at)) return { record: held.record };
    }
    const entry =
      selector.version !== undefined ? `find|v|${selector.version}` : `find|t|${selector.tag ?? LATEST}`;
    return this.cache.perSkill(key, entry, at, async () => {
      const skillId = await this.skills.idOf(name, namespace);
      if (skillId === undefined) return measured<Servable>({ exists: false });
      const record =
        selector.version !== undefined
          ? await this.skills.versionByNumber(skillId, selector.version)
          : await this.skills.versionByTag(skillId, selector.tag ?? LATEST);
      return measured<Servable>(record ? { record: this.heldOnce(key, record, at) } : { exists: true });
    });
  }

  /** The 404 for a skill `namespace` holds that has nothing for the selector: what it has instead. */
  private async notServable(namespace: string, name: string, selector: VersionSelector): Promise<Error> {
    const skillId = await this.skills.idOf(name, namespace);
    if (skillId === undefined) return unknownSkill(name, this.skills, [namespace]);
    const rows = await this.skills.versionRows(skillId);
    if (rows.length > 0 && rows.every((row) => row.quarantine !== null)) {
      return new NotFoundError(
        `skill '${name}' has no version that may be served: every version it has is in quarantine (the security scan blocked it). An admin reviews them with GET /quarantine`,
        { name, quarantined: rows.length },
      );
    }
    if (selector.version !== undefined) {
      const versions = rows.filter((row) => row.quarantine === null).map((row) => row.version);
      return unknownVersion(name, selector.version, versions);
    }
    const tags = (await this.skills.tagRows(skillId)).map((row) => row.tag);
    return missingTag(name, selector.tag ?? LATEST, tags);
  }

  /**
   * The record already held under its exact version when there is one (one copy of a body in memory
   * however many tags point at it), and otherwise this one, kept under its exact version too.
   */
  private heldOnce(key: string, record: VersionRecord, at: number): VersionRecord {
    const exact = versionKey(key, record.version);
    const held = this.cache.peekImmutable<HeldVersion>(exact);
    // A yank since the copy was kept replaces it (the flag is the one thing of a version that changes).
    const same =
      held?.record.id === record.id && held.record.yankedAt?.getTime() === record.yankedAt?.getTime();
    const kept = same ? held.record : record;
    if (!same || held.at < at) this.cache.keepImmutable(exact, { record: kept, at });
    return kept;
  }
}

/** An exact version's record as kept, with the catalogue revision it was last confirmed servable at. */
interface HeldVersion {
  record: VersionRecord;
  at: number;
}

function versionKey(skill: string, version: string): string {
  return `version|${skill}|${version}`;
}
