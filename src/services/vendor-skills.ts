import { prepareBundle } from '../bundle/prepare.js';
import type { BundleLimits } from '../bundle/types.js';
import { BadRequestError, ConflictError, NotFoundError } from '../domain/app-errors.js';
import type { Scope } from '../domain/scope.js';
import type { VendorRepository, VendorSkillFacts, VendorVersionRow } from '../storage/vendor-repository.js';
import type { BundleService } from './bundles.js';
import type { ListedSkill } from './listing.js';
import type { SkillReadService } from './skill-reads.js';
import { filesOfUpload, type SkillWriteService, type Upload } from './skill-writes.js';

export type { VendorVersionRow };

/** A live skill as the vendor faces show it: listed by the registry, with the vendor's facts. */
export interface VendorSkillRow extends VendorSkillFacts {
  latestVersion: string;
  description: string;
}

function rowOf(facts: VendorSkillFacts, item: ListedSkill): VendorSkillRow {
  return { ...facts, latestVersion: item.version, description: item.description };
}

const inNamespace = (namespace: string): Scope => ({ kind: 'namespace', namespace });

/**
 * The one model under the vendor-compatible faces (Anthropic's and OpenAI's Skills APIs): a vendor
 * skill is a registry skill, addressed by an opaque id made from its row id; its versions are the
 * registry's; creating publishes (scanned, signed, audited like any publish) and deleting yanks. What
 * each vendor's wire looks like is the face's business (src/http/routes/anthropic.ts).
 */
export class VendorSkillService {
  constructor(
    private readonly vendor: VendorRepository,
    private readonly writes: SkillWriteService,
    private readonly reads: SkillReadService,
    private readonly bundles: BundleService,
    private readonly limits: BundleLimits,
  ) {}

  /** `skill_<32 hex>`: the row id, stable for the skill's life and the same on every face. */
  static idOf(rowId: string): string {
    return `skill_${rowId.replace(/-/g, '')}`;
  }

