import type { StartupChecksRepository } from '../storage/startup-checks-repository.js';
import type { ArchiveService } from './archives.js';
import type { InstalledVersionService } from './installed-versions.js';
import type { SigningService } from './signing.js';

/**
 * What every replica checks after it starts (src/server.ts): versions stored by a release before the
 * publish path stored archives, prompt entry counts, attestations and installed identities get them
 * in the background. Only older releases and bulk imports leave such versions, yet a check that reads
 * the whole catalogue to find none costs every replica's start seconds of PostgreSQL at a million
 * skills. So each check finds them cheaply:
 * - prompt counts and installed identities by a partial index of the versions still lacking them
 *   (migration 0016): empty once filled, and no version published since enters it;
 * - archives and attestations (rows of other tables) by remembering the catalogue revision through
 *   which a complete pass checked every skill: the next pass reads only the skills written after it
 *   (skills.changed_revision is indexed). A pass that fails records nothing, so the next is complete.
 */
export class StartupChecks {
  constructor(
    private readonly progress: StartupChecksRepository,
    private readonly services: {
      archives: ArchiveService;
      signing: SigningService;
      installed: InstalledVersionService;
      fillPromptTokens: () => Promise<number>;
    },
  ) {}

  /** Builds the installable archives current versions lack; answers how many. */
  archives(): Promise<number> {
    return this.remembered('archives', (changedAfter) =>
      this.services.archives.backfill(undefined, changedAfter),
    );
  }

  /** Signs the versions without an attestation; answers how many. */
  attestations(): Promise<number> {
    return this.remembered('attestations', (changedAfter) => this.services.signing.backfill(changedAfter));
  }

  /** Stores the prompt entry counts of versions stored without them; answers how many. */
  promptTokens(): Promise<number> {
    return this.services.fillPromptTokens();
  }

  /** Computes the installed identity of versions stored without one; answers how many. */
  installedIdentities(): Promise<number> {
    return this.services.installed.backfill();
  }

  /**
   * Runs `pass` over the skills written since `name`'s last complete pass (all of them the first
   * time), then records the revision read before it began: a write committed after that read has a
   * higher revision, so the next pass reads it.
   */
  private async remembered(name: string, pass: (changedAfter?: number) => Promise<number>): Promise<number> {
    const through = await this.progress.revision();
    const changedAfter = await this.progress.checkedThrough(name);
    const count = await pass(changedAfter);
    await this.progress.record(name, through);
    return count;
  }
}
