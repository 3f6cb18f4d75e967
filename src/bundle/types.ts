/**
 * Shared vocabulary of the bundle layer. Everything under src/bundle is pure: it takes bytes
 * and returns data or throws a BundleError, never touches the network, the database or the disk.
 */

import { AppError } from '../domain/app-errors.js';

/** One file of a skill bundle, addressed by its path relative to the skill root ("SKILL.md", "scripts/run.py"). */
export interface BundleFile {
  path: string;
  bytes: Uint8Array;
  /** Unix permission bits as uploaded; only the executable bit is kept (0o755 or 0o644). */
  mode: number;
}

/** Limits applied while reading an upload. Every value is configurable (see src/config.ts). */
export interface BundleLimits {
  /** Sum of the uncompressed sizes of all files, enforced while streaming. */
  maxUncompressedBytes: number;
  /** Number of regular files in the bundle. */
  maxFiles: number;
  /** Size of SKILL.md itself. */
  maxSkillMdBytes: number;
  /**
   * Size of the YAML frontmatter block of SKILL.md, checked before it is parsed: YAML parsing costs
   * CPU in proportion to its size and blocks the event loop meanwhile, and real frontmatter is a few KiB.
   */
  maxFrontmatterBytes: number;
}

export const DEFAULT_LIMITS: BundleLimits = {
  maxUncompressedBytes: 30 * 1024 * 1024,
  maxFiles: 2000,
  maxSkillMdBytes: 1024 * 1024,
  maxFrontmatterBytes: 64 * 1024,
};

/** One specific problem with an upload: where it is and what to do about it. */
export interface BundleIssue {
  /** The file (or "SKILL.md#name" style pointer) the problem is about. */
  path: string;
  /** A sentence naming the problem and how to fix it. */
  detail: string;
}

export type BundleErrorStatus = 400 | 413 | 415 | 422;

/**
 * A refusal of an upload. `status` follows the contract: 400 unreadable archive or hostile
 * entry, 413 over a limit, 415 unsupported format, 422 readable but not a valid skill. Its problem
 * document lists every issue in `errors` (and `warnings` when there are any).
 */
export class BundleError extends AppError {
  declare readonly status: BundleErrorStatus;

  constructor(
    status: BundleErrorStatus,
    title: string,
    message: string,
    readonly errors: BundleIssue[] = [],
    readonly warnings: BundleIssue[] = [],
  ) {
    super(status, title, message, { errors, ...(warnings.length > 0 ? { warnings } : {}) });
    this.name = 'BundleError';
  }
}

/** A bundle whose paths are normalised: SKILL.md is at the root, no folder prefix remains. */
export interface NormalizedBundle {
  files: BundleFile[];
  /** The single top folder the upload was wrapped in, if any (used as a fallback skill name). */
  folderName?: string;
  /** Notes about what was dropped or changed while normalising (e.g. __MACOSX entries). */
  warnings: BundleIssue[];
}

/** A SKILL.md that passed validation. */
export interface ParsedSkill {
  name: string;
  description: string;
  /** The whole frontmatter as data, every key kept verbatim (name/description filled in when they fell back). */
  frontmatter: Record<string, unknown>;
  /** The Markdown after the frontmatter, with a BOM removed and CRLF turned into LF. */
  body: string;
  /** `metadata.version` when it is present, as a string. */
  metadataVersion?: string;
  warnings: BundleIssue[];
  /**
   * Whether SKILL.md's own frontmatter holds exactly `name` and `description`, so that it is already
   * what installers get (installable-skill-md.ts) and needs no second parse to tell.
   */
  declaresNameAndDescription?: boolean;
}
