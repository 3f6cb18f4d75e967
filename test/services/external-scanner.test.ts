import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExternalScannerConfig } from '../../src/config.js';
import {
  MAX_SCANNER_OUTPUT_BYTES,
  runExternalScanner,
  SCANNER_ERROR_RULE,
  ScanService,
} from '../../src/services/scanning.js';
import { files, skillMd } from '../helpers/bundles.js';

const scriptDirs: string[] = [];
afterAll(() => {
  for (const dir of scriptDirs) rmSync(dir, { recursive: true, force: true });
});

/** A scanner script in a directory of its own (removed after the file); `body` is shell, the bundle is $1. */
function script(body: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'skillreg-scanner-test-'));
  scriptDirs.push(dir);
  const file = path.join(dir, 'scanner.sh');
  writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

const bundle = files({
  'SKILL.md': skillMd({
    name: 'scanned',
    description: 'Scanned by an external tool.',
    body: '# Use\n\nMARKER\n',
  }),
  'scripts/run.sh': '#!/bin/sh\necho hi\n',
});

const scanner = (command: string, extra: Partial<ExternalScannerConfig> = {}): ExternalScannerConfig => ({
  command,
  timeoutMs: 10_000,
  failSeverity: 'high',
  ...extra,
});

describe('the external scanner hook (SKILLREG_SCANNER_CMD)', () => {
  it('runs on the unpacked bundle (argument 1) and reads a JSON array of findings, paths made relative', async () => {
    const command = script(
      `grep -n MARKER "$1/SKILL.md" >/dev/null || exit 5
test -f "$1/scripts/run.sh" || exit 6
printf '[{"rule":"ext/marker","severity":"medium","path":"%s/SKILL.md","line":7,"detail":"found the marker"}]' "$1"`,
    );
    const findings = await runExternalScanner(scanner(command), bundle);
    expect(findings).toEqual([
      { rule: 'ext/marker', severity: 'medium', path: 'SKILL.md', line: 7, detail: 'found the marker' },
    ]);
  });

  it('reads {findings: [...]} too, and merges the findings with the built-in ones into one verdict', async () => {
    const command = script(
      `echo '{"tool":"demo","findings":[{"rule":"ext/bad","severity":"critical","path":"scripts/run.sh","line":2,"detail":"bad"}]}'`,
    );
    const service = new ScanService({ blockSeverity: 'high', scanner: scanner(command) });
    const result = await service.scan(bundle);
    expect(result.verdict).toBe('block');
    expect(result.rules).toMatch(/\+external$/);
    expect(result.findings).toEqual([expect.objectContaining({ rule: 'ext/bad', path: 'scripts/run.sh' })]);
  });

  it('an empty array is a pass', async () => {
    const service = new ScanService({ blockSeverity: 'high', scanner: scanner(script('echo "[]"')) });
    expect((await service.scan(bundle)).verdict).toBe('pass');
  });

  const failures: [string, string, RegExp, Partial<ExternalScannerConfig>?][] = [
    [
      'a non-zero exit',
      'echo "[]"; echo "engine crashed" >&2; exit 3',
      /exited with status 3: engine crashed/,
    ],
    ['output that is not JSON', 'echo "all good!"', /not JSON: all good!/],
    ['JSON of another shape', `echo '{"ok":true}'`, /not a JSON array of findings/],
    ['a finding without a severity', `echo '[{"rule":"x","path":"a","line":1,"detail":"d"}]'`, /severity/],
    ['a timeout', 'sleep 20; echo "[]"', /did not finish within 300 ms/, { timeoutMs: 300 }],
    ['huge output', `yes '[' | head -c ${MAX_SCANNER_OUTPUT_BYTES * 3}`, /printed more than/],
    ['a command that does not exist', '/nonexistent/scanner-binary', /exited with status 127/],
  ];
  for (const [what, body, detail, extra] of failures) {
    it(`turns ${what} into a ${SCANNER_ERROR_RULE} finding at SKILLREG_SCANNER_FAIL`, async () => {
      const command = body.startsWith('/nonexistent') ? body : script(body);
      const started = performance.now();
      const findings = await runExternalScanner(
        scanner(command, { failSeverity: 'medium', ...extra }),
        bundle,
      );
      expect(findings).toEqual([
        {
          rule: SCANNER_ERROR_RULE,
          severity: 'medium',
          path: '.',
          line: 0,
          detail: expect.stringMatching(detail),
        },
      ]);
      if (extra?.timeoutMs) expect(performance.now() - started).toBeLessThan(5_000);
    });
  }

  it('a failure at the default severity blocks', async () => {
    const service = new ScanService({ blockSeverity: 'high', scanner: scanner(script('exit 1')) });
    const result = await service.scan(bundle);
    expect(result.verdict).toBe('block');
    expect(result.findings[0]!.rule).toBe(SCANNER_ERROR_RULE);
  });
});
