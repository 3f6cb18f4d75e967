/**
 * A typed client for the skill-registry HTTP API (`import { SkillRegistryClient } from 'skill-registry/client'`).
 * Runs on Node 20+ and in browsers (fetch only). GETs are ETag-aware: a repeated read sends If-None-Match
 * and a 304 is answered from the client's cache, so polling the catalogue costs almost nothing.
 * Requests refused for now (429, 503) or that could not connect are retried, honouring Retry-After
 * (see RetryOptions). test/client.test.ts checks every method against the service's own /openapi.json.
 */

export interface Issue {
  path: string;
  detail: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: Issue[];
  [extension: string]: unknown;
}

export interface CatalogueItem {
  name: string;
  description: string;
  version: string;
  tags: string[];
  digest: string;
  updatedAt: string;
  tokens: { description: number; body: number };
}

export interface CataloguePage {
  items: CatalogueItem[];
  nextCursor: string | null;
}

export interface FileEntry {
  path: string;
  size: number;
  digest: string;
}

export interface VersionSummary {
  version: string;
  digest: string;
  createdAt: string;
  yanked: boolean;
  tags: string[];
}

export interface SkillDetail {
  name: string;
  version: string;
  description: string;
  digest: string;
  frontmatter: Record<string, unknown>;
  createdAt: string;
  yanked: boolean;
  tokens: { description: number; body: number };
  size: number;
  files: FileEntry[];
  distTags: Record<string, string>;
  versions: VersionSummary[];
}

export interface SkillContentJson {
  name: string;
  version: string;
  digest: string;
  frontmatter: Record<string, unknown>;
  body: string;
  files: FileEntry[];
}

export interface PublishResult {
  name: string;
  version: string;
  digest: string;
  created: boolean;
  warnings: Issue[];
}

export interface TokenSummary {
  id: string;
  name: string;
  scopes: ('read' | 'publish' | 'admin')[];
  prefix: string;
  createdBy: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export interface TagMoveResult {
  name: string;
  tag: string;
  version: string;
  previous: string | null;
}

export interface YankResult {
  name: string;
  version: string;
  yanked: true;
  alreadyYanked: boolean;
  /** The version latest points at now. */
  latest: string | null;
}

export interface Selector {
  version?: string;
  tag?: string;
}

export type UploadBody =
  | { type: 'tar.gz' | 'zip'; bytes: Uint8Array }
  | { type: 'markdown'; text: string }
  | { type: 'files'; files: { path: string; bytes: Uint8Array }[] };

/** A non-2xx answer from the registry, carrying its problem document. */
export class RegistryError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.name = 'RegistryError';
  }
}

export interface ClientOptions {
  /** Base URL, e.g. http://127.0.0.1:3000 */
  url: string;
  token?: string;
  fetch?: typeof fetch;
  /** Extra headers on every request (e.g. a user agent). */
  headers?: Record<string, string>;
  /** How many GET answers to keep for revalidation (least recently used are dropped). Default 256; 0 disables. */
  cacheSize?: number;
  /** Retrying of 429, 503 and failed connections; `false` (or `{ retries: 0 }`) turns it off. */
  retry?: RetryOptions | false;
}

/**
 * What is retried, at most `retries` times after the first attempt:
 * - 429 and 503 answers, for every request: the registry answers them before changing anything
 *   ("Nothing was changed by this request"), except that a token creation is not retried on 503, as a
 *   proxy's 503 could follow a creation that happened.
 * - a connection that could not be opened (ECONNREFUSED and kin), for every request: nothing was sent.
 * - a connection lost mid-request (ECONNRESET, socket closed, timeouts), for idempotent requests only:
 *   reads, tag moves, yanks, and publishes (a publish is idempotent by content digest: the same bundle
 *   sent twice creates one version and the second answer names it).
 * The wait is the answer's Retry-After (seconds or an HTTP date) plus up to 250 ms of jitter, else a
 * capped exponential backoff with jitter. A wait that would take the request past `maxTotalWaitMs`
 * is not started: the last error is thrown at once, as it is after the last attempt.
 */
export interface RetryOptions {
  /** Retries after the first attempt. Default 3 (4 attempts in all); 0 disables retrying. */
  retries?: number;
  /** First backoff when the answer has no Retry-After, in ms, doubled each retry. Default 500. */
  baseDelayMs?: number;
  /** Cap of the backoff when the answer has no Retry-After, in ms. Default 10,000. */
  maxDelayMs?: number;
  /**
   * Most time one request may spend waiting across its retries, in ms. Default 60,000 (the registry's
   * default rate-limit window, so a Retry-After of a whole window is still waited for). A Retry-After
   * beyond what is left gives up at once.
   */
  maxTotalWaitMs?: number;
  /** Told before each wait, e.g. to show that a long job is waiting rather than stuck. */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  method: string;
  path: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Attempts in all, the first included. */
  attempts: number;
  /** How long the client waits before the next attempt, in ms. */
  delayMs: number;
  /** The HTTP status that was refused, or undefined for a network failure. */
  status?: number;
  /** Human-readable: `429 Too Many Requests`, `ECONNREFUSED`... */
  reason: string;
  /** true when the wait comes from the answer's Retry-After. */
  retryAfter: boolean;
}

