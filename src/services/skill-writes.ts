import { type ArchiveKind, readArchive, sniffArchiveKind } from '../bundle/archive-read.js';
import { fileDigest } from '../bundle/digest.js';
import { installableFiles } from '../bundle/installable-skill-md.js';
import { prepareBundle } from '../bundle/prepare.js';
import { BundleError, type BundleFile, type BundleLimits, type ParsedSkill } from '../bundle/types.js';
import { chooseVersion } from '../bundle/version.js';
import { ConflictError } from '../domain/app-errors.js';
import { DEFAULT_NAMESPACE } from '../domain/scope.js';
import { countCatalogueEntryTokens, countTokens } from '../render/token-count.js';
import type { ScanResult } from '../scan/index.js';
import { encodeTerms, searchDocument } from '../search/document.js';
import { archiveKey, LATEST, type VersionRow } from '../storage/records.js';
import type { SkillsRepository, SkillWrite } from '../storage/skills-repository.js';
import type { OidcPublisher, PublishResult as WirePublishResult } from '../wire/types.js';
import { buildPublishArchives } from './archives.js';
import { installedVersion } from './installed-versions.js';
import { unknownVersion } from './not-found.js';
import { promptTokenColumns } from './prompt-token-backfill.js';
import {
  coveringRelease,
  QuarantineError,
  quarantineLogFields,
  type ReleasedVersion,
  type ReleaseRecord,
  releasedByRule,
  type StoredFinding,
  type StoredScan,
} from './quarantine.js';
import type { ScanService } from './scanning.js';
import type { ShadowingService } from './shadowing.js';
import type { SigningService } from './signing.js';
import { existingSkill, findIdenticalVersion, pointTag, refreshLatest } from './skill-write-steps.js';

/**
 * The rules of every write to a skill: publish (version choice, identical content, tags, token
 * counts, the archive, the audit entry), dist-tag moves and yanks. Each write is one transaction per
 * skill (SkillsRepository.write), which also bumps the catalogue revision that readers follow.
 */

export interface PublishInput {
  skill: ParsedSkill;
  files: BundleFile[];
  digest: string;
  requestedVersion?: string;
  /** Dist-tag to point at the published version (besides the automatic `latest`). */
  tag?: string;
  actor: string;
  /** Default `default`; the first publish into a namespace creates it. */
  namespace?: string;
  /** The CI identity of a trusted publish (a token from POST /oidc/exchange), for the attestation. */
  publisher?: OidcPublisher;
  /**
   * The namespaces the publisher may read, when reads need a token and the token is limited
   * (readableNamespaces): shadowing findings name skills there only. Absent: every namespace.
   */
  readable?: readonly string[];
}

/** What a publish answers (the wire's publishResultSchema). */
export type PublishResult = WirePublishResult;

/** What arrived in a publish request, before any interpretation. */
export type Upload =
  | { kind: 'archive'; bytes: Uint8Array; declared?: ArchiveKind }
  | { kind: 'files'; files: BundleFile[] }
  | { kind: 'markdown'; bytes: Uint8Array };

export interface PublishOptions {
  namespace?: string;
  nameOverride?: string;
  version?: string;
  tag?: string;
  actor: string;
  publisher?: OidcPublisher;
  readable?: readonly string[];
  limits: BundleLimits;
}

/** Turns an upload into files; archives are recognised by their bytes, whatever the declared type. */
export async function filesOfUpload(upload: Upload, limits: BundleLimits): Promise<BundleFile[]> {
  switch (upload.kind) {
    case 'files':
      return upload.files;
    case 'markdown':
      return [{ path: 'SKILL.md', bytes: upload.bytes, mode: 0o644 }];
    case 'archive': {
      const kind = sniffArchiveKind(upload.bytes);
      if (!kind) {
        const expected = upload.declared ? `a ${upload.declared} archive` : 'a tar.gz or zip archive';
        throw new BundleError(400, 'Bad Request', `the request body is not ${expected}`, [
          {
            path: '(body)',
            detail: `the request body is not ${expected}: its first bytes match no known archive format. Send the archive file itself (curl --data-binary @bundle.tar.gz)`,
          },
        ]);
      }
      return readArchive(upload.bytes, kind, limits);
    }
  }
}

