/**
 * A typed client for the skill-registry HTTP API (`import { SkillRegistryClient } from 'skill-registry/client'`).
 * Runs on Node 20+ and in browsers (fetch only). GETs are ETag-aware: a repeated read sends If-None-Match
 * and a 304 is answered from the client's cache, so polling the catalogue costs almost nothing.
 * test/client.test.ts checks every method against the service's own /openapi.json.
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
}

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

  async publish(body: UploadBody, params: { version?: string; tag?: string; name?: string } = {}) {
    let payload: BodyInit;
    const headers: Record<string, string> = {};
    if (body.type === 'files') {
      const form = new FormData();
      for (const file of body.files)
        form.append('files[]', new Blob([file.bytes as Uint8Array<ArrayBuffer>]), file.path);
      payload = form;
    } else if (body.type === 'markdown') {
      payload = body.text;
      headers['content-type'] = CONTENT_TYPES.markdown;
    } else {
      payload = new Blob([body.bytes as Uint8Array<ArrayBuffer>]);
      headers['content-type'] = CONTENT_TYPES[body.type];
    }
    const response = await this.request('POST', `/skills${query(params)}`, { body: payload, headers });
    return (await response.json()) as PublishResult;
  }

  async setTag(name: string, tag: string, version: string) {
    const response = await this.request(
      'PUT',
      `/skills/${encodeURIComponent(name)}/tags/${encodeURIComponent(tag)}`,
      {
        json: { version },
      },
    );
    return (await response.json()) as TagMoveResult;
  }

  async yank(name: string, version: string) {
    const response = await this.request(
      'DELETE',
      `/skills/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`,
    );
    return (await response.json()) as YankResult;
  }

  async createToken(input: { name: string; scopes: TokenSummary['scopes']; expiresInDays?: number }) {
    const response = await this.request('POST', '/tokens', { json: input });
    return (await response.json()) as TokenSummary & { secret: string };
  }

  async listTokens() {
    const response = await this.request('GET', '/tokens');
    return ((await response.json()) as { items: TokenSummary[] }).items;
  }

  async revokeToken(id: string): Promise<void> {
    await this.request('DELETE', `/tokens/${encodeURIComponent(id)}`);
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
    const response = await this.request('GET', path, { headers, allowNotModified: true });
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
      body?: BodyInit;
      json?: unknown;
      headers?: Record<string, string>;
      allowNotModified?: boolean;
    } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = {
      accept: 'application/json, */*',
      ...this.options.headers,
      ...init.headers,
    };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    let body = init.body;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    const response = await this.fetchImpl(`${this.base}${path}`, { method, headers, body });
    if (response.ok || (init.allowNotModified && response.status === 304)) return response;
    throw new RegistryError(response.status, await problemOf(response));
  }
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
