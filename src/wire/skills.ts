import { z } from 'zod';
import { withoutNul } from './text.js';

/** Skills and their versions: the catalogue, one version's metadata and content, and the writes. */

export const tokenCountsSchema = z.object({
  description: z.number().int().describe('Tokens one catalogue entry of this skill costs (o200k_base)'),
  body: z.number().int().describe('Tokens of the SKILL.md body (o200k_base)'),
});

const searchFieldWords = z.array(z.string());

/** Why a search result matched (src/services/skill-search.ts describeMatch). */
export const searchMatchSchema = z
  .object({
    score: z.number().describe('Relevance (BM25F); comparable within one search only'),
    why: z
      .string()
      .describe(
        'The request words found in each field, spellings read as another word and related words, as one line',
      ),
    fields: z
      .object({
        name: searchFieldWords.optional(),
        description: searchFieldWords.optional(),
        headings: searchFieldWords.optional(),
        body: searchFieldWords.optional(),
      })
      .describe('The request words found in each field of the skill'),
    corrected: z
      .array(z.object({ word: z.string(), as: z.string() }))
      .describe('Words of the request the registry did not know, and the known spelling searched instead'),
    related: z
      .array(z.object({ word: z.string(), as: z.string() }))
      .describe(
        "Phrases of the request and the skill's words the registry relates them to (look over → review), which count less than the request's own words",
      ),
    learned: z
      .array(z.string())
      .describe('Words of the request after which agents loaded this skill before (a learned boost)'),
  })
  .describe('Why this skill matched the search');

/**
 * The version's identity. Named `digest` wherever a version is described; the discovery index's
 * `digest` is another thing (an archive's bytes), so the two say which they are.
 */
export const versionDigest = z
  .string()
  .describe(
    "sha256:<hex> over the version's files in canonical form (paths sorted, each path, size and bytes): the same whatever the upload or download format; not the hash of any archive (a bundle download gives its archive's in Repr-Digest, the discovery index as its entries' digest)",
  );

const SCAN_VERDICTS = ['pass', 'warn', 'block'] as const;

/** What listings say of a version's security scan (GET /skills/{name} has the findings). */
export const scanVerdictSchema = z
  .object({ verdict: z.enum(SCAN_VERDICTS) })
  .nullable()
  .describe(
    "The version's security scan verdict: pass, or warn (published and flagged; GET /skills/{name} lists the findings); null for a version stored before scanning, until POST /admin/rescan",
  );

/** The publish-time scan of a version (src/scan). */
export const scanSchema = z
  .object({
    verdict: z.enum(SCAN_VERDICTS),
    rules: z.string().describe('The rules version the verdict was reached with'),
    findings: z.array(
      z.object({
        rule: z.string(),
        severity: z.enum(['low', 'medium', 'high', 'critical']),
        path: z.string(),
        line: z.number().int().describe('1-based; 0 for the whole file'),
        detail: z.string(),
      }),
    ),
    release: z
      .object({
        by: z
          .enum(['review', 'rule'])
          .describe(
            'review: an admin released this version; rule: it has the same blocking findings (rule, file, matched text) as a version an admin released',
          ),
        version: z.string().describe('The version the admin released'),
        actor: z.string().describe('Who released it'),
        reason: z.string(),
        at: z.string(),
      })
      .optional()
      .describe('Present on a blocking verdict that is served anyway, saying whose release it rests on'),
  })
  .describe('The security scan: pass, warn (published and flagged) or block (refused)');

export const catalogueItemSchema = z.object({
  name: z.string(),
  description: z.string(),
  version: z.string(),
  tags: z.array(z.string()).describe('Dist-tags pointing at this version'),
  digest: versionDigest,
  updatedAt: z.string().describe('When this version became the one the tag points at'),
  tokens: tokenCountsSchema,
  match: searchMatchSchema.optional().describe('With q: why the skill matched, items being best first'),
  namespace: z.string().optional().describe('In a view: the layer (namespace) the skill resolves to'),
  scan: scanVerdictSchema,
});

export const catalogueResponseSchema = z.object({
  items: z.array(catalogueItemSchema),
  nextCursor: z.string().nullable(),
});

