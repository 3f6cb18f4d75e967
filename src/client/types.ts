/**
 * The registry's answers and request bodies, as the client returns and sends them: inferred from the
 * zod schemas of src/wire, the ones the routes serve (so /openapi.json and these types cannot differ).
 * Type-only: the client and the CLI bundle carry no schema code.
 */

export type {
  CatalogueItem,
  CataloguePage,
  CreatedToken,
  CreateTokenBody,
  DsseEnvelope,
  FileEntry,
  Issue,
  NamespaceDigests,
  OidcExchangeResult,
  OidcPublisher,
  Problem,
  PublishResult,
  ScanResult,
  SearchMatch,
  SearchResponse,
  SearchResult,
  SigningKey,
  SigningKeys,
  SkillContentJson,
  SkillDetail,
  TagMoveBody,
  TagMoveResult,
  TokenList,
  TokenSummary,
  TrustedPublisher,
  TrustedPublisherBody,
  TrustedPublishers,
  VersionSummary,
  View,
  ViewBody,
  ViewList,
  YankResult,
} from '../wire/types.js';

export interface Selector {
  version?: string;
  tag?: string;
}

export type UploadBody =
  | { type: 'tar.gz' | 'zip'; bytes: Uint8Array }
  | { type: 'markdown'; text: string }
  | { type: 'files'; files: { path: string; bytes: Uint8Array }[] };

/** The outcome of a GET with its validators, for callers that care whether it changed. */
export interface Fetched<T> {
  value: T;
  etag?: string;
  /** true when the server answered 304 and the cached copy was used. */
  fromCache: boolean;
  /** The answer's headers; after a 304, the cached answer's headers updated with the 304's. */
  headers: Headers;
}