export const DEFAULT_RETRY = {
  retries: 3,
  baseDelayMs: 500,
  maxDelayMs: 10_000,
  maxTotalWaitMs: 60_000,
} as const satisfies RetryOptions;

interface CachedResponse {
  etag: string;
  status: number;
  headers: [string, string][];
  body: Uint8Array;
}

/** The outcome of a GET with its validators, for callers that care whether it changed. */
export interface Fetched<T> {
  value: T;
  etag?: string;
  /** true when the server answered 304 and the cached copy was used. */
  fromCache: boolean;
  /** The answer's headers; after a 304, the cached answer's headers updated with the 304's. */
  headers: Headers;
}

const CONTENT_TYPES: Record<'tar.gz' | 'zip' | 'markdown', string> = {
  'tar.gz': 'application/gzip',
  zip: 'application/zip',
  markdown: 'text/markdown',
};

function query(params: Record<string, string | number | string[] | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

export class SkillRegistryClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;
  private readonly cache = new Map<string, CachedResponse>();
  private readonly cacheSize: number;

  constructor(private readonly options: ClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.cacheSize = options.cacheSize ?? 256;
  }

  /** Forgets every cached answer: the next reads are unconditional. */
  clearCache(): void {
    this.cache.clear();
  }

  // ---- layer 1 -------------------------------------------------------------------------------

  listSkills(params: { q?: string; tag?: string; limit?: number; cursor?: string } = {}) {
    return this.getJson<CataloguePage>(`/skills${query(params)}`);
  }

  /** Every page of the catalogue. */
  async listAllSkills(params: { q?: string; tag?: string } = {}): Promise<CatalogueItem[]> {
    const items: CatalogueItem[] = [];
    let cursor: string | undefined;
    do {
      const page = (await this.listSkills({ ...params, limit: 500, cursor })).value;
      items.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return items;
  }

  getSkill(name: string, selector: Selector = {}) {
    return this.getJson<SkillDetail>(`/skills/${encodeURIComponent(name)}${query({ ...selector })}`);
  }

  listVersions(name: string) {
    return this.getJson<VersionSummary[]>(`/skills/${encodeURIComponent(name)}/versions`);
  }

  // ---- layer 2 and 3 -------------------------------------------------------------------------

  async getContent(name: string, selector: Selector & { arguments?: string } = {}): Promise<Fetched<string>> {
    const fetched = await this.getBytes(
      `/skills/${encodeURIComponent(name)}/content${query({ ...selector })}`,
    );
    return { ...fetched, value: new TextDecoder().decode(fetched.value) };
  }

  getContentJson(name: string, selector: Selector & { arguments?: string } = {}) {
    return this.getJson<SkillContentJson>(
      `/skills/${encodeURIComponent(name)}/content${query({ ...selector, format: 'json' })}`,
    );
  }

  getFile(name: string, path: string, selector: Selector = {}) {
    return this.getBytes(
      `/skills/${encodeURIComponent(name)}/files/${encodePath(path)}${query({ ...selector })}`,
    );
  }

  getBundle(name: string, selector: Selector & { format?: 'tar.gz' | 'zip' } = {}) {
    return this.getBytes(`/skills/${encodeURIComponent(name)}/bundle${query({ ...selector })}`);
  }

  // ---- agent-facing --------------------------------------------------------------------------

  async getPrompt(
    params: { format?: 'xml' | 'markdown'; name?: string[]; tag?: string; q?: string; budget?: number } = {},
  ): Promise<Fetched<string>> {
    const fetched = await this.getBytes(`/prompt${query(params)}`);
    return { ...fetched, value: new TextDecoder().decode(fetched.value) };
  }

  getTools(params: { provider: 'anthropic' | 'openai'; name?: string[]; tag?: string; q?: string }) {
    return this.getJson<unknown[]>(`/tools${query(params)}`);
  }

  // ---- writes --------------------------------------------------------------------------------

  /**
   * Publishes a bundle. The bytes are held in memory (never a stream), so a retried attempt sends them
   * again unchanged; retrying is safe because identical content creates nothing the second time.
   */
  async publish(body: UploadBody, params: { version?: string; tag?: string; name?: string } = {}) {
    let payload: () => BodyInit;
    const headers: Record<string, string> = {};
    if (body.type === 'files') {
      const parts = body.files.map((file) => ({
        path: file.path,
        blob: new Blob([file.bytes as Uint8Array<ArrayBuffer>]),
      }));
      payload = () => {
        const form = new FormData();
        for (const part of parts) form.append('files[]', part.blob, part.path);
        return form;
      };
    } else if (body.type === 'markdown') {
      const text = body.text;
      payload = () => text;
      headers['content-type'] = CONTENT_TYPES.markdown;
    } else {
      const blob = new Blob([body.bytes as Uint8Array<ArrayBuffer>]);
      payload = () => blob;
      headers['content-type'] = CONTENT_TYPES[body.type];
    }
    const response = await this.request('POST', `/skills${query(params)}`, {
      body: payload,
      headers,
      idempotent: true,
    });
    return (await response.json()) as PublishResult;
  }

  async setTag(name: string, tag: string, version: string) {
    const response = await this.request(
      'PUT',
      `/skills/${encodeURIComponent(name)}/tags/${encodeURIComponent(tag)}`,
      { json: { version }, idempotent: true },
    );
    return (await response.json()) as TagMoveResult;
  }

  async yank(name: string, version: string) {
    const response = await this.request(
      'DELETE',
      `/skills/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`,
      { idempotent: true },
    );
    return (await response.json()) as YankResult;
  }

  async createToken(input: { name: string; scopes: TokenSummary['scopes']; expiresInDays?: number }) {
    // Not idempotent: a second attempt after a lost answer would create a second token.
    const response = await this.request('POST', '/tokens', { json: input, idempotent: false });
    return (await response.json()) as TokenSummary & { secret: string };
  }

  async listTokens() {
    const response = await this.request('GET', '/tokens', { idempotent: true });
    return ((await response.json()) as { items: TokenSummary[] }).items;
  }

  async revokeToken(id: string): Promise<void> {
    // A repeated revoke after a lost answer would say 404 for a revoke that happened.
    await this.request('DELETE', `/tokens/${encodeURIComponent(id)}`, { idempotent: false });
  }

  // ---- plumbing ------------------------------------------------------------------------------

  private async getJson<T>(path: string): Promise<Fetched<T>> {
    const fetched = await this.getBytes(path);
    return { ...fetched, value: JSON.parse(new TextDecoder().decode(fetched.value)) as T };
  }

  /** A GET that revalidates what it has cached and answers 304s from the cache. */
  async getBytes(path: string): Promise<Fetched<Uint8Array>> {
    const cached = this.cache.get(path);
    const headers: Record<string, string> = cached ? { 'if-none-match': cached.etag } : {};
    const response = await this.request('GET', path, { headers, allowNotModified: true, idempotent: true });
    if (response.status === 304) {
      if (!cached) throw new RegistryError(304, notModifiedWithoutCache(path));
      // Most recently used last, so the oldest entries are the ones dropped.
      this.cache.delete(path);
      this.cache.set(path, cached);
      const merged = new Headers(cached.headers);
      for (const [key, value] of response.headers) merged.set(key, value);
      return { value: cached.body, etag: cached.etag, fromCache: true, headers: merged };
    }
    const body = new Uint8Array(await response.arrayBuffer());
    const etag = response.headers.get('etag') ?? undefined;
    if (etag && this.cacheSize > 0) {
      this.cache.delete(path);
      this.cache.set(path, { etag, status: response.status, headers: [...response.headers], body });
      while (this.cache.size > this.cacheSize) {
        const oldest = this.cache.keys().next().value;
        if (oldest === undefined) break;
        this.cache.delete(oldest);
      }
    } else {
      this.cache.delete(path);
    }
    return { value: body, etag, fromCache: false, headers: response.headers };
  }

  private async request(
    method: string,
    path: string,
    init: {
      /** A factory when the body must be rebuilt for each attempt (FormData, Blob). */
      body?: BodyInit | (() => BodyInit);
      json?: unknown;
      headers?: Record<string, string>;
      allowNotModified?: boolean;
      /** Safe to send again after a connection was lost mid-request (see RetryOptions). */
      idempotent?: boolean;
    } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = {
      accept: 'application/json, */*',
      ...this.options.headers,
      ...init.headers,
    };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    let json: string | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      json = JSON.stringify(init.json);
    }
    const bodyOf = (): BodyInit | undefined =>
      json ?? (typeof init.body === 'function' ? init.body() : init.body);
    const retry = this.options.retry === false ? { ...DEFAULT_RETRY, retries: 0 } : this.options.retry;
    const retries = Math.max(0, Math.floor(retry?.retries ?? DEFAULT_RETRY.retries));
    const attempts = retries + 1;
    let waited = 0;
    for (let attempt = 1; ; attempt += 1) {
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await this.fetchImpl(`${this.base}${path}`, { method, headers, body: bodyOf() });
      } catch (error) {
        failure = error;
      }
      if (response && (response.ok || (init.allowNotModified && response.status === 304))) return response;

      const retryable = response
        ? response.status === 429 || (response.status === 503 && init.idempotent !== false)
        : isRetryableNetworkError(failure, init.idempotent === true);
      let delay: { ms: number; fromHeader: boolean } | undefined;
      if (retryable && attempt < attempts) {
        const planned = retryDelay(retry, attempt, response?.headers.get('retry-after') ?? null);
        const budget = (retry?.maxTotalWaitMs ?? DEFAULT_RETRY.maxTotalWaitMs) - waited;
        // The wait the server asked for must fit in what is left; jitter only fills up to it.
        if (planned.minimum <= budget) delay = { ...planned, ms: Math.min(planned.ms, budget) };
      }
      if (!delay) {
        if (response) throw new RegistryError(response.status, await problemOf(response));
        throw failure;
      }
      const reason = response
        ? `${response.status} ${response.statusText || statusText(response.status)}`.trim()
        : (networkErrorCode(failure) ?? 'network error');
      // Free the connection: the refused answer's body is not needed.
      if (response) await response.body?.cancel().catch(() => {});
      retry?.onRetry?.({
        method,
        path,
        attempt,
        attempts,
        delayMs: delay.ms,
        status: response?.status,
        reason,
        retryAfter: delay.fromHeader,
      });
      await sleep(delay.ms);
      waited += delay.ms;
    }
  }
}

