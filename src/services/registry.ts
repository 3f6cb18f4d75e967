import type { FastifyBaseLogger } from 'fastify';
import { AgentCatalogues } from '../cache/agent-catalogues.js';
import { deletedNamespaceOf } from '../cache/catalogue-state.js';
import { ReadCache } from '../cache/read-cache.js';
import { RESPONSE_CACHE_SHARE } from '../cache/response-cache.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { DEFAULT_NAMESPACE, DEFAULT_SCOPE } from '../domain/scope.js';
import { RepositoryCache } from '../git/repository-cache.js';
import { PromptBudgetError } from '../render/prompt.js';
import { ArchivesRepository } from '../storage/archives-repository.js';
import { AuditRepository } from '../storage/audit-repository.js';
import { CatalogueRepository } from '../storage/catalogue-repository.js';
import { InstalledRepository } from '../storage/installed-repository.js';
import { NamespacesRepository } from '../storage/namespaces-repository.js';
import { ProvenanceRepository } from '../storage/provenance-repository.js';
import { SearchRepository } from '../storage/search-repository.js';
import { SkillsRepository } from '../storage/skills-repository.js';
import { StartupChecksRepository } from '../storage/startup-checks-repository.js';
import { TokensRepository } from '../storage/tokens-repository.js';
import { TrustedPublishersRepository } from '../storage/trusted-publishers-repository.js';
import { UsageRecorder } from '../storage/usage-recorder.js';
import { UsageRepository } from '../storage/usage-repository.js';
import { VendorRepository } from '../storage/vendor-repository.js';
import { ViewsRepository } from '../storage/views-repository.js';
import { AdminListService, TokenService } from './administration.js';
import { AgentRenderingService } from './agent-renderings.js';
import { ArchiveService } from './archives.js';
import { AttestationService } from './attestations.js';
import { BundleService } from './bundles.js';
import { ClawHubService } from './clawhub.js';
import { DiscoveryService } from './discovery.js';
import { GitRepositoryService } from './git-repositories.js';
import { InstalledVersionService } from './installed-versions.js';
import { NamespaceService } from './namespaces.js';
import { OidcIssuers } from './oidc-issuers.js';
import { fillPromptTokens } from './prompt-token-backfill.js';
import { RescanService } from './rescan.js';
import { ScanService } from './scanning.js';
import { ScopeService } from './scopes.js';
import { ShadowingService } from './shadowing.js';
import { SigningService } from './signing.js';
import { SkillReadService } from './skill-reads.js';
import { SkillSearchService } from './skill-search.js';
import { SkillWriteService } from './skill-writes.js';
import { StartupChecks } from './startup-checks.js';
import { TrustedPublishingService } from './trusted-publishing.js';
import { UsageService } from './usage.js';
import { VendorSkillService } from './vendor-skills.js';

export interface Repositories {
  skills: SkillsRepository;
  catalogue: CatalogueRepository;
  archives: ArchivesRepository;
  tokens: TokensRepository;
  audit: AuditRepository;
  search: SearchRepository;
  namespaces: NamespacesRepository;
  views: ViewsRepository;
  /** Layer-2 loads per skill (for budgets that drop the least loaded, and metrics). */
  loads: UsageRecorder;
}

/**
 * The registry's services over one database: what every face (the HTTP routes, MCP, the CLI's serve,
 * the start-up tasks) is handed. The services own the rules; the repositories under them are queries
 * and transactions; the caches are shared by all of them, so a rule and its cache are decided once.
 */
