import { digestEtag, revisionEtag } from '../cache/etags.js';
import type { ReadCache, Sized } from '../cache/read-cache.js';
import type { ResponseValidity } from '../cache/response-cache.js';
import { type Scope, scopeKey, skillKey, splitSkillKey } from '../domain/scope.js';
import type { CachedBody } from '../render/response-bodies.js';
import type { Answer, AnswerBody } from './answers.js';
import type { Resolved } from './resolution.js';

/**
 * What a read depends on. One choice fixes the read cache's tier, the revision the ETag names and how
 * long the response cache may repeat the answer, so the three cannot disagree.
 */
export type ReadBasis =
  /**
   * An exact version's representation: it never changes. Kept by the version's `id`; the ETag names
   * `digest` (the version's, or a file's: the bytes sent).
   */
  | { kind: 'version'; id: string; digest: string }
  /**
   * One skill's current state (dist-tags, the version list, yank flags): stale after a write to it.
   * `at` is the catalogue revision read before the read; the ETag names the namespace's revision.
   */
  | { kind: 'skill'; skill: string; at: number }
  /** What a scope shows (listings, searches, renderings): true while the scope's revision stays. */
  | { kind: 'scope'; scope: Scope }
  /** Every namespace at once (the lists of namespaces and views): true until the next write anywhere. */
  | { kind: 'catalogue' };

/** One read, described once: its ETag, its cache key and its validity are all derived from this. */
export interface ReadDescription {
  /** What the representation is (skills, search, detail, content...): reads of one basis stay apart by it. */
  read: string;
  on: ReadBasis;
  /**
   * Everything in the request that shapes the bytes. For a version's read these are the ETag's
   * variant, joined by dots (a rendering, an archive format).
   */
  shape?: readonly unknown[];
  /**
   * For a version's read reached through a selector (latest, a tag): the answer stays true only while
   * the selector means this version. Absent: an exact version, true forever.
   */
  through?: { scope: Scope; resolved: Resolved };
}

/** What a face sends for a described read (see CachedRead.answer). */
export interface AnswerSpec {
  contentType: string;
  /** The bytes, kept in the read cache under the read's key. */
  render?: () => Promise<CachedBody>;
  /** Or the payload as it is, not kept (already in memory, or never the same twice). */
  payload?: () => Promise<Buffer | string>;
  /** Or the whole body, for headers known only once it is built (an archive's own hash). */
  body?: () => Promise<AnswerBody>;
  headers?: Record<string, string>;
  onBody?: (client: string) => void;
  /** Cache-Control immutable. Default: a version's read reached by exact version (or no selector). */
  immutable?: boolean;
  /** Never repeated by the response cache (the request carries something unbounded, e.g. arguments). */
  unrepeatable?: boolean;
}

/** A read pinned at the revision it was asked at. */
export interface CachedRead {
  readonly etag: string;
  readonly validity: ResponseValidity;
  /** The revision the ETag names (0 for a version's read). */
  readonly revision: number;
  /** The value, from the read cache tier the basis implies, computed once per key and revision. */
  value<T>(compute: () => Promise<Sized<T>>): Promise<T>;
  /** The read as a face's Answer: these validators, the body only when sent. */
  answer(spec: AnswerSpec): Answer;
  /**
   * For a scope's renderings ordered by recorded loads (a budgeted prompt drops the least loaded):
   * the value (ReadCache.byLoads) and its ETag, which names the loads revision it was rendered at
   * when `usedLoads` says the loads decided anything.
   */
  byLoads<T>(
    compute: () => Promise<Sized<T>>,
    usedLoads: (value: T) => boolean,
  ): Promise<{ value: T; etag: string }>;
}

/**
 * How long an answer read through `resolved` stays true: forever for an exact version; else until a
 * write to the skill, or in a view until anything in its layers changes (another layer may win).
 */
function selectionValidity(cache: ReadCache, scope: Scope, resolved: Resolved): ResponseValidity {
  if (resolved.selector.version !== undefined) return { kind: 'immutable' };
  if (scope.kind === 'view') return { kind: 'scope', scope, revision: cache.state.scopeRevision(scope) };
  return {
    kind: 'skill',
    skill: skillKey(resolved.namespace, resolved.record.name),
    revision: resolved.revision,
  };
}

/**
 * The one caching protocol of every read (REST, MCP, the discovery index, the agent renderings): a
 * read says what it depends on (ReadDescription) and gets its ETag, cache key and validity from it.
 */
export class CachedReads {
  constructor(readonly cache: ReadCache) {}

