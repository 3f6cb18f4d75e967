import { type Scope, splitSkillKey } from '../domain/scope.js';

/**
 * What this process knows about the catalogue's state without asking the database: the revision
 * (bumped by every publish, tag move and yank, in the same transaction), the loads revision (bumped when
 * recorded layer-2 loads are written) and which skill each recent revision changed.
 *
 * The knowledge comes from three places: this process's own write transactions (known the moment they
 * commit), PostgreSQL NOTIFY from every replica's writes (see change-feed.ts), and reads of the
 * registry_state row. While it is `live` (the change feed is connected and was resynchronised after
 * connecting, or the database is an embedded PGlite that only this process writes) the in-memory
 * revision is current and a request costs no query. Otherwise every request reads the row: a replica
 * whose listener is down is slower, never stale.
 */
export interface StateRow {
  revision: number;
  loadsRevision: number;
  /** The catalogue revision of the last write into each namespace (absent: not read with the row). */
  namespaces?: Readonly<Record<string, number>>;
  /** The catalogue revision of each view's last edit. */
  views?: Readonly<Record<string, number>>;
}

/** The change key of a view edit (skill keys hold no `:`, so the two never meet). */
export function viewChangeKey(view: string): string {
  return `${VIEW_KEY_PREFIX}${view}`;
}

const VIEW_KEY_PREFIX = 'view:';

/** The change key of a namespace's deletion. */
export function namespaceDeletedKey(namespace: string): string {
  return `${DELETED_KEY_PREFIX}${namespace}`;
}

const DELETED_KEY_PREFIX = 'deleted:';

/** The namespace a change deleted, or undefined for any other change. */
export function deletedNamespaceOf(key: string | undefined): string | undefined {
  return key?.startsWith(DELETED_KEY_PREFIX) ? key.slice(DELETED_KEY_PREFIX.length) : undefined;
}

export interface ChangeEvent {
  revision: number;
  /**
   * What the write changed: a skill key (src/domain/scope.ts) or a view's change key; undefined when
   * unknown (a gap was found by reading the row).
   */
  skill?: string;
}

/** Beyond this many remembered per-skill revisions, forget them all and treat everything as changed. */
const MAX_REMEMBERED_SKILLS = 100_000;

export class CatalogueState {
  private known: StateRow = { revision: 0, loadsRevision: 0 };
  /** Highest revision that changed each skill, for per-skill entries. */
  private readonly skillRevisions = new Map<string, number>();
  /** Per-skill entries computed at a revision below this are stale (changes whose skill is unknown). */
  private floor = 0;
  /** The revision of the last write into each namespace, and of each view's last edit. */
  private readonly namespaceRevisions = new Map<string, number>();
  private readonly viewRevisions = new Map<string, number>();
  private isLive = false;
  /**
   * When the change feed last proved that every write committed before then had been delivered
   * (performance.now()); undefined: no lease (PGlite, whose writers are all in this process).
   */
  private confirmedAt: number | undefined;
  private leaseMs = Number.POSITIVE_INFINITY;
  private readonly listeners: ((event: ChangeEvent) => void)[] = [];

