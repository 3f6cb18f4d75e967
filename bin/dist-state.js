// Whether dist/ holds the compiled form of the sources as they are now: shared by `npm start`'s
// prestart (bin/build-if-stale.js) and the `skillreg` command in a clone (bin/skillreg.js).
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Written by each successful compile (incremental tsc's build info, touched after it). */
export const STAMP = path.join(ROOT, 'dist/.tsbuildinfo');
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];

/** The latest change under a path; a folder's own time counts too, so a deleted file is a change. */
function latestChange(target) {
  const stats = statSync(target, { throwIfNoEntry: false });
  if (!stats) return 0;
  if (!stats.isDirectory()) return stats.mtimeMs;
  let latest = stats.mtimeMs;
  for (const entry of readdirSync(target)) latest = Math.max(latest, latestChange(path.join(target, entry)));
  return latest;
}

/** True when `entry` (a path under dist/) exists and dist/ was compiled after the last change to its inputs. */
export function distIsFresh(entry) {
  if (!existsSync(STAMP) || !existsSync(path.join(ROOT, entry))) return false;
  const built = statSync(STAMP).mtimeMs;
  return INPUTS.every((input) => latestChange(path.join(ROOT, input)) < built);
}
