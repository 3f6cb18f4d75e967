import { normalizeBundle } from './archive-read.js';
import { bundleDigest } from './digest.js';
import type { BundleFile, BundleLimits, ParsedSkill } from './types.js';
import { validateBundle } from './validate.js';

export interface PreparedBundle {
  files: BundleFile[];
  skill: ParsedSkill;
  digest: string;
}

/**
 * The whole offline pipeline from uploaded files to a publishable skill: normalise paths,
 * validate SKILL.md, compute the digest. The server and `skillreg validate` both run exactly this.
 */
export function prepareBundle(
  rawFiles: BundleFile[],
  options: { nameOverride?: string; limits: BundleLimits },
): PreparedBundle {
  const bundle = normalizeBundle(rawFiles, options.limits);
  const skill = validateBundle(bundle, options);
  return { files: bundle.files, skill, digest: bundleDigest(bundle.files) };
}