  constructor(
    private readonly readRow: () => Promise<StateRow>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Other replicas' writes are known through NOTIFY, which a loaded process or network can deliver
   * late. With a lease, memory answers only while the feed proved itself current less than `leaseMs`
   * ago (its heartbeat round trip: notifications of earlier commits arrive before the answer);
   * past that, requests read the row until the next proof. This bounds how stale a replica can be
   * (the contract's 1 s), however late a notification comes.
   */
  useLease(leaseMs: number): void {
    this.leaseMs = leaseMs;
    this.confirmedAt ??= this.now();
  }

  /** Everything committed before `at` (a performance.now() time) is known. */
  confirm(at: number): void {
    if (this.confirmedAt === undefined || at > this.confirmedAt) this.confirmedAt = at;
  }

  get live(): boolean {
    return this.isLive;
  }

  /** Marks the in-memory state as current (after a resync) or not (the change feed is down). */
  setLive(live: boolean): void {
    this.isLive = live;
  }

  /** The state as of now: from memory while live, else read from the database (and remembered). */
  async current(): Promise<StateRow> {
    if (this.isLive && (this.confirmedAt === undefined || this.now() - this.confirmedAt < this.leaseMs)) {
      return this.known;
    }
    const asked = this.now();
    this.observeRow(await this.readRow());
    // The row is as of a moment after `asked`: a proof too, so one read serves the requests after it.
    if (this.isLive) this.confirm(asked);
    return this.known;
  }

  /** The last known state, without asking anyone (metrics, tests). */
  peek(): StateRow {
    return this.known;
  }

  /** Reads the row and takes it in; used at start, after a reconnect and as the feed's heartbeat. */
  async resync(): Promise<StateRow> {
    const asked = this.now();
    this.observeRow(await this.readRow());
    this.confirm(asked);
    return this.known;
  }

  /** A committed write: from this process's transaction or another replica's NOTIFY. */
  observeChange(revision: number, skill?: string): void {
    const deleted = deletedNamespaceOf(skill);
    if (deleted !== undefined) {
      // Every skill of it went at once: no entry about any skill is trusted from before.
      this.namespaceRevisions.delete(deleted);
      if (revision > this.floor) this.floor = revision;
      this.advance(revision, skill);
      return;
    }
    if (skill?.startsWith(VIEW_KEY_PREFIX)) {
      raise(this.viewRevisions, skill.slice(VIEW_KEY_PREFIX.length), revision);
    } else if (skill) {
      raise(this.namespaceRevisions, splitSkillKey(skill).namespace, revision);
    }
    if (skill) {
      if (revision > (this.skillRevisions.get(skill) ?? 0)) this.skillRevisions.set(skill, revision);
      if (this.skillRevisions.size > MAX_REMEMBERED_SKILLS) this.forgetSkills(revision);
    } else if (revision > this.floor) {
      this.floor = revision;
    }
    this.advance(revision, skill);
  }

  observeLoads(loadsRevision: number): void {
    if (loadsRevision > this.known.loadsRevision) {
      this.known = { revision: this.known.revision, loadsRevision };
    }
  }

  /**
   * The row itself. A revision above the known one means writes were missed (the feed was down or is
   * behind): their skills are unknown, so every per-skill entry computed before is stale.
   */
  observeRow(row: StateRow): void {
    if (row.namespaces) {
      for (const [namespace, revision] of Object.entries(row.namespaces)) {
        raise(this.namespaceRevisions, namespace, revision);
      }
      // Deleted while the feed was down; one heard of after the row was read is kept.
      for (const [namespace, revision] of this.namespaceRevisions) {
        if (!(namespace in row.namespaces) && revision <= row.revision)
          this.namespaceRevisions.delete(namespace);
      }
    }
    for (const [view, revision] of Object.entries(row.views ?? {})) raise(this.viewRevisions, view, revision);
    if (row.revision > this.known.revision) {
      if (row.revision > this.floor) this.floor = row.revision;
      this.advance(row.revision, undefined);
    }
    this.observeLoads(row.loadsRevision);
  }

  /**
   * The catalogue revision of the last write into `namespace` as far as this process knows (exact
   * while live; read with the row otherwise); undefined for a namespace it has never heard of.
   */
  namespaceRevision(namespace: string): number | undefined {
    return this.namespaceRevisions.get(namespace);
  }

  /** The catalogue revision of a view's last edit (creation included); undefined when never heard of. */
  viewRevision(view: string): number | undefined {
    return this.viewRevisions.get(view);
  }

  /**
   * The revision a scope's listings are at: its namespace's last write, or for a view the latest of
   * its edit and its layers' writes. It goes up whenever anything the scope shows may have changed,
   * and not otherwise: a write elsewhere leaves it (and the scope's ETags) alone.
   */
  scopeRevision(scope: Scope): number {
    if (scope.kind === 'namespace') return this.namespaceRevisions.get(scope.namespace) ?? 0;
    let revision = this.viewRevisions.get(scope.view) ?? 0;
    for (const layer of scope.layers) revision = Math.max(revision, this.namespaceRevisions.get(layer) ?? 0);
    return revision;
  }

  /** Namespaces this process knows of, in no particular order. */
  namespaces(): IterableIterator<string> {
    return this.namespaceRevisions.keys();
  }

  /** Whether an entry about `skill`, computed when the catalogue was at `computedAt`, is still current. */
  isFresh(skill: string, computedAt: number): boolean {
    return computedAt >= this.floor && computedAt >= (this.skillRevisions.get(skill) ?? 0);
  }

  /** Called after the known revision goes up. */
  onChange(listener: (event: ChangeEvent) => void): void {
    this.listeners.push(listener);
  }

  private advance(revision: number, skill: string | undefined): void {
    if (revision <= this.known.revision) return;
    this.known = { revision, loadsRevision: this.known.loadsRevision };
    for (const listener of this.listeners) listener({ revision, skill });
  }

  private forgetSkills(revision: number): void {
    this.skillRevisions.clear();
    if (revision > this.floor) this.floor = revision;
  }
}

function raise(revisions: Map<string, number>, key: string, revision: number): void {
  if (revision > (revisions.get(key) ?? -1)) revisions.set(key, revision);
}
