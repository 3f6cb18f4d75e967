import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Scope } from '../domain/scope.js';
import { clientKey } from '../requests/client-key.js';
import { requestIdFrom } from '../requests/request-id.js';
import { USAGE_HEADER } from '../requests/usage-header.js';
import type { CatalogueState } from './catalogue-state.js';
import { ifNoneMatchMatches } from './etags.js';
import { ByteLru } from './lru.js';

/**
 * Answers repeated public GETs before Fastify runs: the exact bytes and headers a route answered for
 * the same URL, kept while they are provably current. Agents poll the same few URLs (a skill's
 * content, a catalogue page) with If-None-Match; through the whole Fastify stack (routing, request and
 * reply objects, logger, hooks, schema validation) such a request costs two to three times what the
 * answer itself does, so this is what keeps a cached read near the cost of a bare HTTP server.
 *
 * What makes it safe:
 * - only a route decides what may be kept (`ResponseCacheSpec`), after it authorized, validated and
 *   answered the very same URL with a 200; the entry is the bytes Fastify sent and the headers it set.
 *   A 304 from the route keeps the validators alone (no body): clients that only revalidate (pollers
 *   after a restart, or after a write that left the representation as it was) never ask for a 200
 *   again. Such an entry answers only a matching If-None-Match; the route's next 200 completes it;
 * - only requests without an Authorization header, and only when reads are public and not rate
 *   limited (config): anything else goes through the routes, which check it;
 * - an entry says how long it is true: `immutable` (an exact version), `skill` (current while no write
 *   to that skill is known after the revision it was rendered at), `catalogue` (that exact revision);
 *   the last two only while the catalogue state is live (change feed listening), else the request goes
 *   through the routes, which read the revision row: a replica whose feed is down is slower, never stale;
 * - it keeps what observability needs: X-Request-Id (echoed or generated), the request metrics under
 *   the route's pattern, the route's side effects (`onServe`, such as counting a layer-2 load).
 *   Request log lines are not written for these answers (at `info` and below every Fastify request
 *   writes two); set LOG_LEVEL=debug to send every request through Fastify and its logs.
 */

/** Share of SKILLREG_CACHE_MB given to this cache; the read cache (src/cache) gets the rest. */
export const RESPONSE_CACHE_SHARE = 0.25;

export type ResponseValidity =
  | { kind: 'immutable' }
  | { kind: 'skill'; skill: string; revision: number }
  | { kind: 'catalogue'; revision: number }
  /** True while the scope's revision (CatalogueState.scopeRevision) stays `revision`. */
  | { kind: 'scope'; scope: Scope; revision: number };

/** What a route says about its answer to let this cache repeat it. */
export interface ResponseCacheSpec {
  validity: ResponseValidity;
  /** Runs each time the cache sends the body again (not for a 304), e.g. to count a load. */
  onServe?: (client: string) => void;
}

interface Entry {
  etag: string;
  route: string;
  /** Flat [name, value, ...] lists for writeHead, without X-Request-Id (headers200 empty without a body). */
  headers200: string[];
  headers304: string[];
  /** Undefined when the route answered 304: only a matching If-None-Match is answered from the entry. */
  body: Buffer | undefined;
  validity: ResponseValidity;
  onServe?: (client: string) => void;
}

/** Headers that belong to one exchange, never to the representation. */
const PER_REQUEST = new Set([
  'x-request-id',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'set-cookie',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'www-authenticate',
]);
/**
 * What a 304 repeats of the 200 (RFC 9110 15.4.5): validators and caching directives, nginx's own
 * included (src/http/caching.ts), so a 304 is the same whether a route or this cache answers it.
 */
const KEPT_ON_304 = new Set([
  'etag',
  'x-accel-expires',
  'cache-control',
  'vary',
  'expires',
  'content-location',
]);

/** Where answers from this cache are counted: the same request metrics Fastify's hooks record. */
export interface AnswerRecorder {
  record(method: string, route: string, status: number, seconds: number, conditional: boolean): void;
}

export interface ResponseCacheOptions {
  /** Bytes the entries may hold together; 0 disables the cache. */
  maxBytes: number;
  state: CatalogueState;
  metrics: AnswerRecorder;
}

