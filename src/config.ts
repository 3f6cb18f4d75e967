import { createPrivateKey } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { type BundleLimits, DEFAULT_LIMITS } from './bundle/types.js';
import { DEFAULT_READ_MAX_LAG_MS } from './db/read-routing.js';
import { DEFAULT_NAMESPACE, isValidNamespace } from './domain/scope.js';
import { GITHUB_ACTIONS_ISSUER } from './domain/trusted-publishing.js';
import { SCAN_BUDGET_MS, SEVERITIES, type Severity } from './scan/types.js';

/** Environment variables read by the service, with their defaults. README's configuration table mirrors this. */
const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** An empty variable (`PORT=` in a compose file or .env) means "use the default", never 0 or "". */
const unsetIfEmpty = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema);

const positiveInt = (fallback: number) => unsetIfEmpty(z.coerce.number().int().positive().default(fallback));
/** A count where 0 switches the feature off (rate limits). */
const countOrOff = (fallback: number) => unsetIfEmpty(z.coerce.number().int().min(0).default(fallback));

/**
 * Requests allowed per window; 0 turns a limit off. Counted in memory by each process, so with N
 * replicas behind a load balancer a client may get up to N times these figures.
 */
export interface RateLimits {
  /** Writes (publish, tag moves, yanks, token changes) per token, or per address without one. */
  writes: number;
  /** Reads per token or address; 0 (the default) leaves reads unlimited. */
  reads: number;
  /** Refused credentials (401 with an Authorization header) per address before it gets 429s. */
  authFailures: number;
  windowSeconds: number;
}

/** Tokens of a GET /prompt without budget=: what a system prompt can spare for the skill list. */
export const DEFAULT_PROMPT_BUDGET = 4000;
/** The largest budget a prompt may be given, by budget= or SKILLREG_PROMPT_BUDGET. */
export const MAX_PROMPT_BUDGET = 10_000_000;

export const DEFAULT_RATE_LIMITS: RateLimits = {
  writes: 600,
  reads: 0,
  authFailures: 30,
  windowSeconds: 60,
};

export interface ExternalScannerConfig {
  /** A command line; the unpacked bundle's directory is passed as its first argument. */
  command: string;
  timeoutMs: number;
  /** The severity of the `scanner-error` finding when the scanner fails or times out. */
  failSeverity: Severity;
}

function isEd25519PrivateKey(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'ed25519';
  } catch {
    return false;
  }
}

/** Why an issuer URL is refused, or undefined: https, or plain http only on a loopback host. */
export function issuerProblem(issuer: string): string | undefined {
  if (!URL.canParse(issuer)) return 'is not a URL; list issuers as https://issuer.example.com';
  const url = new URL(issuer);
  if (url.search || url.hash) return 'must not carry a query or fragment';
  if (url.protocol === 'https:') return undefined;
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) || /^127\./.test(url.hostname);
  if (url.protocol === 'http:' && loopback) return undefined;
  return 'must be an https:// URL (plain http:// is accepted only for a loopback host)';
}

const WHOLE_TOKENS = 'must be a whole number of tokens, such as 4000 (0 lists every skill)';