/** Whether a stored scan says what `scan` says (jsonb keeps its own key order, so fields are compared). */
function sameScan(
  stored: { verdict: string; rules: string; findings: unknown[] } | null,
  scan: ScanResult,
): boolean {
  if (!stored || stored.verdict !== scan.verdict || stored.rules !== scan.rules) return false;
  if (stored.findings.length !== scan.findings.length) return false;
  return scan.findings.every((finding, index) => {
    const other = stored.findings[index] as Partial<typeof finding>;
    return (
      other.rule === finding.rule &&
      other.severity === finding.severity &&
      other.path === finding.path &&
      other.line === finding.line &&
      other.detail === finding.detail
    );
  });
}

export class SkillWriteService {
  constructor(
    private readonly skills: SkillsRepository,
    private readonly limits: BundleLimits,
    private readonly scanning: ScanService,
    private readonly signing?: SigningService,
    private readonly shadowing?: ShadowingService,
  ) {}

  /** Reads, validates and publishes an upload as it arrived over HTTP (or from the CLI). */
  async publishUpload(upload: Upload, options: Omit<PublishOptions, 'limits'>): Promise<PublishResult> {
    const files = await filesOfUpload(upload, this.limits);
    const prepared = prepareBundle(files, { nameOverride: options.nameOverride, limits: this.limits });
    return this.publish({
      skill: prepared.skill,
      files: prepared.files,
      digest: prepared.digest,
      requestedVersion: options.version,
      tag: options.tag,
      actor: options.actor,
      namespace: options.namespace,
      publisher: options.publisher,
      readable: options.readable,
    });
  }

