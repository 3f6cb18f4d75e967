import type { FastifyBaseLogger } from 'fastify';
import type { SkillsRepository } from '../storage/skills-repository.js';
import type { RescanReport } from '../wire/types.js';
import { quarantineLogFields } from './quarantine.js';
import type { ScanService } from './scanning.js';
import type { SkillWriteService } from './skill-writes.js';

/**
 * POST /admin/rescan: every servable version scanned again with the present rules (and external
 * scanner). A version that now blocks is quarantined at once, on every replica (SkillWriteService
 * applyRescan); others get their new verdict and findings stored.
 */

/** Versions read per statement. */
const BATCH = 100;
/** Scans run at once: each holds one bundle in memory, and the built-in rules run on this thread. */
const CONCURRENCY = 4;
/** Newly quarantined versions the report names (the count is always complete). */
const MAX_LISTED = 1_000;

/** The answer of POST /admin/rescan (src/wire: rescanReportSchema); `quarantined` lists at most MAX_LISTED. */
export type { RescanReport };

export class RescanService {
  constructor(
    private readonly skills: SkillsRepository,
    private readonly scanning: ScanService,
    private readonly writes: SkillWriteService,
  ) {}

  async rescan(options: {
    actor: string;
    namespace?: string;
    /** The request's logger: one warn line per version the rescan newly blocks. */
    log?: Pick<FastifyBaseLogger, 'warn'>;
  }): Promise<RescanReport> {
    const report: RescanReport = {
      rules: this.scanning.rules,
      scanned: 0,
      verdicts: { pass: 0, warn: 0, block: 0 },
      changed: 0,
      quarantined: [],
      quarantinedCount: 0,
    };
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const batch = await this.skills.versionsToRescan(after, BATCH, options.namespace);
      if (batch.length === 0) break;
      after = batch[batch.length - 1]!.id;
      for (let start = 0; start < batch.length; start += CONCURRENCY) {
        await Promise.all(
          batch.slice(start, start + CONCURRENCY).map(async (target) => {
            const files = await this.skills.bundleFiles(target.id);
            const scan = await this.scanning.scan(files);
            const outcome = await this.writes.applyRescan(target, scan, options.actor);
            if (outcome === 'skipped') return;
            report.scanned += 1;
            report.verdicts[scan.verdict] += 1;
            if (outcome !== 'unchanged') report.changed += 1;
            if (outcome === 'quarantined') {
              options.log?.warn(
                { event: 'rescan.blocked', ...quarantineLogFields(target, scan, options.actor) },
                'rescan blocked a version: quarantined',
              );
              report.quarantinedCount += 1;
              if (report.quarantined.length < MAX_LISTED) {
                const { namespace, name, version } = target;
                report.quarantined.push({ namespace, name, version, findings: scan.findings.length });
              }
            }
          }),
        );
      }
    }
    report.quarantined.sort((a, b) =>
      `${a.namespace}/${a.name}@${a.version}`.localeCompare(`${b.namespace}/${b.name}@${b.version}`),
    );
    return report;
  }
}
