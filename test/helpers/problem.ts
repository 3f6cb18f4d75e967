import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** An RFC 9457 problem as the service answers it; refusals of a bundle add `errors`, scans `scan`. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  // biome-ignore lint/suspicious/noExplicitAny: members beyond the four (errors, scan, ...) vary by refusal
  [member: string]: any;
}

/**
 * Asserts that `res` is an `application/problem+json` answer with `status`, carrying a type, a title,
 * its status and a non-empty detail, and answers the problem.
 */
export function expectProblem(res: LightMyRequestResponse, status: number): Problem {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({
    type: expect.any(String),
    title: expect.any(String),
    status,
    detail: expect.any(String),
  });
  expect(body.detail.length).toBeGreaterThan(0);
  return body as Problem;
}