export interface Registry {
  config: Config;
  database: Database;
  repositories: Repositories;
  /** Hot reads kept in memory, invalidated by revision across replicas (src/cache). */
  cache: ReadCache;
  writes: SkillWriteService;
  /** The scan of every publish and rescan: built-in rules plus SKILLREG_SCANNER_CMD. */
  scanning: ScanService;
  /** POST /admin/rescan. */
  rescan: RescanService;
  /** Provenance: the DSSE envelope of every version, and the JWKS. */
  signing: SigningService;
  /** GET /skills/{name}/attestation. */
  attestations: AttestationService;
  reads: SkillReadService;
  agents: AgentRenderingService;
  discovery: DiscoveryService;
  archives: ArchiveService;
  /** Whole versions as archives (GET /skills/{name}/bundle, the discovery index's links). */
  bundles: BundleService;
  /** Usage per skill and day, and per scope (GET /skills/{name}/usage, GET /usage). */
  usage: UsageService;
  /** The model under the vendor-compatible Skills APIs (Anthropic's, OpenAI's). */
  vendorSkills: VendorSkillService;
  namespaces: NamespaceService;
  /** Which namespace or view a prefixed request reads, and the views themselves. */
  scopes: ScopeService;
  /** The one search ranking (GET /skills?q=, /prompt?q=, search_skills), over an index in memory. */
  search: SkillSearchService;
  /** Issuing, listing, revoking and authenticating tokens. */
  tokens: TokenService;
  /** OIDC trusted publishing: namespace bindings to CI identities and the token exchange. */
  trustedPublishing: TrustedPublishingService;
  /** The audit log and the quarantine, as admins page through them. */
  adminLists: AdminListService;
  /** What hosts install of each version: computedHash and its git tree and commit. */
  installed: InstalledVersionService;
  /** The read-only git repositories hosts install from ({scope}/git/...). */
  git: GitRepositoryService;
  /** The ClawHub-compatible read API ({scope}/api/v1/...). */
  clawhub: ClawHubService;
  /** Stores the prompt entry counts of older versions (see prompt-tokens.ts); answers how many. */
  fillPromptTokens(): Promise<number>;
  /** What every replica fills in the background after it starts, reading only what changed since. */
  startupChecks: StartupChecks;
  /**
   * Reads what every replica keeps in memory for `default` (the search index, then the agent catalogue
   * copy, which holds the index's strings for names), then answers a search and a budgeted prompt,
   * so neither the first search nor the first prompt waits for it. A part that fails is reported and
   * left to the first request that needs it.
   */
  warm(report: (part: WarmPart, outcome: { ms: number; error?: unknown }) => void): Promise<void>;
  /** True while warm() or the search index's own warm-up runs: GET /readyz answers 503. */
  readonly warming: boolean;
  /** Writes pending loads and lets go of the caches (the database stays open). */
  close(): Promise<void>;
}

export type WarmPart = 'search index' | 'agent catalogue' | 'first search and prompt';

/** A request a replica answers before it is ready: common words and one misspelt. */
const WARM_QUERY = 'review the code changes and write tests for the deploymnet';

/**
 * The first search and budgeted prompt of a process compile their code and make their scratch
 * arrays and per-snapshot orders (a second or more at a million skills): done here, before the
 * replica says it is ready, rather than in a client's request.
 */
async function firstRequests(
  search: SkillSearchService,
  agents: AgentRenderingService,
  publicUrl: string | undefined,
): Promise<void> {
  await search.search(DEFAULT_SCOPE, { query: WARM_QUERY, limit: 10 });
  try {
    // A prompt's links, and so its per-snapshot entry counts and keep order, depend on the base URL:
    // with a public URL configured (as behind a load balancer) every client's prompt uses that one.
    const prompt = await agents.prompt(DEFAULT_SCOPE, {
      selection: {},
      format: 'xml',
      baseUrl: publicUrl ?? 'http://localhost',
    });
    await prompt.body();
  } catch (error) {
    // A default budget too small for the instructions refuses every prompt: the operator's to fix,
    // and each request says so.
    if (!(error instanceof PromptBudgetError)) throw error;
  }
}