  async publish(input: PublishInput): Promise<PublishResult> {
    const { skill, digest } = input;
    // Near-duplicate descriptions looked up while the scan runs (the check never rejects).
    const shadowing = this.shadowing?.findings(input.namespace, skill, input.readable);
    // Scanned before the write takes its lock.
    const scanned = await this.scanning.scan(input.files);
    // Low, so the verdict the scan reached stands: a near-duplicate description never blocks.
    scanned.findings.push(...((await shadowing) ?? []));
    let scan: StoredScan = scanned;
    const result = await this.skills.write(
      skill.name,
      { create: true, namespace: input.namespace },
      async (write) => {
        const skillId = write.skillId!;
        const existing = await write.versionRows(skillId);
        const choice = chooseVersion({
          requested: input.requestedVersion,
          metadataVersion: skill.metadataVersion,
          existing: existing.map((row) => row.version),
        });
        const warnings = [...skill.warnings, ...choice.warnings];
        const unchanged = findIdenticalVersion(existing, digest, choice);
        if (unchanged?.quarantine) {
          // Already held (or rejected): the same refusal again, nothing new stored.
          return {
            name: skill.name,
            version: unchanged.version,
            digest,
            created: false,
            warnings,
            scan,
            held: true,
          };
        }
        if (unchanged) {
          if (unchanged.yankedAt) {
            warnings.push({
              path: 'SKILL.md',
              detail: `this content is identical to yanked version ${unchanged.version}; nothing was published. Change the skill to publish a new version`,
            });
          }
          if (input.tag && input.tag !== LATEST && !unchanged.yankedAt) {
            const previous = await pointTag(
              write,
              skillId,
              skill.name,
              input.tag,
              unchanged.version,
              input.actor,
            );
            // A moved tag changes what readers see, so listings must not answer 304 to their old ETags.
            if (previous !== unchanged.version) await write.touch(skillId);
          }
          return { name: skill.name, version: unchanged.version, digest, created: false, warnings, scan };
        }
        const clash = existing.find((row) => row.version === choice.version);
        if (clash) {
          throw new ConflictError(
            `version ${choice.version} of '${skill.name}' already exists with different content (${clash.digest}); versions are immutable: publish under a new version (bump metadata.version or pass ?version=), or omit the version to get the next patch`,
            { name: skill.name, version: choice.version, existingDigest: clash.digest, digest },
          );
        }
        // A block whose findings an admin already released for an earlier version is served on the
        // strength of that release, recorded as such; anything new goes to review.
        const covering =
          scanned.verdict === 'block'
            ? coveringRelease(
                scanned,
                // Scans are stored as the scan service wrote them (StoredScan).
                (await write.releasedVersions(skillId)) as ReleasedVersion[],
                this.scanning.blockSeverity,
              )
            : undefined;
        if (covering) scan = { ...scanned, release: releasedByRule(covering, new Date()) };
        const blocked = scanned.verdict === 'block' && !covering;

        // Compression runs on libuv's thread pool while the version row is inserted.
        // SKILL.md as installers get it: the archive and the installed identity both need it.
        const installable = installableFiles(
          input.files,
          skill.name,
          skill.description,
          skill.declaresNameAndDescription,
        );
        const archive = buildPublishArchives(input.files, skill.name, installable);
        archive.catch(() => {}); // awaited below; never an unhandled rejection meanwhile
        // The statement signed after the commit names this time, which the row stores too.
        const publishedAt = new Date();
        const versionId = await this.insertVersion(write, skillId, choice.version, input, archive, {
          scan,
          quarantined: blocked,
          publishedAt,
          installable: installable.files,
        });
        // A quarantined version is kept for review only: no tag points at it, so no face serves it.
        if (!blocked) {
          // The skill's versions were read under this write's lock: they and the new one are all.
          const created: VersionRow = {
            id: versionId,
            version: choice.version,
            digest,
            createdAt: publishedAt,
            yankedAt: null,
            quarantine: null,
          };
          await refreshLatest(write, skillId, { versions: [...existing, created] });
          if (input.tag) await pointTag(write, skillId, skill.name, input.tag, choice.version, input.actor);
        }
        await write.audit({
          actor: input.actor,
          action: blocked ? 'quarantine' : 'publish',
          skill: skill.name,
          version: choice.version,
          detail: {
            digest,
            versionSource: choice.source,
            files: input.files.length,
            versionId,
            ...(blocked ? { findings: scan.findings.length } : {}),
          },
        });
        if (scan.release) {
          await write.audit({
            actor: input.actor,
            action: 'release-by-rule',
            skill: skill.name,
            version: choice.version,
            detail: {
              releasedVersion: scan.release.version,
              releasedBy: scan.release.actor,
              findings: scan.findings.length,
              rules: scan.rules,
            },
          });
        }
        await write.touch(skillId);
        return {
          name: skill.name,
          version: choice.version,
          digest,
          created: true,
          warnings,
          scan,
          held: blocked,
          versionId,
          publishedAt,
        };
      },
    );
    const { held, versionId, publishedAt, ...answer } = result;
    const namespace = input.namespace ?? DEFAULT_NAMESPACE;
    // Signed once committed (the statement names what was stored). Should this fail, the envelope is
    // made when first asked for or by the start-up backfill: Ed25519 signs the same bytes the same way.
    if (versionId !== undefined && publishedAt !== undefined) {
      await this.signing
        ?.attestStored({
          id: versionId,
          namespace,
          name: skill.name,
          version: answer.version,
          digest,
          publishedBy: input.actor,
          publisher: input.publisher ?? null,
          createdAt: publishedAt,
          scan: { verdict: scan.verdict, rules: scan.rules },
        })
        .catch(() => undefined);
    }
    if (held) {
      const target = { namespace, name: skill.name, version: answer.version };
      throw new QuarantineError(skill.name, scan, answer.version, {
        ...quarantineLogFields(target, scan, input.actor),
        created: answer.created,
      });
    }
    return answer;
  }

