/** The registry's answers, as the client returns them (checked against /openapi.json by test/cli/client.test.ts). */

export interface Issue {
  path: string;
  detail: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: Issue[];
  [extension: string]: unknown;
}

export interface CatalogueItem {
  name: string;
  description: string;
  version: string;
  tags: string[];
  digest: string;
  updatedAt: string;
  tokens: { description: number; body: number };
  /** With a search (`q`): why the skill matched; items are best first. */
  match?: SearchMatch;
  /** In a view: the layer (namespace) the skill resolves to. */
  namespace?: string;
  /** The version's scan verdict (GET /skills/{name} has the findings); null before scanning. */
  scan: { verdict: 'pass' | 'warn' | 'block' } | null;
}

/** Why a search result matched: the request's words found in each field. */
export interface SearchMatch {
  score: number;
  why: string;
  fields: { name?: string[]; description?: string[]; headings?: string[]; body?: string[] };
  corrected: { word: string; as: string }[];
  related: { word: string; as: string }[];
  learned: string[];
}

export interface CataloguePage {
  items: CatalogueItem[];
  nextCursor: string | null;
}

export interface FileEntry {
  path: string;
  size: number;
  digest: string;
}

export interface VersionSummary {
  version: string;
  digest: string;
  createdAt: string;
  yanked: boolean;
  tags: string[];
}

export interface SkillDetail {
  name: string;
  version: string;
  description: string;
  digest: string;
  frontmatter: Record<string, unknown>;
  createdAt: string;
  yanked: boolean;
  tokens: { description: number; body: number };
  size: number;
  files: FileEntry[];
  distTags: Record<string, string>;
  versions: VersionSummary[];
  /** The namespace the skill is in. */
  namespace?: string;
  /** In a view: the layer the name resolved from. */
  resolvedFrom?: string;
  /** In a view: lower layers whose own version this one hides, highest first. */
  shadows?: { namespace: string; version: string }[];
  /** The security scan at publish; null for versions stored before scanning. */
  scan?: ScanResult | null;
}

export interface SkillContentJson {
  name: string;
  version: string;
  digest: string;
  frontmatter: Record<string, unknown>;
  body: string;
  files: FileEntry[];
}

/** The publish-time security scan of a version. */
export interface ScanResult {
  verdict: 'pass' | 'warn' | 'block';
  rules: string;
  findings: {
    rule: string;
    severity: 'low' | 'medium' | 'high' | 'critical';
    path: string;
    line: number;
    detail: string;
  }[];
}

export interface PublishResult {
  name: string;
  version: string;
  digest: string;
  created: boolean;
  warnings: Issue[];
  scan: ScanResult;
}

export interface TokenSummary {
  id: string;
  name: string;
  scopes: ('read' | 'publish' | 'admin')[];
  /** Namespaces the token may act in (exact names or a trailing `*`); null: every namespace. */
  namespaces: string[] | null;
  prefix: string;
  createdBy: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export interface TagMoveResult {
  name: string;
  tag: string;
  version: string;
  previous: string | null;
}

export interface YankResult {
  name: string;
  version: string;
  yanked: true;
  alreadyYanked: boolean;
  /** The version latest points at now. */
  latest: string | null;
}

/**
 * GET /search: what the search_skills tool answers, best first. Written out rather than inferred from
 * src/services/documents.ts: the console compiles these types for the browser, without Node's.
 */
export interface SearchResult {
  name: string;
  description: string;
  version: string;
  why: string;
  score: number;
  namespace?: string;
}

export interface SearchResponse {
  query: string;
  results: SearchResult[];
}

/** A view: a named, ordered overlay of namespaces, lowest precedence first. */
export interface View {
  name: string;
  layers: string[];
  description: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ViewList {
  items: View[];
}

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

/** GET /namespaces/{namespace}/digests. */
export interface NamespaceDigests {
  namespace: string;
  /** Every skill of the namespace with its versions that are not yanked and their digests, by name. */
  skills: { name: string; versions: { version: string; digest: string }[] }[];
}

/** A DSSE envelope as GET /skills/{name}/attestation answers it. */
export interface DsseEnvelope {
  payloadType: string;
  /** base64 of the in-toto Statement v1 JSON. */
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

/** One key of /.well-known/skillreg/keys.json (a JWK). */
export interface SigningKey {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}
