import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  customType,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { OidcPublisher } from '../wire/types.js';

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
});

/**
 * Where skills live: a skill is identified by (namespace, name). `default` always exists (the
 * unprefixed API); the others are made by their first publish. `revision` is the catalogue revision of
 * the last write into the namespace, so readers of one namespace are not invalidated by another's.
 */
export const namespaces = pgTable('namespaces', {
  name: text('name').primaryKey(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  revision: bigint('revision', { mode: 'number' }).notNull().default(0),
});

/**
 * A named, ordered overlay of namespaces, read-only: for each skill name the last layer holding a
 * servable version wins. `revision` is the catalogue revision of the view's last edit.
 */
export const views = pgTable('views', {
  name: text('name').primaryKey(),
  layers: text('layers').array().notNull(),
  description: text('description'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  revision: bigint('revision', { mode: 'number' }).notNull().default(0),
});

/** One row per skill; its identity is the namespace and the frontmatter name. */
export const skills = pgTable(
  'skills',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    namespace: text('namespace')
      .notNull()
      .default('default')
      .references(() => namespaces.name),
    name: text('name').notNull(),
    /** The vendor APIs' display name (Anthropic `display_name`); null: the name is shown. */
    displayName: text('display_name'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    /** When an agent last loaded the body (layer 2); budgets keep the most loaded, then most recent. */
    lastLoadedAt: timestamp('last_loaded_at', { withTimezone: true }),
    loadCount: bigint('load_count', { mode: 'number' }).notNull().default(0),
    /**
     * The catalogue revision of the last write to this skill (publish, tag move, yank), and the loads
     * revision of the last flush that recorded a load of it: in-memory copies of the agent catalogue
     * read only the skills changed since the revisions they hold (src/cache/agent-catalogue.ts).
     */
    changedRevision: bigint('changed_revision', { mode: 'number' }).notNull().default(0),
    loadedRevision: bigint('loaded_revision', { mode: 'number' }).notNull().default(0),
  },
  (table) => [
    uniqueIndex('skills_namespace_name_unique').on(table.namespace, table.name),
    index('skills_changed_revision_idx').on(table.changedRevision),
    index('skills_loaded_revision_idx').on(table.loadedRevision),
  ],
);

/** Immutable published versions. Only yanked_at ever changes after insert. */
export const skillVersions = pgTable(
  'skill_versions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    version: text('version').notNull(),
    digest: text('digest').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull(),
    frontmatter: jsonb('frontmatter').notNull().$type<Record<string, unknown>>(),
    body: text('body').notNull(),
    skillMdSize: integer('skill_md_size').notNull(),
    totalSize: bigint('total_size', { mode: 'number' }).notNull(),
    fileCount: integer('file_count').notNull(),
    tokensDescription: integer('tokens_description').notNull(),
    tokensBody: integer('tokens_body').notNull(),
    /**
     * o200k counts of this version's own parts of a /prompt entry (render/prompt.ts promptEntryTokens),
     * so renderings never tokenize them; null for versions stored before they existed, or a name
     * whose entry is counted whole. Markdown is -1 when the description is blank.
     */
    tokensPromptXml: integer('tokens_prompt_xml'),
    tokensPromptMarkdown: integer('tokens_prompt_markdown'),
    tokensPromptName: integer('tokens_prompt_name'),
    warnings: jsonb('warnings').notNull().$type<{ path: string; detail: string }[]>().default([]),
    publishedBy: text('published_by').notNull(),
    /**
     * The CI identity of a version published with a token from POST /oidc/exchange (trusted
     * publishing), as its attestation names it; null for any other token.
     */
    publisher: jsonb('publisher').$type<OidcPublisher>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    yankedAt: timestamp('yanked_at', { withTimezone: true }),
    /**
     * The version's searchable terms, counted per field (src/search/document.ts encodeTerms), so the
     * in-memory search index is built without analysing bodies; null for versions stored before it
     * existed (filled when the index first reads them).
     */
    searchTerms: text('search_terms'),
    /**
     * What hosts see of the version once installed (src/services/installed-versions.ts): the hash the
     * `skills` CLI writes to skills-lock.json, and the git tree and commit of its folder as served
     * (src/git). Null for versions stored before they existed, until the start-up backfill fills them.
     */
    computedHash: text('computed_hash'),
    gitTree: text('git_tree'),
    gitCommit: text('git_commit'),
    /**
     * The publish-time scan (src/scan): verdict, rules version and findings; null for versions stored
     * before scanning existed (a rescan fills it).
     */
    scan: jsonb('scan').$type<{ verdict: string; rules: string; findings: unknown[] }>(),
    /** The scan's verdict alone, kept by the database, for listings that name it and not the findings. */
    scanVerdict: text('scan_verdict').generatedAlwaysAs(sql`scan ->> 'verdict'`),
    /**
     * `held` while the scan's block keeps the version in quarantine (stored for review, never served,
     * no tag on it), `rejected` once an admin rejected it; null for a servable version.
     */
    quarantine: text('quarantine'),
  },
  (table) => [
    uniqueIndex('skill_versions_skill_version_unique').on(table.skillId, table.version),
    index('skill_versions_skill_digest_idx').on(table.skillId, table.digest),
    index('skill_versions_name_trgm_idx').using('gin', sql`${table.name} gin_trgm_ops`),
    index('skill_versions_quarantine_idx')
      .on(table.quarantine, table.createdAt)
      .where(sql`${table.quarantine} is not null`),
    // What the start-up checks look for (src/server.ts): versions stored before a release computed
    // these at publish. Every version published since enters neither index, so each is empty once
    // filled and a replica's start finds that without reading the catalogue.
    index('skill_versions_without_identity_idx').on(table.id).where(sql`${table.gitCommit} is null`),
    index('skill_versions_without_prompt_tokens_idx')
      .on(table.id)
      .where(sql`${table.tokensPromptName} is null`),
  ],
);

/** File contents, stored once by sha256 whatever the number of versions that hold them. */
export const blobs = pgTable('blobs', {
  digest: text('digest').primaryKey(),
  size: bigint('size', { mode: 'number' }).notNull(),
  content: bytea('content').notNull(),
});

/** Which files a version holds, by path. */
export const versionFiles = pgTable(
  'version_files',
  {
    versionId: uuid('version_id')
      .notNull()
      .references(() => skillVersions.id, { onDelete: 'cascade' }),
    path: text('path').notNull(),
    blobDigest: text('blob_digest')
      .notNull()
      .references(() => blobs.digest),
    size: bigint('size', { mode: 'number' }).notNull(),
    mode: integer('mode').notNull().default(0o644),
  },
  (table) => [primaryKey({ columns: [table.versionId, table.path] })],
);

/**
 * Archives served for a version, built once and kept: the discovery index publishes their sha256,
 * so every replica must serve the very same bytes (compressors may differ between machines).
 */
export const versionArchives = pgTable(
  'version_archives',
  {
    versionId: uuid('version_id')
      .notNull()
      .references(() => skillVersions.id, { onDelete: 'cascade' }),
    format: text('format').notNull(),
    blobDigest: text('blob_digest')
      .notNull()
      .references(() => blobs.digest),
  },
  (table) => [primaryKey({ columns: [table.versionId, table.format] })],
);

/** npm-style dist-tags. `latest` follows the highest non-yanked version unless pinned by hand. */
export const distTags = pgTable(
  'dist_tags',
  {
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    tag: text('tag').notNull(),
    versionId: uuid('version_id')
      .notNull()
      .references(() => skillVersions.id, { onDelete: 'cascade' }),
    /** Set when a person moved the tag; an automatic `latest` is recomputed on every publish and yank. */
    pinned: boolean('pinned').notNull().default(false),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.skillId, table.tag] }),
    index('dist_tags_tag_idx').on(table.tag),
    // The tags of a version (catalogue rows aggregate them) and "is this version current under a tag"
    // (search joins from matching versions): both start from the version.
    index('dist_tags_version_tag_idx').on(table.versionId, table.tag),
  ],
);