  private static rowIdOf(id: string): string | undefined {
    const match = /^skill_([0-9a-f]{32})$/.exec(id);
    if (!match) return undefined;
    const hex = match[1]!;
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  async skill(namespace: string, id: string): Promise<VendorSkillRow> {
    const rowId = VendorSkillService.rowIdOf(id);
    const row = rowId === undefined ? undefined : await this.live(namespace, rowId);
    if (!row) {
      throw new NotFoundError(
        `no skill with id '${id}': ids are what create and list answer (skill_<32 hex digits>)`,
      );
    }
    return row;
  }

  /** A skill by row id if the registry lists it (live: its `latest` is servable), with its current version. */
  private async live(namespace: string, rowId: string): Promise<VendorSkillRow | undefined> {
    const facts = await this.vendor.factsById(namespace, rowId);
    if (!facts) return undefined;
    const item = await this.reads.listing.item(namespace, facts.name);
    return item ? rowOf(facts, item) : undefined;
  }

  /** A page of live skills by name, as the registry lists them; `after` is the last name of the page before. */
  async list(
    namespace: string,
    limit: number,
    after?: string,
  ): Promise<{ skills: VendorSkillRow[]; more: boolean }> {
    const { listing } = this.reads;
    const page = await listing.page(inNamespace(namespace), { limit, cursor: listing.cursorAfter(after) });
    const facts = await this.vendor.factsOf(
      namespace,
      page.items.map((item) => item.name),
    );
    const skills = page.items.flatMap((item) => {
      const found = facts.get(item.name);
      return found ? [rowOf(found, item)] : [];
    });
    return { skills, more: page.nextCursor !== null };
  }

  /** Creates a skill from files: refused (409) when the name is a live skill already. */
  async create(
    namespace: string,
    upload: Upload,
    options: { displayName?: string | null; actor: string; readable?: readonly string[] },
  ): Promise<VendorSkillRow> {
    const prepared = prepareBundle(await filesOfUpload(upload, this.limits), { limits: this.limits });
    const name = prepared.skill.name;
    const existing = await this.vendor.idOf(namespace, name);
    if (existing !== undefined && (await this.live(namespace, existing))) {
      throw new ConflictError(
        `a skill named '${name}' exists already (id ${VendorSkillService.idOf(existing)}): add a version to it (versions.create) or give the new one another name`,
        { skill_id: VendorSkillService.idOf(existing) },
      );
    }
    await this.writes.publish({
      skill: prepared.skill,
      files: prepared.files,
      digest: prepared.digest,
      actor: options.actor,
      namespace,
      readable: options.readable,
    });
    const rowId = (await this.vendor.idOf(namespace, name))!;
    const displayName = options.displayName?.trim();
    await this.vendor.setDisplayName(rowId, displayName ? displayName : null);
    return this.skill(namespace, VendorSkillService.idOf(rowId));
  }

  /** Publishes files as a new version of a skill (its frontmatter must name the same skill). */
  async createVersion(
    namespace: string,
    id: string,
    upload: Upload,
    options: {
      actor: string;
      /** The namespaces the publisher may read (PublishInput.readable). */
      readable?: readonly string[];
      /**
       * Where `latest` goes: the registry's rules (`native`: the highest version unless pinned), back
       * where it was (`keep`: OpenAI without `default`), or onto the new version (`new`: `default: true`).
       */
      latest?: 'native' | 'keep' | 'new';
    },
  ): Promise<VendorVersionRow> {
    const { actor } = options;
    const skill = await this.skill(namespace, id);
    const prepared = prepareBundle(await filesOfUpload(upload, this.limits), { limits: this.limits });
    if (prepared.skill.name !== skill.name) {
      throw new BadRequestError(
        `these files are skill '${prepared.skill.name}', not '${skill.name}' (${id}): a version must keep the skill's name`,
      );
    }
    const result = await this.writes.publish({
      skill: prepared.skill,
      files: prepared.files,
      digest: prepared.digest,
      actor,
      namespace,
      readable: options.readable,
    });
    const latest = options.latest ?? 'native';
    if (latest !== 'native' && result.created) {
      const wanted = latest === 'keep' ? skill.latestVersion : result.version;
      if ((await this.skill(namespace, id)).latestVersion !== wanted) {
        await this.writes.moveTag(skill.name, 'latest', wanted, actor, namespace);
      }
    }
    return this.version(namespace, id, result.version);
  }

  /** Points `latest` (OpenAI's default version) at a version, pinned as any hand-moved tag. */
  async setDefault(namespace: string, id: string, version: string, actor: string): Promise<VendorSkillRow> {
    const skill = await this.skill(namespace, id);
    const row = await this.version(namespace, id, version);
    await this.writes.moveTag(skill.name, 'latest', row.version, actor, namespace);
    return this.skill(namespace, id);
  }

  async versions(namespace: string, id: string): Promise<VendorVersionRow[]> {
    return this.vendor.versions((await this.skill(namespace, id)).id);
  }

  /** A servable version by its version string, or `latest`. */
  async version(namespace: string, id: string, version: string): Promise<VendorVersionRow> {
    const skill = await this.skill(namespace, id);
    const wanted = version === 'latest' ? skill.latestVersion : version;
    // A registry version (semver), or OpenAI's number for it (its place in publish order).
    const found = (await this.vendor.versions(skill.id)).find(
      (row) => row.version === wanted || String(row.ordinal) === wanted,
    );
    if (!found) {
      throw new NotFoundError(
        `skill ${id} (${skill.name}) has no version '${version}': versions.list names them`,
      );
    }
    return found;
  }

  /** Yanks a version: it leaves the vendor lists and the native catalogue (exact-version reads stay). */
  async deleteVersion(
    namespace: string,
    id: string,
    version: string,
    actor: string,
  ): Promise<VendorVersionRow> {
    const skill = await this.skill(namespace, id);
    const row = await this.version(namespace, id, version);
    await this.writes.yank(skill.name, row.version, actor, namespace);
    return row;
  }

  /** Yanks every version of a skill: it leaves every list and answers 404 on these faces. */
  async deleteSkill(namespace: string, id: string, actor: string): Promise<void> {
    const skill = await this.skill(namespace, id);
    for (const row of await this.vendor.versions(skill.id)) {
      await this.writes.yank(skill.name, row.version, actor, namespace);
    }
  }

  /** The zip of a version as published (re-published natively, it gives the same digest). */
  async download(
    namespace: string,
    id: string,
    version: string,
  ): Promise<{ bytes: Buffer; name: string; version: string }> {
    const skill = await this.skill(namespace, id);
    const row = await this.version(namespace, id, version);
    const resolved = await this.reads.resolve({ kind: 'namespace', namespace }, skill.name, {
      version: row.version,
    });
    const archive = await this.bundles.archive(resolved.record, 'zip', 'as-published');
    this.reads.recordUse(resolved, 'downloads');
    return { bytes: archive.bytes, name: skill.name, version: row.version };
  }
}
