import { randomUUID } from 'node:crypto';

/** What a caller's X-Request-Id may be for it to be honoured (and logged) as it is. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request id of an exchange: the caller's X-Request-Id when it is a sane token, so one id follows
 * a request through proxies and logs, else a new UUID.
 */
export function requestIdFrom(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