/** Bearer tokens; only a sha256 of the secret is stored. */
export const tokens = pgTable('tokens', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  scopes: text('scopes').array().notNull(),
  /** Namespaces the token may act in (exact names or a trailing `*`); null: every namespace. */
  namespaces: text('namespaces').array(),
  secretHash: text('secret_hash').notNull().unique(),
  /** First characters of the secret, shown in listings so people can tell tokens apart. */
  prefix: text('prefix').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  expiresAt: timestamp('expires_at', { withTimezone: true }),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
  /** The CI identity a token exchanged for an OIDC ID token stands for (POST /oidc/exchange); else null. */
  publisher: jsonb('publisher').$type<OidcPublisher>(),
});

/**
 * Trusted publishing: a namespace bound to a CI identity. An ID token from `issuer` whose claims equal
 * every one of `claims` may be exchanged for a short-lived publish token for the namespace.
 */
export const trustedPublishers = pgTable(
  'trusted_publishers',
  {
    namespace: text('namespace').notNull(),
    id: text('id').notNull(),
    issuer: text('issuer').notNull(),
    claims: jsonb('claims').notNull().$type<Record<string, string>>(),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.namespace, table.id] }),
    index('trusted_publishers_issuer_idx').on(table.issuer),
  ],
);

/**
 * Usage per skill, version and UTC day: layer-2 loads (every face), bundled-file reads and bundle
 * downloads, written in batches by the load recorder and kept SKILLREG_USAGE_DAYS days.
 */