  /**
   * An admin's decision on a quarantined version: `release` makes it servable (tags by the usual
   * rules), `reject` keeps it stored and unserved for good. Audited with the reason.
   */
  async review(
    name: string,
    version: string,
    decision: 'release' | 'reject',
    reason: string,
    actor: string,
    namespace?: string,
  ): Promise<{ quarantine: string | null; latest: string | null }> {
    return this.skills.write(name, { create: false, namespace }, async (write) => {
      const skillId = await existingSkill(write, name);
      const row = await write.versionByNumber(skillId, version, { quarantined: true });
      if (!row) {
        const versions = (await write.versionRows(skillId)).map((entry) => entry.version);
        throw unknownVersion(name, version, versions);
      }
      if (row.quarantine !== 'held') {
        throw new ConflictError(
          row.quarantine === 'rejected'
            ? `version ${version} of '${name}' was rejected already; publish a fixed version instead`
            : `version ${version} of '${name}' is not in quarantine; only held versions are reviewed (GET /quarantine lists them)`,
          { name, version, quarantine: row.quarantine },
        );
      }
      const state = decision === 'release' ? null : 'rejected';
      await write.setQuarantine(row.id, state);
      if (decision === 'release' && row.scan) {
        // Recorded in the scan: later versions with the same findings are served on this release.
        const release: ReleaseRecord = { by: 'review', version, actor, reason, at: new Date().toISOString() };
        await write.setScan(row.id, { ...row.scan, release });
      }
      if (decision === 'release') await refreshLatest(write, skillId);
      await write.audit({ actor, action: 'review', skill: name, version, detail: { decision, reason } });
      await write.touch(skillId);
      return { quarantine: state, latest: await write.taggedVersion(skillId, LATEST) };
    });
  }

  /**
   * Stores a rescan's result for one version. A block puts it in quarantine at once: its tags are
   * removed and `latest` falls back as on a yank, and the revision bump tells every replica. A version
   * that is no longer servable (reviewed or quarantined meanwhile) is left as it is.
   */
  async applyRescan(
    target: { namespace: string; name: string; version: string },
    scan: StoredScan,
    actor: string,
  ): Promise<'quarantined' | 'changed' | 'unchanged' | 'skipped'> {
    return this.skills.write(target.name, { create: false, namespace: target.namespace }, async (write) => {
      const skillId = write.skillId;
      if (skillId === undefined) return 'skipped';
      const row = await write.versionByNumber(skillId, target.version, { quarantined: true });
      if (!row || row.quarantine) return 'skipped';
      // Shadowing findings compare the skill with the catalogue at its publish: a rescan of its files
      // does not produce them, and keeps the ones stored.
      const shadowing = ((row.scan?.findings ?? []) as StoredFinding[]).filter((finding) =>
        finding.rule.startsWith('shadowing/'),
      );
      if (shadowing.length > 0) scan = { ...scan, findings: [...scan.findings, ...shadowing] };
      // A released version (or a later one with its findings) stays served while its blocking
      // findings are the ones released; a new one quarantines it like any other.
      const released =
        scan.verdict === 'block' ? ((await write.releasedVersions(skillId)) as ReleasedVersion[]) : [];
      const own = released.filter((candidate) => candidate.version === target.version);
      // Its own release first: a version an admin released keeps that record while nothing is new.
      const covering =
        coveringRelease(scan, own, this.scanning.blockSeverity) ??
        coveringRelease(scan, released, this.scanning.blockSeverity);
      if (covering) {
        const kept = (row.scan as StoredScan | null)?.release;
        const stored: StoredScan = {
          ...scan,
          release: kept && covering.version === target.version ? kept : releasedByRule(covering, new Date()),
        };
        if (sameScan(row.scan, stored)) return 'unchanged';
        await write.setScan(row.id, stored);
        await write.touch(skillId);
        return 'changed';
      }
      if (scan.verdict === 'block') {
        await write.setScan(row.id, scan);
        const removedTags = await write.holdVersion(row.id);
        await refreshLatest(write, skillId);
        await write.audit({
          actor,
          action: 'quarantine',
          skill: target.name,
          version: target.version,
          detail: { rescan: true, rules: scan.rules, findings: scan.findings.length, removedTags },
        });
        await write.touch(skillId);
        return 'quarantined';
      }
      if (sameScan(row.scan, scan)) return 'unchanged';
      await write.setScan(row.id, scan);
      // Listings name the verdict and GET /skills/{name} the findings: readers must see the new ones.
      await write.touch(skillId);
      return 'changed';
    });
  }

