/**
 * A typed client for the skill-registry HTTP API (`import { SkillRegistryClient } from 'skill-registry/client'`).
 * Runs on Node 20+ and in browsers (fetch only). GETs are ETag-aware: a repeated read sends If-None-Match
 * and a 304 is answered from the client's cache, so polling the catalogue costs almost nothing.
 * Requests refused for now (429, 503) or that could not connect are retried, honouring Retry-After
 * (see RetryOptions). test/cli/client.test.ts checks every method against the service's own /openapi.json.
 */

export { type ClientOptions, SkillRegistryClient } from './registry-client.js';
export { RegistryError } from './registry-error.js';
export { DEFAULT_RETRY, parseRetryAfter, type RetryEvent, type RetryOptions } from './retry.js';
export type * from './types.js';