export class ResponseCache {
  private readonly lru: ByteLru<Entry>;
  private readonly state: CatalogueState;
  private readonly metrics: AnswerRecorder;
  /** Off while the app closes (Fastify answers 503 and closes connections then) or when disabled. */
  private enabled: boolean;
  readonly counters = { hits: 0, notModified: 0, stored: 0 };

  constructor(options: ResponseCacheOptions) {
    this.lru = new ByteLru(options.maxBytes, Math.floor(options.maxBytes / 8));
    this.state = options.state;
    this.metrics = options.metrics;
    this.enabled = options.maxBytes > 0;
  }

  disable(): void {
    this.enabled = false;
    this.lru.clear();
  }

  stats(): { entries: number; bytes: number } {
    return { entries: this.lru.size, bytes: this.lru.bytes };
  }

  /**
   * Keeps a route's answer to `url`. `headers` are the reply's headers as Fastify will send them
   * (content type, ETag, Cache-Control and the route's own), `body` the exact bytes of a 200, or
   * undefined for a 304 (its validators are kept).
   */
  store(
    url: string,
    route: string,
    spec: ResponseCacheSpec,
    headers: Record<string, string | number | string[] | undefined>,
    body: Buffer | undefined,
  ): void {
    if (!this.enabled) return;
    const etag = headers.etag;
    if (typeof etag !== 'string') return;
    if (body === undefined) {
      // A current entry for the same representation can answer 200s too: keep it.
      const existing = this.lru.peek(url);
      if (existing?.body !== undefined && existing.etag === etag && this.current(existing.validity)) return;
    }
    const headers200: string[] = [];
    const headers304: string[] = [];
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || PER_REQUEST.has(name)) continue;
      const values = Array.isArray(value) ? value : [String(value)];
      for (const item of values) {
        if (body !== undefined) headers200.push(name, item);
        if (KEPT_ON_304.has(name)) headers304.push(name, item);
      }
    }
    if (body !== undefined) headers200.push('content-length', String(body.byteLength));
    const entry: Entry = { etag, route, headers200, headers304, body, validity: spec.validity };
    if (spec.onServe) entry.onServe = spec.onServe;
    const bytes =
      (body?.byteLength ?? 0) +
      url.length * 2 +
      [...headers200, ...headers304].reduce((sum, item) => sum + item.length * 2, 200);
    if (this.lru.set(url, entry, bytes)) this.counters.stored++;
  }

  /**
   * Answers `req` from the cache when it can; false when the request must go through Fastify.
   * Used as the HTTP server's request listener in front of Fastify's.
   */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.enabled) return false;
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const headers = req.headers;
    if (headers.authorization !== undefined) return false;
    // A read that asks not to be counted goes through the route, which leaves it out of usage.
    if (headers[USAGE_HEADER] !== undefined) return false;
    const url = req.url;
    if (url === undefined) return false;
    const entry = this.lru.get(url);
    if (entry === undefined) return false;
    if (!this.current(entry.validity)) {
      this.lru.delete(url);
      return false;
    }
    const ifNoneMatch = headers['if-none-match'];
    const notModified = ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, entry.etag);
    const body = entry.body;
    if (!notModified && body === undefined) return false;
    const started = performance.now();
    const requestId = requestIdFrom(headers['x-request-id']);
    let status: number;
    if (notModified) {
      status = 304;
      res.writeHead(304, [...entry.headers304, 'x-request-id', requestId]);
      res.end();
      this.counters.notModified++;
    } else {
      status = 200;
      res.writeHead(200, [...entry.headers200, 'x-request-id', requestId]);
      if (method === 'HEAD') res.end();
      else {
        res.end(body);
        // Requests with credentials never reach this cache: the client is its address alone.
        entry.onServe?.(clientKey(req.socket.remoteAddress, undefined));
      }
      this.counters.hits++;
    }
    this.metrics.record(
      method,
      entry.route,
      status,
      (performance.now() - started) / 1000,
      Boolean(ifNoneMatch),
    );
    return true;
  }

  private current(validity: ResponseValidity): boolean {
    switch (validity.kind) {
      case 'immutable':
        return true;
      case 'skill':
        return this.state.live && this.state.isFresh(validity.skill, validity.revision);
      case 'catalogue':
        return this.state.live && this.state.peek().revision === validity.revision;
      case 'scope':
        return this.state.live && this.state.scopeRevision(validity.scope) === validity.revision;
    }
  }
}
