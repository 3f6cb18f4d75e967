import { z } from 'zod';
import { withoutNul } from './text.js';

/** Trusted publishing from CI (OIDC): bindings, the exchange, and the identity a version carries. */

/** The claims a binding may require, each matched exactly against the ID token's claim of that name. */
export const TRUSTED_PUBLISHER_CLAIMS = ['repository', 'workflow_ref', 'ref', 'environment'] as const;

const claimValue = withoutNul(z.string().min(1).max(500));

export const trustedPublisherBodySchema = z
  .object({
    issuer: withoutNul(z.string().min(1).max(500)).describe(
      'The issuer URL (one of SKILLREG_OIDC_ISSUERS), e.g. https://token.actions.githubusercontent.com',
    ),
    claims: z
      .object({
        repository: claimValue.describe('owner/name of the repository, e.g. acme/skills'),
        workflow_ref: claimValue
          .optional()
          .describe('e.g. acme/skills/.github/workflows/publish.yml@refs/heads/main'),
        ref: claimValue.optional().describe('e.g. refs/heads/main or refs/tags/v1.2.0'),
        environment: claimValue.optional().describe('the deployment environment the job runs in'),
      })
      .strict(),
  })
  .strict();

export const trustedPublisherSchema = z.object({
  id: z.string(),
  namespace: z.string(),
  issuer: z.string(),
  claims: z.record(z.string(), z.string()),
  createdBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const trustedPublishersResponseSchema = z.object({
  namespace: z.string(),
  items: z.array(trustedPublisherSchema),
});

export const oidcExchangeBodySchema = z
  .object({
    token: z.string().min(1).max(16_384).describe("The CI job's OIDC ID token (a JWT)"),
  })
  .strict();

export const oidcExchangeResultSchema = z.object({
  secret: z.string().describe('A bearer token for publishing; shown once'),
  expiresAt: z.string(),
  scopes: z.array(z.literal('publish')),
  namespaces: z.array(z.string()).describe('Exactly the namespaces bound to this CI identity'),
});

/** Who published a version through trusted publishing, as its attestation's predicate names it. */
export const oidcPublisherSchema = z.object({
  kind: z.literal('oidc'),
  issuer: z.string(),
  repository: z.string(),
  workflow_ref: z.string().nullable(),
  ref: z.string().nullable(),
  sha: z.string().nullable(),
  run_id: z.string().nullable(),
});
