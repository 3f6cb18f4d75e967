/**
 * The registry's HTTP API as the console calls it. The token lives in sessionStorage (this tab's
 * session only: never a URL, localStorage, a cookie or a log) and goes out as a bearer header, so no
 * cookie ever carries authority and there is nothing for another site to forge.
 */
import type { WhoAmI } from '../../wire/types';

const TOKEN_KEY = 'skillreg.console.token';

export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function signIn(value: string): void {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function signOut(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** A problem+json answer (or a network failure) as the console shows it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
  ) {
    super(`${status} ${title}: ${detail}`);
  }
}

async function request(
  method: string,
  path: string,
  body?: unknown,
  bearer: string | null = token(),
): Promise<Response> {
  // People reading skills here are not agents using them: the registry leaves these reads out of usage.
  const headers: Record<string, string> = { accept: 'application/json, */*', 'x-skillreg-usage': 'ignore' };
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-cache',
    });
  } catch (error) {
    throw new ApiError(0, 'Network error', (error as Error).message);
  }
  if (!response.ok) {
    let title = response.statusText;
    let detail = '';
    try {
      const problem = (await response.json()) as { title?: string; detail?: string };
      title = problem.title ?? title;
      detail = problem.detail ?? '';
    } catch {
      // not JSON: the status says it all
    }
    throw new ApiError(response.status, title, detail);
  }
  return response;
}

export async function getJson<T>(path: string): Promise<T> {
  return (await (await request('GET', path)).json()) as T;
}

export async function getText(path: string): Promise<string> {
  return (await request('GET', path)).text();
}

export async function getBytes(path: string): Promise<Uint8Array> {
  return new Uint8Array(await (await request('GET', path)).arrayBuffer());
}

export async function send<T>(method: 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const response = await request(method, path, body);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

/** Who a token is (GET /auth/whoami): what the console may offer its holder. */
export type Identity = WhoAmI;

/** Asks the registry who `candidate` is (an ApiError 401 when it refuses the token). */
export async function whoAmI(candidate: string): Promise<Identity> {
  return (await (await request('GET', '/auth/whoami', undefined, candidate)).json()) as Identity;
}

/** Where a page reads: the root (`default`), a namespace or a view. */
export type Scope = { kind: 'root' } | { kind: 'namespace'; name: string } | { kind: 'view'; name: string };

export function scopePrefix(scope: Scope): string {
  if (scope.kind === 'namespace') return `/namespaces/${encodeURIComponent(scope.name)}`;
  if (scope.kind === 'view') return `/views/${encodeURIComponent(scope.name)}`;
  return '';
}

export function skillPath(scope: Scope, name: string, rest = ''): string {
  return `${scopePrefix(scope)}/skills/${encodeURIComponent(name)}${rest}`;
}
