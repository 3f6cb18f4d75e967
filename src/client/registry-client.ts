import { notModifiedWithoutCache, problemOf, RegistryError } from './registry-error.js';
import {
  DEFAULT_RETRY,
  isRetryableNetworkError,
  networkErrorCode,
  type RetryOptions,
  retryDelay,
  sleep,
  statusText,
} from './retry.js';
import type {
  CatalogueItem,
  CataloguePage,
  CreatedToken,
  CreateTokenBody,
  DsseEnvelope,
  Fetched,
  NamespaceDigests,
  OidcExchangeResult,
  PublishResult,
  SearchResponse,
  Selector,
  SigningKeys,
  SkillContentJson,
  SkillDetail,
  TagMoveBody,
  TagMoveResult,
  TokenList,
  TrustedPublisher,
  TrustedPublisherBody,
  TrustedPublishers,
  UploadBody,
  VersionSummary,
  View,
  ViewBody,
  ViewList,
  YankResult,
} from './types.js';

export interface ClientOptions {
  /** Base URL, e.g. http://127.0.0.1:3000 */
  url: string;
  token?: string;
  fetch?: typeof fetch;
  /** Read and write one namespace (under /namespaces/{namespace}/); default: the unprefixed API (`default`). */
  namespace?: string;
  /** Read a view (under /views/{view}/); views are read-only, so writes are refused before any request. */
  view?: string;
  /** Extra headers on every request (e.g. a user agent). */
  headers?: Record<string, string>;
  /** How many GET answers to keep for revalidation (least recently used are dropped). Default 256; 0 disables. */
  cacheSize?: number;
  /** Retrying of 429, 503 and failed connections; `false` (or `{ retries: 0 }`) turns it off. */
  retry?: RetryOptions | false;
}

interface CachedResponse {
  etag: string;
  status: number;
  headers: [string, string][];
  body: Uint8Array;
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

  /** The path prefix of the namespace or view this client reads: '' for the unprefixed API. */
  private readonly scope: string;

  constructor(private readonly options: ClientOptions) {
    if (options.namespace !== undefined && options.view !== undefined) {
      throw new Error('a client reads either a namespace or a view, not both');
    }
    this.scope =
      options.view !== undefined
        ? `/views/${encodeURIComponent(options.view)}`
        : options.namespace !== undefined && options.namespace !== 'default'
          ? `/namespaces/${encodeURIComponent(options.namespace)}`
          : '';
    this.base = options.url.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.cacheSize = options.cacheSize ?? 256;
  }

  /** A skill's path in this client's namespace or view, with what follows it (`/content`, ...). */
  private skillPath(name: string, rest = ''): string {
    return `${this.scope}/skills/${encodeURIComponent(name)}${rest}`;
  }

  /** Forgets every cached answer: the next reads are unconditional. */
  clearCache(): void {
    this.cache.clear();
  }

  // ---- layer 1 -------------------------------------------------------------------------------

