import { z } from 'zod';
import { AUDIT_ACTIONS } from '../domain/audit-actions.js';
import { namespacePatternProblem } from '../domain/scope.js';
import { scanSchema } from './skills.js';

/** Tokens, the audit log, the quarantine and rescans, signing keys, usage. */

export const SCOPES = ['read', 'publish', 'admin'] as const;

const tokenNamespaces = z
  .array(z.string())
  .nullable()
  .describe('Namespaces the token may act in (exact names or a trailing *); null: every namespace');

export const tokenSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  namespaces: tokenNamespaces,
  prefix: z.string().describe('First characters of the secret, to tell tokens apart'),
  createdBy: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
});

export const tokenListSchema = z.object({ items: z.array(tokenSummarySchema) });

/** POST /tokens. */
export const createTokenBodySchema = z.object({
  name: z.string().trim().min(1).max(100).describe('What the token is for, e.g. ci-main'),
  scopes: z.array(z.enum(SCOPES)).min(1).describe('read, publish and/or admin'),
  namespaces: z
    .array(
      z
        .string()
        .max(65)
        .superRefine((pattern, context) => {
          const problem = namespacePatternProblem(pattern);
          if (problem) context.addIssue({ code: 'custom', message: problem });
        }),
    )
    .min(1)
    .max(100)
    .optional()
    .describe(
      'Limit the token to these namespaces: exact names or a prefix ending in *, e.g. ["data", "data-*"]. Writes elsewhere are refused (403), and with SKILLREG_READ_AUTH=true reads too. Omitted: every namespace',
    ),
  expiresInDays: z.number().int().min(1).max(3650).optional().describe('Lifetime; no expiry when omitted'),
});

export const createdTokenSchema = tokenSummarySchema.extend({
  secret: z.string().describe('The bearer token; shown only now'),
});

/** GET /auth/whoami. */
export const whoAmISchema = z.object({
  name: z
    .string()
    .describe("The token's name; 'admin-token' for the bootstrap token of SKILLREG_ADMIN_TOKEN"),
  actor: z.string().describe('How the audit log names what this token does, e.g. token:ci-main'),
  kind: z
    .enum(['token', 'bootstrap'])
    .describe('token: created with POST /tokens; bootstrap: the admin token set in SKILLREG_ADMIN_TOKEN'),
  id: z.string().nullable().describe('The token id (as in GET /tokens); null for the bootstrap token'),
  scopes: z.array(z.enum(SCOPES)),
  namespaces: tokenNamespaces,
  expiresAt: z.string().nullable().describe('null: never expires'),
});

export const auditEntrySchema = z.object({
  id: z.number().int().describe('Increases with every entry'),
  at: z.string().describe('When the write committed (ISO 8601)'),
  actor: z.string().describe('Who: `token:<name>` or `admin-token` (SKILLREG_ADMIN_TOKEN)'),
  action: z.string().describe(`What: ${AUDIT_ACTIONS.join(', ')}`),
  namespace: z
    .string()
    .nullable()
    .describe('The namespace written to (skill writes, namespace and view changes); null for token changes'),
  skill: z.string().nullable().describe('The skill changed; null for token changes'),
  version: z.string().nullable().describe('The version published, tagged or yanked'),
  detail: z
    .record(z.string(), z.unknown())
    .describe('What changed (digest, tag and previous version, token id...)'),
});

export const auditPageSchema = z.object({
  items: z.array(auditEntrySchema),
  nextCursor: z
    .string()
    .nullable()
    .describe('Pass as cursor= for the next (older) page; null on the last page'),
});

export const QUARANTINE_STATES = ['held', 'rejected'] as const;

export const quarantinedSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  version: z.string(),
  digest: z.string(),
  publishedBy: z.string(),
  createdAt: z.string(),
  state: z.enum(QUARANTINE_STATES),
  scan: scanSchema.nullable(),
});

export const quarantineListSchema = z.object({ items: z.array(quarantinedSchema) });

export const rescanReportSchema = z.object({
  rules: z.string().describe('The rules version every verdict was reached with'),
  scanned: z.number().int().describe('Versions scanned (every servable one, yanked ones included)'),
  verdicts: z.object({ pass: z.number().int(), warn: z.number().int(), block: z.number().int() }),
  changed: z.number().int().describe('Versions whose stored scan changed (verdict, findings or rules)'),
  quarantined: z
    .array(
      z.object({ namespace: z.string(), name: z.string(), version: z.string(), findings: z.number().int() }),
    )
    .describe('Versions the rescan put in quarantine (the first 1,000)'),
  quarantinedCount: z.number().int(),
});

export const signingKeySchema = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().describe('base64url of the 32-byte public key'),
  kid: z.string().describe('RFC 7638 thumbprint'),
  use: z.literal('sig'),
  alg: z.literal('EdDSA'),
});

/** GET /.well-known/skillreg/keys.json. */
export const signingKeysSchema = z.object({ keys: z.array(signingKeySchema) });

const usageCounts = {
  loads: z
    .number()
    .int()
    .describe('Layer-2 loads: bodies over HTTP, SKILL.md over MCP, load_skill, vendor APIs'),
  files: z.number().int().describe('Reads of bundled files other than SKILL.md'),
  downloads: z.number().int().describe('Bundle downloads (the discovery index links them too)'),
};

export const usageDaySchema = z.object({ date: z.string(), ...usageCounts });

export const skillUsageSchema = z
  .object({
    name: z.string(),
    namespace: z.string().describe('The namespace the skill resolves to in the scope read'),
    from: z.string().describe('First day of the window (UTC, YYYY-MM-DD)'),
    to: z.string().describe('Last day of the window: today (UTC)'),
    totals: z.object(usageCounts),
    days: z.array(usageDaySchema).describe('Every day of the window, oldest first, zeros included'),
    versions: z
      .array(z.object({ version: z.string(), ...usageCounts }))
      .describe('Versions used in the window'),
  })
  .describe('Usage of one skill per day');

export const usageEntrySchema = z.object({
  name: z.string(),
  namespace: z.string(),
  version: z.string().describe('The current (latest) version'),
  ...usageCounts,
  lastLoadedAt: z.string().nullable().describe('The last load ever recorded, inside the window or not'),
});

/** Skills listed as never loaded, at most: the count says how many there are in all. */
export const NEVER_LOADED_LIMIT = 1_000;

export const scopeUsageSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    days: z.number().int(),
    top: z.array(usageEntrySchema).describe('The most loaded current skills, then the most read'),
    used: z.number().int().describe('How many current skills were used at all in the window'),
    neverLoaded: z
      .array(usageEntrySchema)
      .describe(`Current skills no agent loaded in the window, by name (at most ${NEVER_LOADED_LIMIT})`),
    neverLoadedCount: z.number().int(),
  })
  .describe('Usage of a scope: top skills and those never loaded');
