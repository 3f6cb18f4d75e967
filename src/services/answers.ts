import type { ResponseValidity } from '../cache/response-cache.js';

/**
 * A representation as the read services hand it to a face: its validator and lifetime first, the
 * bytes only when the client does not have them already. The HTTP glue (src/http/answer.ts) turns it
 * into a 200 or a 304; the response cache repeats it while `validity` holds.
 */
export interface Answer {
  etag: string;
  /** true for exact-version reads (cached for a year); false: revalidate every time. */
  immutable: boolean;
  contentType: string;
  /** How long the answer stays true, for the response cache; undefined: never repeated without the route. */
  validity?: ResponseValidity;
  /** Runs each time the body is sent (not for a 304), e.g. to count a layer-2 load; `client` is src/requests/client-key.ts. */
  onBody?: (client: string) => void;
  body(): Promise<AnswerBody>;
}

/** The content type of every JSON answer. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface AnswerBody {
  payload: Buffer | string;
  /** Headers of the representation besides the validators (x-skill-version, content-disposition...). */
  headers?: Record<string, string>;
}

/** An answer whose body is already known. */
export function bodyOf(
  payload: Buffer | string,
  headers?: Record<string, string>,
): () => Promise<AnswerBody> {
  const body: AnswerBody = headers ? { payload, headers } : { payload };
  return () => Promise.resolve(body);
}