  listSkills(params: { q?: string; tag?: string; limit?: number; cursor?: string } = {}) {
    return this.getJson<CataloguePage>(`${this.scope}/skills${query(params)}`);
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

  /**
   * The skills that best fit a task in plain words, best first, each with `why` it matched: what the
   * search_skills tool answers (GET /search).
   */
  search(q: string, params: { limit?: number; tag?: string } = {}) {
    return this.getJson<SearchResponse>(`${this.scope}/search${query({ q, ...params })}`);
  }

  getSkill(name: string, selector: Selector = {}) {
    return this.getJson<SkillDetail>(this.skillPath(name, query({ ...selector })));
  }

  listVersions(name: string) {
    return this.getJson<VersionSummary[]>(this.skillPath(name, '/versions'));
  }

  // ---- layer 2 and 3 -------------------------------------------------------------------------

  getContent(name: string, selector: Selector & { arguments?: string } = {}): Promise<Fetched<string>> {
    return this.getText(this.skillPath(name, `/content${query({ ...selector })}`));
  }

  getContentJson(name: string, selector: Selector & { arguments?: string } = {}) {
    return this.getJson<SkillContentJson>(
      this.skillPath(name, `/content${query({ ...selector, format: 'json' })}`),
    );
  }

  getFile(name: string, path: string, selector: Selector = {}) {
    return this.getBytes(this.skillPath(name, `/files/${encodePath(path)}${query({ ...selector })}`));
  }

  /**
   * The whole version as an archive. `contents: 'as-published'` asks for the files exactly as stored
   * (what the version's digest covers); the default is what installers get (SKILL.md frontmatter
   * completed where the registry filled it in).
   */
  getBundle(
    name: string,
    selector: Selector & { format?: 'tar.gz' | 'zip'; contents?: 'installable' | 'as-published' } = {},
  ) {
    return this.getBytes(this.skillPath(name, `/bundle${query({ ...selector })}`));
  }

  // ---- provenance ----------------------------------------------------------------------------

  /** The registry's DSSE envelope for a version (in-toto Statement v1, Ed25519). */
  getAttestation(name: string, selector: Selector = {}) {
    return this.getJson<DsseEnvelope>(this.skillPath(name, `/attestation${query({ ...selector })}`));
  }

  /** The registry's signing keys (JWKS). */
  getSigningKeys() {
    return this.getJson<SigningKeys>('/.well-known/skillreg/keys.json');
  }

  /**
   * The digest of every live version of every skill of this client's namespace (default `default`):
   * what `skillreg sync` compares its folders with, in one request, before publishing only what changed.
   */
  namespaceDigests() {
    const namespace = this.options.namespace ?? 'default';
    return this.getJson<NamespaceDigests>(`/namespaces/${encodeURIComponent(namespace)}/digests`);
  }

  // ---- views (registry-wide: not under this client's namespace or view) -------------------------

  listViews() {
    return this.getJson<ViewList>('/views');
  }

  getView(view: string) {
    return this.getJson<View>(`/views/${encodeURIComponent(view)}`);
  }

  /** Creates or replaces a view (admin): `created` says which. Layers are lowest precedence first. */
  async putView(view: string, input: ViewBody) {
    const response = await this.request('PUT', `/views/${encodeURIComponent(view)}`, {
      json: input,
      idempotent: true,
    });
    return { view: (await response.json()) as View, created: response.status === 201 };
  }

  async deleteView(view: string): Promise<void> {
    // A repeated delete after a lost answer would say 404 for a delete that happened.
    await this.request('DELETE', `/views/${encodeURIComponent(view)}`, { idempotent: false });
  }

  private refuseWritesToView(): void {
    if (this.options.view !== undefined) {
      throw new Error(`view '${this.options.view}' is read-only: publish, tag and yank in a namespace`);
    }
  }

  // ---- agent-facing --------------------------------------------------------------------------

  getPrompt(
    params: { format?: 'xml' | 'markdown'; name?: string[]; tag?: string; q?: string; budget?: number } = {},
  ): Promise<Fetched<string>> {
    return this.getText(`${this.scope}/prompt${query(params)}`);
  }

  getTools(params: { provider: 'anthropic' | 'openai'; name?: string[]; tag?: string; q?: string }) {
    return this.getJson<unknown[]>(`${this.scope}/tools${query(params)}`);
  }

  // ---- writes --------------------------------------------------------------------------------

  /**
   * Publishes a bundle. The bytes are held in memory (never a stream), so a retried attempt sends them
   * again unchanged; retrying is safe because identical content creates nothing the second time.
   */
  async publish(body: UploadBody, params: { version?: string; tag?: string; name?: string } = {}) {
    this.refuseWritesToView();
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
    const response = await this.request('POST', `${this.scope}/skills${query(params)}`, {
      body: payload,
      headers,
      idempotent: true,
    });
    return (await response.json()) as PublishResult;
  }

  async setTag(name: string, tag: string, version: string) {
    this.refuseWritesToView();
    const response = await this.request('PUT', this.skillPath(name, `/tags/${encodeURIComponent(tag)}`), {
      json: { version } satisfies TagMoveBody,
      idempotent: true,
    });
    return (await response.json()) as TagMoveResult;
  }

  async yank(name: string, version: string) {
    this.refuseWritesToView();
    const response = await this.request(
      'DELETE',
      this.skillPath(name, `/versions/${encodeURIComponent(version)}`),
      { idempotent: true },
    );
    return (await response.json()) as YankResult;
  }

  /** `namespaces`: where the token may act, exact names or a trailing `*`; omitted: every namespace. */
  async createToken(input: CreateTokenBody) {
    // Not idempotent: a second attempt after a lost answer would create a second token.
    const response = await this.request('POST', '/tokens', { json: input, idempotent: false });
    return (await response.json()) as CreatedToken;
  }

  async listTokens() {
    const response = await this.request('GET', '/tokens', { idempotent: true });
    return ((await response.json()) as TokenList).items;
  }

  async revokeToken(id: string): Promise<void> {
    // A repeated revoke after a lost answer would say 404 for a revoke that happened.
    await this.request('DELETE', `/tokens/${encodeURIComponent(id)}`, { idempotent: false });
  }

  /**
   * Trusted publishing: a CI job's OIDC ID token exchanged for a publish token (15 minutes, the bound
   * namespaces). Not retried after a lost answer: the ID token may be spent, and a new one is cheap.
   */
  async exchangeOidcToken(idToken: string) {
    const response = await this.request('POST', '/oidc/exchange', {
      json: { token: idToken },
      idempotent: false,
    });
    return (await response.json()) as OidcExchangeResult;
  }

  /** The CI identities bound to a namespace (admin). */
  async listTrustedPublishers(namespace: string) {
    const response = await this.request(
      'GET',
      `/namespaces/${encodeURIComponent(namespace)}/trusted-publishers`,
      { idempotent: true },
    );
    return ((await response.json()) as TrustedPublishers).items;
  }

  /** Binds a namespace to a CI identity (admin); creates or replaces the binding `id`. */
  async putTrustedPublisher(namespace: string, id: string, body: TrustedPublisherBody) {
    const response = await this.request(
      'PUT',
      `/namespaces/${encodeURIComponent(namespace)}/trusted-publishers/${encodeURIComponent(id)}`,
      { json: body, idempotent: true },
    );
    return (await response.json()) as TrustedPublisher;
  }

  async deleteTrustedPublisher(namespace: string, id: string): Promise<void> {
    await this.request(
      'DELETE',
      `/namespaces/${encodeURIComponent(namespace)}/trusted-publishers/${encodeURIComponent(id)}`,
      { idempotent: false },
    );
  }

  // ---- plumbing ------------------------------------------------------------------------------

  private async getText(path: string): Promise<Fetched<string>> {
    const fetched = await this.getBytes(path);
    return { ...fetched, value: new TextDecoder().decode(fetched.value) };
  }

  private async getJson<T>(path: string): Promise<Fetched<T>> {
    const fetched = await this.getText(path);
    return { ...fetched, value: JSON.parse(fetched.value) as T };
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
