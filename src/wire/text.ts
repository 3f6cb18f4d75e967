import { z } from 'zod';
import { namespaceProblem } from '../domain/scope.js';

/** Refinements the request bodies share with the HTTP parameters (src/http/schemas.ts re-exports them). */

/** PostgreSQL text cannot hold NUL: such a value is refused as a 400 instead of failing the query (a 500). */
export const withoutNul = (schema: z.ZodString) =>
  schema.refine((value) => !value.includes('\u0000'), 'must not contain a NUL character');

/** A namespace name, with the rule it breaks when it is none. */
export const namespaceName = withoutNul(z.string().max(200)).superRefine((namespace, context) => {
  const problem = namespaceProblem(namespace);
  if (problem) context.addIssue({ code: 'custom', message: problem });
});