const envFields = z.object({
  PORT: unsetIfEmpty(z.coerce.number().int().min(0).max(65535).default(3000)),
  HOST: unsetIfEmpty(z.string().min(1).default('127.0.0.1')),
  DATABASE_URL: z
    .string()
    .optional()
    .transform((value) => (value === '' ? undefined : value))
    .refine((value) => value === undefined || /^postgres(ql)?:\/\//.test(value), {
      message:
        'must be a postgres:// or postgresql:// connection URL (leave unset for the embedded database)',
    }),
  /** A streaming standby of DATABASE_URL that serves reads (src/db/read-routing.ts). */
  DATABASE_READ_URL: z
    .string()
    .optional()
    .transform((value) => (value === '' ? undefined : value))
    .refine((value) => value === undefined || /^postgres(ql)?:\/\//.test(value), {
      message:
        'must be a postgres:// or postgresql:// connection URL of a streaming standby of DATABASE_URL (leave unset to read from DATABASE_URL)',
    }),
  /** How far the standby may trail the primary before reads bypass it. */
  DATABASE_READ_MAX_LAG_MS: unsetIfEmpty(
    z.coerce.number().int().min(1).max(3_600_000).default(DEFAULT_READ_MAX_LAG_MS),
  ),
  SKILLREG_DATA_DIR: unsetIfEmpty(z.string().min(1).default('./.data')),
  SKILLREG_ADMIN_TOKEN: z
    .string()
    .optional()
    .transform((value) => (value === '' ? undefined : value))
    .refine((value) => value === undefined || value.length >= 16, {
      message: 'must be at least 16 characters so it cannot be guessed (for example: openssl rand -hex 32)',
    }),
  SKILLREG_SEED_DIR: z.string().default('./skills-seed'),
  SKILLREG_SEED_NAMESPACE: z
    .string()
    .default(DEFAULT_NAMESPACE)
    .refine((value) => isValidNamespace(value), {
      message:
        'must be a namespace name: 1-64 lowercase letters, digits and single hyphens, not at either end (e.g. bundled)',
    }),
  SKILLREG_PUBLIC_URL: z
    .string()
    .optional()
    .transform((value) => (value === '' ? undefined : value?.replace(/\/+$/, '')))
    .refine((value) => value === undefined || (/^https?:\/\//i.test(value) && URL.canParse(value)), {
      message: 'must be an absolute http(s) URL such as https://skills.example.com',
    }),
  SKILLREG_READ_AUTH: booleanFromEnv.default(false),
  SKILLREG_OIDC_ISSUERS: z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined) return [GITHUB_ACTIONS_ISSUER];
      const issuers = value
        .split(',')
        .map((issuer) => issuer.trim().replace(/\/+$/, ''))
        .filter(Boolean);
      for (const issuer of issuers) {
        const problem = issuerProblem(issuer);
        if (problem) context.addIssue({ code: 'custom', message: `'${issuer}' ${problem}` });
      }
      return issuers;
    }),
  SKILLREG_OIDC_AUDIENCE: z
    .string()
    .optional()
    .transform((value) => (value?.trim() ? value.trim() : undefined)),
  SKILLREG_SCAN_BLOCK_SEVERITY: z
    .enum(SEVERITIES, { message: `must be one of ${SEVERITIES.join(', ')}` })
    .default('high'),
  SKILLREG_SCAN_BUDGET_MS: positiveInt(SCAN_BUDGET_MS),
  SKILLREG_SCANNER_CMD: z
    .string()
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim())),
  SKILLREG_SCANNER_TIMEOUT_MS: positiveInt(30_000),
  SKILLREG_SCANNER_FAIL: z
    .enum(SEVERITIES, { message: `must be one of ${SEVERITIES.join(', ')}` })
    .default('high'),
  SKILLREG_SIGNING_KEY: z
    .string()
    .optional()
    // Env files often carry a PEM on one line with literal \n between its lines.
    .transform((value) =>
      value === undefined || value.trim() === '' ? undefined : value.trim().replace(/\\n/g, '\n'),
    )
    .refine((value) => value === undefined || isEd25519PrivateKey(value), {
      message:
        'must be an Ed25519 private key in PEM (openssl genpkey -algorithm ed25519); leave unset to have the registry generate one and keep it in the database',
    }),
  SKILLREG_TRUST_PROXY: z
    .string()
    .default('false')
    .transform((value): boolean | number | string => {
      const trimmed = value.trim();
      if (trimmed === '' || trimmed === 'false' || trimmed === '0') return false;
      if (trimmed === 'true') return true;
      if (/^\d+$/.test(trimmed)) return Number(trimmed);
      return trimmed;
    })
    .refine((value) => typeof value !== 'string' || /^[0-9a-fA-F.:/,\s]+$/.test(value), {
      message:
        "must be true, false, a number of proxy hops, or a comma-separated list of proxy addresses/CIDRs such as '10.0.0.0/8,127.0.0.1'",
    }),
  SKILLREG_MAX_BUNDLE_BYTES: positiveInt(DEFAULT_LIMITS.maxUncompressedBytes),
  SKILLREG_MAX_FILES: positiveInt(DEFAULT_LIMITS.maxFiles),
  SKILLREG_MAX_SKILL_MD_BYTES: positiveInt(DEFAULT_LIMITS.maxSkillMdBytes),
  SKILLREG_MAX_FRONTMATTER_BYTES: positiveInt(DEFAULT_LIMITS.maxFrontmatterBytes),
  SKILLREG_RATE_LIMIT_WRITES: countOrOff(DEFAULT_RATE_LIMITS.writes),
  SKILLREG_RATE_LIMIT_READS: countOrOff(DEFAULT_RATE_LIMITS.reads),
  SKILLREG_RATE_LIMIT_AUTH_FAILURES: countOrOff(DEFAULT_RATE_LIMITS.authFailures),
  SKILLREG_RATE_LIMIT_WINDOW_SECONDS: unsetIfEmpty(
    z.coerce.number().int().min(1).max(86_400).default(DEFAULT_RATE_LIMITS.windowSeconds),
  ),
  /** Where the git faces keep the repositories they build (a folder per process is made inside). */
  SKILLREG_GIT_CACHE_DIR: z.string().optional(),
  /** Disk the built git repositories may take, in MiB, before the least recently used are removed. */
  SKILLREG_GIT_CACHE_MB: unsetIfEmpty(z.coerce.number().int().min(1).max(1_048_576).default(512)),
  /** Memory for the in-process read cache, in MiB; 0 keeps nothing (every read goes to the database). */
  SKILLREG_CACHE_MB: unsetIfEmpty(z.coerce.number().int().min(0).max(65_536).default(64)),
  /**
   * Tokens GET /prompt may take when the request names no budget; 0 lists every skill however many.
   * A catalogue past it turns the fragment search-first, so the first prompt an agent is given fits.
   */
  SKILLREG_PROMPT_BUDGET: unsetIfEmpty(
    z.coerce
      .number({ message: WHOLE_TOKENS })
      .int({ message: WHOLE_TOKENS })
      .min(0, { message: 'must be 0 (every skill, however many) or a number of tokens such as 4000' })
      .max(MAX_PROMPT_BUDGET, {
        message: `must be at most ${MAX_PROMPT_BUDGET} tokens (0 lists every skill)`,
      })
      .default(DEFAULT_PROMPT_BUDGET),
  ),
  /** Days of per-day usage kept (loads, file reads, downloads); older days are deleted. */
  SKILLREG_USAGE_DAYS: unsetIfEmpty(z.coerce.number().int().min(1).max(3_650).default(90)),
  LOG_LEVEL: unsetIfEmpty(
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
});

