import { z } from 'zod';
import { namespaceName } from './text.js';

/** Namespaces and views. */

export const namespaceSummarySchema = z.object({
  name: z.string(),
  skills: z.number().int().describe('Skills with a current (latest, not yanked) version'),
  createdAt: z.string(),
});

export const namespacesResponseSchema = z.object({ items: z.array(namespaceSummarySchema) });

export const namespaceDigestsSchema = z.object({
  namespace: z.string(),
  skills: z
    .array(
      z.object({
        name: z.string(),
        versions: z.array(z.object({ version: z.string(), digest: z.string() })),
      }),
    )
    .describe('Every skill with its versions that are not yanked and their digests, by name'),
});

/** DELETE /namespaces/{namespace}. */
export const namespaceDeletedSchema = z.object({
  namespace: z.string(),
  deleted: z.object({ skills: z.number().int(), versions: z.number().int() }),
});

export const viewSchema = z.object({
  name: z.string(),
  layers: z
    .array(z.string())
    .describe(
      'Namespaces, lowest precedence first: per skill name the last layer with a servable version wins',
    ),
  description: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const viewsResponseSchema = z.object({ items: z.array(viewSchema) });

/** Most layers a view may stack. */
export const MAX_VIEW_LAYERS = 32;

/** PUT /views/{view}. */
export const viewBodySchema = z.object({
  layers: z
    .array(namespaceName)
    .min(1)
    .max(MAX_VIEW_LAYERS)
    .describe('Namespaces, lowest precedence first, e.g. ["default", "acme", "acme-data"]'),
  description: z.string().max(1024).nullable().optional().describe('What the view is for'),
});