  /** Moves a dist-tag by hand (pinning it); returns the version it pointed at before. */
  async moveTag(
    name: string,
    tag: string,
    version: string,
    actor: string,
    namespace?: string,
  ): Promise<{ previous: string | null }> {
    return this.skills.write(name, { create: false, namespace }, async (write) => {
      const skillId = await existingSkill(write, name);
      const previous = await pointTag(write, skillId, name, tag, version, actor);
      await write.touch(skillId);
      return { previous };
    });
  }

  /**
   * Yanks a version: it leaves every tag (tags exist to be followed, and a yanked version must not
   * be) and `latest` moves to the highest version left; it stays readable by exact version.
   */
  async yank(
    name: string,
    version: string,
    actor: string,
    namespace?: string,
  ): Promise<{ alreadyYanked: boolean; latest: string | null }> {
    return this.skills.write(name, { create: false, namespace }, async (write) => {
      const skillId = await existingSkill(write, name);
      const row = await write.versionByNumber(skillId, version);
      if (!row) {
        const versions = (await write.versionRows(skillId)).map((entry) => entry.version);
        throw unknownVersion(name, version, versions);
      }
      if (row.yankedAt) {
        return { alreadyYanked: true, latest: await write.taggedVersion(skillId, LATEST) };
      }
      const removedTags = await write.yankVersion(row.id);
      await refreshLatest(write, skillId);
      await write.audit({ actor, action: 'yank', skill: name, version, detail: { removedTags } });
      await write.touch(skillId);
      return { alreadyYanked: false, latest: await write.taggedVersion(skillId, LATEST) };
    });
  }

  private async insertVersion(
    write: SkillWrite,
    skillId: string,
    version: string,
    input: PublishInput,
    archive: ReturnType<typeof buildPublishArchives>,
    {
      scan,
      quarantined,
      publishedAt,
      installable: installableSkill,
    }: { scan: ScanResult; quarantined: boolean; publishedAt: Date; installable: readonly BundleFile[] },
  ): Promise<string> {
    const { skill, files, digest } = input;
    const skillMd = files.find((file) => file.path === 'SKILL.md');
    const digests = files.map((file) => fileDigest(file.bytes));
    const { computedHash, gitTree, gitCommit } = installedVersion(
      { name: skill.name, version, description: skill.description, createdAt: publishedAt },
      files,
      installableSkill,
    );
    const row = {
      name: skill.name,
      version,
      digest,
      description: skill.description,
      frontmatter: skill.frontmatter,
      body: skill.body,
      skillMdSize: skillMd?.bytes.byteLength ?? 0,
      totalSize: files.reduce((sum, file) => sum + file.bytes.byteLength, 0),
      fileCount: files.length,
      tokensDescription: countCatalogueEntryTokens(skill.name, skill.description),
      tokensBody: countTokens(skill.body),
      ...promptTokenColumns(skill.name, skill.description),
      searchTerms: encodeTerms(searchDocument(skill).terms),
      computedHash,
      gitTree,
      gitCommit,
      scan,
      quarantine: quarantined ? ('held' as const) : null,
      warnings: skill.warnings,
      publishedBy: input.actor,
      publisher: input.publisher ?? null,
      createdAt: publishedAt,
    };
    const versionId = await write.insertVersion(skillId, row);
    // The archives are stored like any file content (one blob statement for all), then linked.
    const { asPublished, installable } = await archive;
    await write.storeVersionContents(
      versionId,
      files.map((file, index) => ({
        path: file.path,
        digest: digests[index]!,
        size: file.bytes.byteLength,
        mode: file.mode,
      })),
      [
        ...files.map((file, index) => ({ digest: digests[index]!, bytes: file.bytes })),
        { digest: asPublished.sha256, bytes: asPublished.bytes },
        { digest: installable.sha256, bytes: installable.bytes },
      ],
      [
        { key: archiveKey(asPublished.format, 'as-published'), digest: asPublished.sha256 },
        { key: archiveKey(installable.format, 'installable'), digest: installable.sha256 },
      ],
    );
    return versionId;
  }
}