export async function openRegistry(options: {
  config: Config;
  database: Database;
  log?: FastifyBaseLogger;
}): Promise<Registry> {
  const { config, database, log } = options;
  const { db } = database;
  const skills = new SkillsRepository(db);
  const loads = new UsageRecorder(db, { keepDays: config.usageDays });
  const repositories: Repositories = {
    skills,
    catalogue: new CatalogueRepository(db),
    archives: new ArchivesRepository(db),
    tokens: new TokensRepository(db),
    audit: new AuditRepository(db),
    search: new SearchRepository(db),
    namespaces: new NamespacesRepository(db, (change) => skills.announce(change)),
    views: new ViewsRepository(db, (change) => skills.announce(change)),
    loads,
  };
  const cache = await ReadCache.open({
    database,
    readState: () => skills.state(),
    writes: {
      onChange: (listener) => skills.onChange(listener),
      onFlushed: (listener) => loads.onFlushed(listener),
    },
    // The response cache (src/cache/response-cache.ts) takes its share of SKILLREG_CACHE_MB.
    options: { maxBytes: config.cacheBytes - Math.floor(config.cacheBytes * RESPONSE_CACHE_SHARE) },
    log,
  });
  const archives = new ArchiveService(repositories.archives, skills);
  const search = new SkillSearchService(repositories.search, repositories.catalogue, cache.state, {
    alwaysCheck: !cache.keeps,
  });
  // Not counted in the cache's bytes; with the cache off it still serves, but asks on every read.
  const catalogues = new AgentCatalogues(
    repositories.catalogue,
    cache.state,
    (scope, query) => search.rankedNames(scope, query),
    { alwaysCheck: !cache.keeps },
    (namespace, name) => search.sharedName(namespace, name),
  );
  // A namespace deleted here or on another replica: its in-memory copies go with it.
  cache.state.onChange((event) => {
    const deleted = deletedNamespaceOf(event.skill);
    if (deleted !== undefined) {
      catalogues.drop(deleted);
      search.drop(deleted);
    }
  });
  const scanning = new ScanService({
    blockSeverity: config.scanBlockSeverity,
    budgetMs: config.scanBudgetMs,
    scanner: config.scanner,
  });
  const signing = await SigningService.open(new ProvenanceRepository(db), {
    pem: config.signingKey,
    registryUrl: config.publicUrl ?? `http://${config.host}:${config.port}`,
  });
  // Near-duplicate descriptions at publish, found through the search index (a low finding, advisory).
  const shadowing = new ShadowingService(search, {
    views: () => repositories.views.list(),
    // With the read cache off every check reads the views, as every read does.
    state: cache.keeps ? cache.state : undefined,
    onError: (error) => log?.warn({ err: error }, 'shadowing check failed; published without it'),
  });
  const writes = new SkillWriteService(skills, config.limits, scanning, signing, shadowing);
  const gitCache = new RepositoryCache(config.gitCache);
  const installed = new InstalledVersionService(new InstalledRepository(db), skills);
  const fillTokens = () => fillPromptTokens(repositories.catalogue);
  const reads = new SkillReadService(
    skills,
    repositories.catalogue,
    cache,
    loads,
    search,
    catalogues,
    installed,
  );
  const bundles = new BundleService(reads, archives);
  const agents = new AgentRenderingService(reads.cached, reads.listing, config.promptBudget);
  let warmingNow = false;
  return {
    config,
    database,
    repositories,
    cache,
    writes,
    scanning,
    rescan: new RescanService(skills, scanning, writes),
    signing,
    attestations: new AttestationService(reads, signing),
    reads,
    agents,
    discovery: new DiscoveryService(archives, reads, bundles, log),
    archives,
    bundles,
    vendorSkills: new VendorSkillService(new VendorRepository(db), writes, reads, bundles, config.limits),
    usage: new UsageService(new UsageRepository(db), loads, reads, config.usageDays),
    namespaces: new NamespaceService(repositories.namespaces, cache),
    scopes: new ScopeService(cache, skills, repositories.views),
    search,
    tokens: new TokenService(repositories.tokens),
    trustedPublishing: new TrustedPublishingService(
      new TrustedPublishersRepository(db),
      repositories.tokens,
      new OidcIssuers(config.oidc),
    ),
    adminLists: new AdminListService(repositories.audit, skills),
    installed,
    git: new GitRepositoryService(reads, installed, gitCache),
    clawhub: new ClawHubService(reads, search, skills, installed),
    fillPromptTokens: fillTokens,
    startupChecks: new StartupChecks(new StartupChecksRepository(db), {
      archives,
      signing,
      installed,
      fillPromptTokens: fillTokens,
    }),
    async warm(report) {
      warmingNow = true;
      try {
        const parts: [WarmPart, () => Promise<unknown>][] = [
          ['search index', () => search.warm()],
          ['agent catalogue', () => catalogues.mirror(DEFAULT_NAMESPACE).snapshot()],
          ['first search and prompt', () => firstRequests(search, agents, config.publicUrl)],
        ];
        for (const [part, read] of parts) {
          const started = Date.now();
          try {
            await read();
            report(part, { ms: Date.now() - started });
          } catch (error) {
            report(part, { ms: Date.now() - started, error });
          }
        }
      } finally {
        warmingNow = false;
      }
    },
    get warming() {
      return warmingNow || search.warming;
    },
    async close() {
      await loads.flush();
      catalogues.close();
      await search.close();
      await cache.close();
      await gitCache.close();
    },
  };
}
