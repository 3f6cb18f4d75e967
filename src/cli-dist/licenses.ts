import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Metafile } from 'esbuild';

const LICENSE_FILE = /^(licen[cs]e|copying)(\.(md|txt|mit|bsd))?$|^licen[cs]e-mit(\.txt)?$/i;

/**
 * The notices of the third-party packages bundled into the CLI (their licenses ask that copies carry
 * them): each package's name, version and license, then its license text, identical texts once. As a
 * comment, so the one downloaded file carries them.
 *
 * `projectRoot` is esbuild's absWorkingDir: metafile inputs are paths relative to it.
 */
export function thirdPartyNotices(metafile: Metafile, projectRoot: string): string {
  const packageDirs = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const dir = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
    if (dir) packageDirs.add(dir);
  }
  const byText = new Map<string, string[]>();
  for (const dir of [...packageDirs].sort()) {
    const full = path.join(projectRoot, dir);
    const manifest = JSON.parse(readFileSync(path.join(full, 'package.json'), 'utf8')) as {
      name?: string;
      version?: string;
      license?: string;
    };
    const file = readdirSync(full).find((name) => LICENSE_FILE.test(name));
    const text = file
      ? readFileSync(path.join(full, file), 'utf8').trim()
      : `(no license file; package.json says ${manifest.license ?? 'nothing'})`;
    const packages = byText.get(text) ?? [];
    packages.push(`${manifest.name ?? dir}@${manifest.version ?? '?'} (${manifest.license ?? 'see below'})`);
    byText.set(text, packages);
  }
  const sections = [...byText].map(([text, packages]) => `${packages.join('\n')}\n\n${text}`);
  const body = ['Third-party software bundled in this file, and its licenses:', ...sections].join(
    `\n\n${'-'.repeat(72)}\n\n`,
  );
  // A comment cannot hold its own terminator.
  return `/*!\n${body.replaceAll('*/', '* /')}\n*/\n`;
}