const RETRY_JITTER_MS = 250;

/** The wait before the next attempt: Retry-After when the answer has one, else backoff with jitter. */
function retryDelay(
  retry: RetryOptions | undefined,
  attempt: number,
  retryAfter: string | null,
  now = Date.now(),
): { ms: number; minimum: number; fromHeader: boolean } {
  const fromHeader = parseRetryAfter(retryAfter, now);
  if (fromHeader !== undefined) {
    const ms = fromHeader + Math.floor(Math.random() * RETRY_JITTER_MS);
    return { ms, minimum: fromHeader, fromHeader: true };
  }
  const base = retry?.baseDelayMs ?? DEFAULT_RETRY.baseDelayMs;
  const cap = retry?.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs;
  const exponential = Math.min(cap, base * 2 ** (attempt - 1));
  // "Equal jitter": half fixed, half random, so clients refused together do not come back together.
  const ms = Math.round(exponential / 2 + Math.random() * (exponential / 2));
  return { ms, minimum: ms, fromHeader: false };
}

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Connection could not be opened: nothing reached the server, any request may be sent again. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);
/** Connection lost after (part of) the request was sent: only idempotent requests may be sent again. */
const CONNECTION_LOST = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** The error code of a failed fetch (`TypeError: fetch failed` with the socket error as its cause). */
function networkErrorCode(error: unknown): string | undefined {
  if (!(error instanceof TypeError)) return undefined;
  let cause = (error as { cause?: unknown }).cause as
    | { code?: unknown; errors?: { code?: unknown }[]; cause?: unknown }
    | undefined;
  for (let depth = 0; cause && depth < 3; depth += 1) {
    if (typeof cause.code === 'string') return cause.code;
    const inner = cause.errors?.find((item) => typeof item?.code === 'string');
    if (inner) return inner.code as string;
    cause = cause.cause as typeof cause;
  }
  return undefined;
}

function isRetryableNetworkError(error: unknown, idempotent: boolean): boolean {
  const code = networkErrorCode(error);
  if (code === undefined) return false;
  return NOT_CONNECTED.has(code) || (idempotent && CONNECTION_LOST.has(code));
}

function statusText(status: number): string {
  return status === 429 ? 'Too Many Requests' : status === 503 ? 'Service Unavailable' : '';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function notModifiedWithoutCache(path: string): Problem {
  return {
    type: 'about:blank',
    title: 'Not Modified',
    status: 304,
    detail: `the registry answered 304 to GET ${path} although nothing was cached for it`,
  };
}

async function problemOf(response: Response): Promise<Problem> {
  const text = await response.text();
  try {
    const parsed = JSON.parse(text) as Partial<Problem>;
    if (typeof parsed === 'object' && parsed && typeof parsed.detail === 'string') {
      return { type: 'about:blank', title: '', status: response.status, ...parsed } as Problem;
    }
  } catch {
    // not JSON: fall through
  }
  return {
    type: 'about:blank',
    title: response.statusText,
    status: response.status,
    detail: text.slice(0, 500) || `HTTP ${response.status} ${response.statusText}`,
  };
}