export const skillUsage = pgTable(
  'skill_usage',
  {
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    version: text('version').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    loads: bigint('loads', { mode: 'number' }).notNull().default(0),
    files: bigint('files', { mode: 'number' }).notNull().default(0),
    downloads: bigint('downloads', { mode: 'number' }).notNull().default(0),
  },
  // Windows are read per skill (a skill's chart) and per day (top skills, pruning).
  (table) => [
    primaryKey({ columns: [table.skillId, table.day, table.version] }),
    index('skill_usage_day_idx').on(table.day),
  ],
);

/** Every write: who did what, when. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    /** The namespace the write went to (skill writes, namespace and view changes name theirs). */
    namespace: text('namespace'),
    skill: text('skill'),
    version: text('version'),
    detail: jsonb('detail').notNull().$type<Record<string, unknown>>().default({}),
  },
  // GET /audit pages newest first (by id) and filters by skill or actor: one index per filter keeps a
  // filtered page from scanning the whole log.
  (table) => [
    index('audit_log_at_idx').on(table.at),
    index('audit_log_skill_id_idx').on(table.skill, table.id),
    index('audit_log_actor_id_idx').on(table.actor, table.id),
  ],
);

/**
 * A single row whose revision goes up with every write that changes what readers see.
 * Listing ETags derive from it, so a poll costs one primary-key read.
 */
export const registryState = pgTable('registry_state', {
  id: integer('id').primaryKey().default(1),
  revision: bigint('revision', { mode: 'number' }).notNull().default(0),
  /**
   * Goes up each time recorded layer-2 loads are written. Loads do not change the catalogue, so they
   * leave `revision` alone; renderings ordered by recency of use (budgeted prompts) key on this too.
   */
  loadsRevision: bigint('loads_revision', { mode: 'number' }).notNull().default(0),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * What searches taught: how many times agents loaded `skill` after a search holding `term` listed it
 * (src/services/search-feedback.ts). Ranking adds a boost for these pairs; rows are few per term.
 */
export const searchFeedback = pgTable(
  'search_feedback',
  {
    term: text('term').notNull(),
    skill: text('skill').notNull(),
    loads: integer('loads').notNull().default(0),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.term, table.skill] }),
    index('search_feedback_updated_at_idx').on(table.updatedAt),
  ],
);

/**
 * The registry's Ed25519 signing keys (src/services/signing.ts). A generated key keeps its private
 * half here, so every replica signs with the same one; a key from SKILLREG_SIGNING_KEY is listed by
 * its public half only. Old keys stay (rotation), so the JWKS keeps verifying what they signed.
 */
export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  /** The public key as a JWK `x` (base64url of the 32 raw bytes). */
  publicKey: text('public_key').notNull(),
  /** PKCS#8 PEM of a generated key; null for a key from the environment. */
  privateKey: text('private_key'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** One DSSE envelope (in-toto Statement v1, Ed25519) per version: the registry's signature on it. */
export const attestations = pgTable('attestations', {
  versionId: uuid('version_id')
    .primaryKey()
    .references(() => skillVersions.id, { onDelete: 'cascade' }),
  kid: text('kid').notNull(),
  envelope: jsonb('envelope')
    .notNull()
    .$type<{ payloadType: string; payload: string; signatures: { keyid: string; sig: string }[] }>(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * How far each start-up check (src/services/startup-checks.ts) got: every skill stamped at or below
 * `revision` (skills.changed_revision) was checked by a pass that completed, so the next start reads
 * only the skills changed since, not the whole catalogue.
 */
export const startupChecks = pgTable('startup_checks', {
  name: text('name').primaryKey(),
  revision: bigint('revision', { mode: 'number' }).notNull(),
  checkedAt: timestamp('checked_at', { withTimezone: true }).notNull().defaultNow(),
});
