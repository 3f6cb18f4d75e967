import type { z } from 'zod';
import type * as wire from './index.js';

/**
 * The wire's documents as TypeScript types, inferred from the schemas (what the server sends, so
 * z.output; request bodies as the client writes them, so z.input). The client exports these names.
 */

export type Issue = z.infer<typeof wire.issueSchema>;
export type Problem = z.infer<typeof wire.problemSchema>;

export type CatalogueItem = z.infer<typeof wire.catalogueItemSchema>;
export type CataloguePage = z.infer<typeof wire.catalogueResponseSchema>;
export type SearchMatch = z.infer<typeof wire.searchMatchSchema>;
export type FileEntry = z.infer<typeof wire.fileEntrySchema>;
export type VersionSummary = z.infer<typeof wire.versionSummarySchema>;
export type SkillDetail = z.infer<typeof wire.skillDetailSchema>;
export type SkillContentJson = z.infer<typeof wire.contentJsonSchema>;
/** The publish-time security scan of a version. */
export type ScanResult = z.infer<typeof wire.scanSchema>;
export type PublishResult = z.infer<typeof wire.publishResultSchema>;
export type TagMoveBody = z.input<typeof wire.tagMoveBodySchema>;
export type TagMoveResult = z.infer<typeof wire.tagMoveResultSchema>;
export type YankResult = z.infer<typeof wire.yankResultSchema>;
export type ReviewBody = z.input<typeof wire.reviewBodySchema>;
export type ReviewResult = z.infer<typeof wire.reviewResultSchema>;
export type DsseEnvelope = z.infer<typeof wire.dsseEnvelopeSchema>;

export type SearchResult = z.infer<typeof wire.searchResultSchema>;
export type SearchResponse = z.infer<typeof wire.searchResponseSchema>;
export type PromptJson = z.infer<typeof wire.promptJsonSchema>;
export type DiscoveryIndex = z.infer<typeof wire.discoveryIndexSchema>;

export type NamespaceSummary = z.infer<typeof wire.namespaceSummarySchema>;
export type NamespaceList = z.infer<typeof wire.namespacesResponseSchema>;
export type NamespaceDigests = z.infer<typeof wire.namespaceDigestsSchema>;
/** A view: a named, ordered overlay of namespaces, lowest precedence first. */
export type View = z.infer<typeof wire.viewSchema>;
export type ViewList = z.infer<typeof wire.viewsResponseSchema>;
export type ViewBody = z.input<typeof wire.viewBodySchema>;

export type TokenScope = (typeof wire.SCOPES)[number];
export type TokenSummary = z.infer<typeof wire.tokenSummarySchema>;
export type TokenList = z.infer<typeof wire.tokenListSchema>;
export type CreatedToken = z.infer<typeof wire.createdTokenSchema>;
export type CreateTokenBody = z.input<typeof wire.createTokenBodySchema>;
/** Who a token is (GET /auth/whoami). */
export type WhoAmI = z.infer<typeof wire.whoAmISchema>;
export type AuditEntry = z.infer<typeof wire.auditEntrySchema>;
export type AuditPage = z.infer<typeof wire.auditPageSchema>;
export type QuarantinedVersion = z.infer<typeof wire.quarantinedSchema>;
export type QuarantineList = z.infer<typeof wire.quarantineListSchema>;
export type RescanReport = z.infer<typeof wire.rescanReportSchema>;
/** One key of /.well-known/skillreg/keys.json (a JWK). */
export type SigningKey = z.infer<typeof wire.signingKeySchema>;
export type SigningKeys = z.infer<typeof wire.signingKeysSchema>;
export type UsageDay = z.infer<typeof wire.usageDaySchema>;
export type SkillUsage = z.infer<typeof wire.skillUsageSchema>;
export type UsageEntry = z.infer<typeof wire.usageEntrySchema>;
export type ScopeUsage = z.infer<typeof wire.scopeUsageSchema>;

export type TrustedPublisherBody = z.input<typeof wire.trustedPublisherBodySchema>;
export type TrustedPublisher = z.infer<typeof wire.trustedPublisherSchema>;
export type TrustedPublishers = z.infer<typeof wire.trustedPublishersResponseSchema>;
export type OidcExchangeResult = z.infer<typeof wire.oidcExchangeResultSchema>;
export type OidcPublisher = z.infer<typeof wire.oidcPublisherSchema>;