  /** The read as of now: the revision it depends on is read once, and everything follows from it. */
  async of(description: ReadDescription): Promise<CachedRead> {
    const { on } = description;
    const shape = description.shape ?? [];
    const cache = this.cache;
    const tail = JSON.stringify(shape);
    let revision = 0;
    // Derived when first asked for: value-only reads (a listing page, a stored file) never hash one.
    let etagOf: () => string;
    let validity: ResponseValidity;
    let value: <T>(compute: () => Promise<Sized<T>>) => Promise<T>;
    let byLoads: CachedRead['byLoads'] = () => {
      throw new Error(`the read ${description.read} does not depend on a scope: loads cannot order it`);
    };
    switch (on.kind) {
      case 'version': {
        etagOf = () => digestEtag(on.digest, shape.join('.'));
        const { through } = description;
        validity = through
          ? selectionValidity(cache, through.scope, through.resolved)
          : { kind: 'immutable' };
        const key = `${description.read}|${on.id}|${tail}`;
        value = (compute) => cache.immutable(key, compute);
        break;
      }
      case 'skill': {
        const { namespace } = splitSkillKey(on.skill);
        // A write elsewhere in the namespace changes its revision, not this skill: the ETag may go, the
        // kept entry stays (it is stale only after a write to the skill itself).
        revision = cache.state.scopeRevision({ kind: 'namespace', namespace });
        etagOf = () => revisionEtag(revision, description.read, on.skill, ...shape);
        validity = { kind: 'skill', skill: on.skill, revision: on.at };
        const key = `${description.read}|${tail}`;
        value = (compute) => cache.perSkill(on.skill, key, on.at, compute);
        break;
      }
      case 'scope': {
        revision = await cache.scopeRevision(on.scope);
        const where = scopeKey(on.scope);
        etagOf = () => revisionEtag(revision, description.read, where, ...shape);
        validity = { kind: 'scope', scope: on.scope, revision };
        const key = `${description.read}|${where}|${tail}`;
        value = (compute) => cache.catalogueWide(key, revision, compute);
        byLoads = async (compute, usedLoads) => {
          const { loadsRevision } = await cache.current();
          const kept = await cache.byLoads(key, revision, loadsRevision, compute);
          const loads = usedLoads(kept.value) ? String(kept.loadsRevision) : 'all-fit';
          return {
            value: kept.value,
            etag: revisionEtag(revision, description.read, where, ...shape, loads),
          };
        };
        break;
      }
      case 'catalogue': {
        revision = await cache.revision();
        etagOf = () => revisionEtag(revision, description.read, ...shape);
        validity = { kind: 'catalogue', revision };
        const key = `${description.read}||${tail}`;
        value = (compute) => cache.catalogueWide(key, revision, compute);
        break;
      }
    }
    const immutableByDefault =
      on.kind === 'version' &&
      (description.through === undefined || description.through.resolved.selector.version !== undefined);
    return new PinnedRead(description, etagOf, validity, revision, value, byLoads, immutableByDefault);
  }
}

/**
 * A read pinned at its revision. A class rather than an object literal with a getter: on Node 20
 * whatever such a literal refers to outlives scavenges until the next full collection (see
 * measured() in src/cache/read-cache.ts and docs/PERFORMANCE.md).
 */
class PinnedRead implements CachedRead {
  private pinnedEtag: string | undefined;

  constructor(
    private readonly description: ReadDescription,
    private readonly etagOf: () => string,
    readonly validity: ResponseValidity,
    readonly revision: number,
    readonly value: <T>(compute: () => Promise<Sized<T>>) => Promise<T>,
    readonly byLoads: CachedRead['byLoads'],
    private readonly immutableByDefault: boolean,
  ) {}

  get etag(): string {
    this.pinnedEtag ??= this.etagOf();
    return this.pinnedEtag;
  }

  answer(spec: AnswerSpec): Answer {
    const { description, value, validity } = this;
    const headers = spec.headers;
    const sent = (payload: Buffer | string): AnswerBody => (headers ? { payload, headers } : { payload });
    return {
      etag: this.etag,
      immutable: spec.immutable ?? this.immutableByDefault,
      contentType: spec.contentType,
      ...(spec.unrepeatable ? {} : { validity }),
      ...(spec.onBody ? { onBody: spec.onBody } : {}),
      body: async () => {
        if (spec.body) return spec.body();
        if (spec.payload) return sent(await spec.payload());
        if (!spec.render) throw new Error(`the read ${description.read} has neither render nor payload`);
        return sent(await value(spec.render));
      },
    };
  }
}
