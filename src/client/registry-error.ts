import type { Problem } from './types.js';

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

export function notModifiedWithoutCache(path: string): Problem {
  return {
    type: 'about:blank',
    title: 'Not Modified',
    status: 304,
    detail: `the registry answered 304 to GET ${path} although nothing was cached for it`,
  };
}

export async function problemOf(response: Response): Promise<Problem> {
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
