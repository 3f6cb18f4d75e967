import { BadRequestError } from '../domain/app-errors.js';
import { layersOf, type Scope } from '../domain/scope.js';
import { type UsageRecorder, usageDay } from '../storage/usage-recorder.js';
import type { SkillUsageRow, UsageCounts, UsageRepository } from '../storage/usage-repository.js';
import { NEVER_LOADED_LIMIT } from '../wire/index.js';
import type { SkillReadService } from './skill-reads.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A window of whole UTC days ending today: its first and last day and every day in between. */
function windowOf(days: number, now = Date.now()): { from: string; to: string; dates: string[] } {
  const dates = Array.from({ length: days }, (_, i) => usageDay(now - (days - 1 - i) * DAY_MS));
  return { from: dates[0]!, to: dates[dates.length - 1]!, dates };
}

function sum(rows: readonly UsageCounts[]): UsageCounts {
  const total = { loads: 0, files: 0, downloads: 0 };
  for (const row of rows) {
    total.loads += row.loads;
    total.files += row.files;
    total.downloads += row.downloads;
  }
  return total;
}

function entryOf(row: SkillUsageRow) {
  return {
    name: row.name,
    namespace: row.namespace,
    version: row.version,
    loads: row.loads,
    files: row.files,
    downloads: row.downloads,
    lastLoadedAt: row.lastLoadedAt?.toISOString() ?? null,
  };
}

/**
 * Usage as admins read it: per skill and day (GET /skills/{name}/usage) and per scope, the most used
 * skills and those no agent loaded (GET /usage). What the recorder still holds is written first, so
 * a read sees every use this process counted.
 */
export class UsageService {
  constructor(
    private readonly usage: UsageRepository,
    private readonly recorder: UsageRecorder,
    private readonly reads: SkillReadService,
    private readonly keepDays: number,
  ) {}

  /** Calls `listener` with the skill's name on every load recorded here (the metrics count them). */
  onLoad(listener: (name: string) => void): void {
    this.recorder.onRecord(listener);
  }

  private checkedWindow(days: number) {
    if (days > this.keepDays) {
      throw new BadRequestError(
        `days=${days} reaches back further than the ${this.keepDays} days of usage this registry keeps (SKILLREG_USAGE_DAYS): ask for at most days=${this.keepDays}, or raise SKILLREG_USAGE_DAYS`,
        { parameters: ['days'] },
      );
    }
    return windowOf(days);
  }

  /** Deletes the days older than the window kept (the recorder does it after a flush, hourly). */
  prune(): Promise<void> {
    return this.recorder.prune();
  }

  async skillUsage(scope: Scope, name: string, days: number) {
    const window = this.checkedWindow(days);
    await this.recorder.flush();
    const { namespace, record } = await this.reads.resolve(scope, name, {});
    const [perDay, versions] = await Promise.all([
      this.usage.days(record.skillId, window.from),
      this.usage.versions(record.skillId, window.from),
    ]);
    const byDate = new Map(perDay.map((row) => [row.date, row]));
    // Every day of the window, zeros included, so a chart needs no gaps filled.
    const series = window.dates.map((date) => {
      const row = byDate.get(date);
      return { date, loads: row?.loads ?? 0, files: row?.files ?? 0, downloads: row?.downloads ?? 0 };
    });
    return {
      name: record.name,
      namespace,
      from: window.from,
      to: window.to,
      totals: sum(series),
      days: series,
      versions,
    };
  }

  async scopeUsage(scope: Scope, days: number, limit: number) {
    const window = this.checkedWindow(days);
    await this.recorder.flush();
    const layers = layersOf(scope);
    const [top, never] = await Promise.all([
      this.usage.scopeUsage(layers, window.from, 'top', limit),
      this.usage.scopeUsage(layers, window.from, 'never', NEVER_LOADED_LIMIT),
    ]);
    return {
      from: window.from,
      to: window.to,
      days,
      top: top.rows.map(entryOf),
      used: top.total,
      neverLoaded: never.rows.map(entryOf),
      neverLoadedCount: never.total,
    };
  }
}