export const fileEntrySchema = z.object({
  path: z.string(),
  size: z.number().int(),
  digest: z.string().describe('sha256:<hex> of the file bytes'),
});

export const versionSummarySchema = z.object({
  version: z.string(),
  digest: versionDigest,
  createdAt: z.string(),
  yanked: z.boolean(),
  tags: z.array(z.string()),
});

export const versionsResponseSchema = z.array(versionSummarySchema);

/** What the `skills` CLI writes to skills-lock.json for the installed folder (src/bundle/skills-lock-hash.ts). */
export const computedHashSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .describe(
    "The `computedHash` the public `skills` CLI writes to skills-lock.json for this version once installed: hex SHA-256 over each installed file's path and bytes, in path order (SKILL.md as installers get it)",
  );

export const skillDetailSchema = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  digest: versionDigest,
  frontmatter: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  yanked: z.boolean(),
  tokens: tokenCountsSchema,
  size: z.number().int().describe('Total bytes of all files'),
  files: z.array(fileEntrySchema),
  distTags: z.record(z.string(), z.string()),
  versions: z.array(versionSummarySchema),
  namespace: z.string().optional().describe('The namespace this skill is in'),
  resolvedFrom: z
    .string()
    .optional()
    .describe('In a view: the layer the name resolved from (the last layer with a servable version)'),
  shadows: z
    .array(z.object({ namespace: z.string(), version: z.string() }))
    .optional()
    .describe('In a view: lower layers whose own version of the name this one hides, highest first'),
  scan: scanSchema
    .nullable()
    .optional()
    .describe('The security scan at publish; null for versions stored before scanning'),
  computedHash: computedHashSchema,
});

export const contentJsonSchema = z.object({
  name: z.string(),
  version: z.string(),
  digest: versionDigest,
  frontmatter: z.record(z.string(), z.unknown()),
  body: z.string(),
  files: z.array(fileEntrySchema),
});

/** GET /skills/{name}/content: the body as text, or with format=json the document above. */
export const contentResponseSchema = z
  .union([z.string().describe('text/markdown or application/xml'), contentJsonSchema])
  .describe('The body in the requested format');

/** A DSSE envelope (src/provenance/dsse.ts). */
export const dsseEnvelopeSchema = z.object({
  payloadType: z.string().describe('application/vnd.in-toto+json'),
  payload: z.string().describe('base64 of the in-toto Statement v1 JSON'),
  signatures: z.array(
    z.object({
      keyid: z.string().describe('The kid of the key in /.well-known/skillreg/keys.json'),
      sig: z.string().describe('base64 Ed25519 signature over the DSSE pre-authentication encoding'),
    }),
  ),
});

export const issueSchema = z.object({ path: z.string(), detail: z.string() });

export const publishResultSchema = z.object({
  name: z.string(),
  version: z.string(),
  digest: versionDigest,
  created: z.boolean().describe('false when identical content was already published'),
  warnings: z.array(issueSchema),
  scan: scanSchema,
});

/** PUT /skills/{name}/tags/{tag}. */
export const tagMoveBodySchema = z.object({
  version: withoutNul(z.string().min(1).max(256)).describe('The version the tag should point at'),
});

export const tagMoveResultSchema = z.object({
  name: z.string(),
  tag: z.string(),
  version: z.string(),
  previous: z.string().nullable(),
});

export const yankResultSchema = z.object({
  name: z.string(),
  version: z.string(),
  yanked: z.literal(true),
  alreadyYanked: z.boolean(),
  latest: z.string().nullable().describe('The version latest points at now'),
});

const REVIEW_DECISIONS = ['release', 'reject'] as const;

/** POST /skills/{name}/versions/{version}/review. */
export const reviewBodySchema = z.object({
  decision: z.enum(REVIEW_DECISIONS),
  reason: z.string().trim().min(1).max(2000).describe('Why: kept in the audit log'),
});

export const reviewResultSchema = z.object({
  name: z.string(),
  version: z.string(),
  decision: z.enum(REVIEW_DECISIONS),
  quarantine: z.enum(['rejected']).nullable().describe('null: released'),
  latest: z.string().nullable().describe('The version latest points at now'),
});