const envSchema = envFields.refine((values) => !(values.DATABASE_READ_URL && !values.DATABASE_URL), {
  path: ['DATABASE_READ_URL'],
  message:
    'needs DATABASE_URL: a read replica is a standby of a PostgreSQL primary, and the embedded database has none',
  // Reported with every other problem, not only once the rest is valid.
  when: () => true,
});

export interface Config {
  port: number;
  host: string;
  /** PostgreSQL connection URL; undefined selects the embedded PGlite database under dataDir. */
  databaseUrl?: string;
  /** A streaming standby of databaseUrl that serves reads (DATABASE_READ_URL); PostgreSQL only. */
  databaseReadUrl?: string;
  /** How far the standby may trail the primary, in milliseconds, before reads bypass it. */
  databaseReadMaxLagMs: number;
  dataDir: string;
  adminToken?: string;
  /** Folder of seed skills loaded at start; undefined disables seeding. */
  seedDir?: string;
  /** The namespace seeds load into (default `default`); put it first in a view to layer teams over it. */
  seedNamespace: string;
  publicUrl?: string;
  readAuth: boolean;
  /**
   * Trusted publishing: the OIDC issuers whose ID tokens POST /oidc/exchange accepts (empty: none), and
   * the audience they must name (default: the registry's public URL).
   */
  oidc: {
    issuers: string[];
    audience?: string;
    /** Least time between two fetches of an issuer's keys (default 30 s; tests rotate keys faster). */
    keyCooldownMs?: number;
  };
  /** Scan findings at or above this severity refuse a publish (src/scan). */
  scanBlockSeverity: Severity;
  /** Time the built-in rules may take on one bundle; what is left unscanned then blocks (scan/incomplete). */
  scanBudgetMs: number;
  /** An external scanner run on every unpacked bundle (SKILLREG_SCANNER_CMD), its findings merged. */
  scanner?: ExternalScannerConfig;
  /** The Ed25519 signing key (PEM) from SKILLREG_SIGNING_KEY; unset: generated once, kept in the database. */
  signingKey?: string;
  /**
   * Whether X-Forwarded-For/-Host/-Proto are believed (Fastify trustProxy). Off by default: a client could
   * otherwise pick its own address (dodging rate limits) and the host shown in links.
   */
  trustProxy: boolean | number | string;
  limits: BundleLimits;
  /** Largest request body accepted, derived from the bundle limit (archives are smaller than their content). */
  bodyLimit: number;
  rateLimits: RateLimits;
  /** Bytes the in-process read cache may hold (SKILLREG_CACHE_MB). */
  cacheBytes: number;
  /** Where built git repositories go (SKILLREG_GIT_CACHE_DIR; default the system's temporary folder) and how much disk they may take. */
  gitCache: { directory?: string; maxBytes: number };
  /** Days of per-day usage kept (SKILLREG_USAGE_DAYS). */
  usageDays: number;
  /** The budget of a GET /prompt that names none (SKILLREG_PROMPT_BUDGET); 0 means unlimited. */
  promptBudget: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the environment; throws ConfigError listing every problem at once. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const variable = issue.path.join('.');
        const value = env[variable];
        return `${variable}${value === undefined ? '' : `=${JSON.stringify(redactIfSecret(variable, value))}`}: ${issue.message}`;
      }),
    );
  }
  const values = parsed.data;
  const limits: BundleLimits = {
    maxUncompressedBytes: values.SKILLREG_MAX_BUNDLE_BYTES,
    maxFiles: values.SKILLREG_MAX_FILES,
    maxSkillMdBytes: values.SKILLREG_MAX_SKILL_MD_BYTES,
    maxFrontmatterBytes: values.SKILLREG_MAX_FRONTMATTER_BYTES,
  };
  return {
    port: values.PORT,
    host: values.HOST,
    databaseUrl: values.DATABASE_URL,
    ...(values.DATABASE_READ_URL ? { databaseReadUrl: values.DATABASE_READ_URL } : {}),
    databaseReadMaxLagMs: values.DATABASE_READ_MAX_LAG_MS,
    // memory:// keeps the embedded database in memory (throwaway demos); anything else is a folder.
    dataDir: values.SKILLREG_DATA_DIR.startsWith('memory://')
      ? values.SKILLREG_DATA_DIR
      : path.resolve(values.SKILLREG_DATA_DIR),
    adminToken: values.SKILLREG_ADMIN_TOKEN,
    seedDir: values.SKILLREG_SEED_DIR === '' ? undefined : path.resolve(values.SKILLREG_SEED_DIR),
    seedNamespace: values.SKILLREG_SEED_NAMESPACE,
    publicUrl: values.SKILLREG_PUBLIC_URL,
    readAuth: values.SKILLREG_READ_AUTH,
    oidc: {
      issuers: values.SKILLREG_OIDC_ISSUERS,
      ...(values.SKILLREG_OIDC_AUDIENCE ? { audience: values.SKILLREG_OIDC_AUDIENCE } : {}),
    },
    scanBlockSeverity: values.SKILLREG_SCAN_BLOCK_SEVERITY,
    scanBudgetMs: values.SKILLREG_SCAN_BUDGET_MS,
    scanner:
      values.SKILLREG_SCANNER_CMD === undefined
        ? undefined
        : {
            command: values.SKILLREG_SCANNER_CMD,
            timeoutMs: values.SKILLREG_SCANNER_TIMEOUT_MS,
            failSeverity: values.SKILLREG_SCANNER_FAIL,
          },
    signingKey: values.SKILLREG_SIGNING_KEY,
    trustProxy: values.SKILLREG_TRUST_PROXY,
    limits,
    // Multipart framing and base64-free binary bodies stay close to the content size; leave headroom.
    bodyLimit: limits.maxUncompressedBytes + 1024 * 1024,
    rateLimits: {
      writes: values.SKILLREG_RATE_LIMIT_WRITES,
      reads: values.SKILLREG_RATE_LIMIT_READS,
      authFailures: values.SKILLREG_RATE_LIMIT_AUTH_FAILURES,
      windowSeconds: values.SKILLREG_RATE_LIMIT_WINDOW_SECONDS,
    },
    cacheBytes: values.SKILLREG_CACHE_MB * 1024 * 1024,
    gitCache: {
      ...(values.SKILLREG_GIT_CACHE_DIR ? { directory: values.SKILLREG_GIT_CACHE_DIR } : {}),
      maxBytes: values.SKILLREG_GIT_CACHE_MB * 1024 * 1024,
    },
    usageDays: values.SKILLREG_USAGE_DAYS,
    promptBudget: values.SKILLREG_PROMPT_BUDGET,
    logLevel: values.LOG_LEVEL,
  };
}

function redactIfSecret(variable: string, value: string): string {
  return /TOKEN|PASSWORD|SECRET|DATABASE_(READ_)?URL/.test(variable) ? '<redacted>' : value;
}
