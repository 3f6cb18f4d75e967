// When a refused or failed request is sent again, and after how long.

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

const RETRY_JITTER_MS = 250;

/** The wait before the next attempt: Retry-After when the answer has one, else backoff with jitter. */
export function retryDelay(
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
export function networkErrorCode(error: unknown): string | undefined {
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

export function isRetryableNetworkError(error: unknown, idempotent: boolean): boolean {
  const code = networkErrorCode(error);
  if (code === undefined) return false;
  return NOT_CONNECTED.has(code) || (idempotent && CONNECTION_LOST.has(code));
}

export function statusText(status: number): string {
  return status === 429 ? 'Too Many Requests' : status === 503 ? 'Service Unavailable' : '';
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
