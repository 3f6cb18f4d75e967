import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { BundleFile } from '../bundle/types.js';
import type { ExternalScannerConfig } from '../config.js';
import {
  type Finding,
  RULES_VERSION,
  SEVERITIES,
  type Severity,
  scanBundle,
  verdictOf,
} from '../scan/index.js';
import { type StoredScan, withFingerprints } from './quarantine.js';

/**
 * Every scan the registry runs (publish, rescan): the built-in rules (src/scan, pure) and, when
 * SKILLREG_SCANNER_CMD is set, an external scanner run on the unpacked bundle, its findings merged.
 */

/** What the external scanner may print before it counts as a failure (its findings are a few KiB). */
export const MAX_SCANNER_OUTPUT_BYTES = 4 * 1024 * 1024;
/** Findings an external scanner may report; more is a failure, not a truncated list. */
export const MAX_SCANNER_FINDINGS = 1_000;
/** The rule of the finding a failed or timed-out external scanner yields. */
export const SCANNER_ERROR_RULE = 'scanner-error';

const externalFindingSchema = z.object({
  rule: z.string().min(1).max(200),
  severity: z.enum(SEVERITIES),
  path: z.string().max(1_000),
  line: z.number().int().min(0),
  detail: z.string().max(4_000),
});

const externalOutputSchema = z.union([
  z.array(externalFindingSchema).max(MAX_SCANNER_FINDINGS),
  z.object({ findings: z.array(externalFindingSchema).max(MAX_SCANNER_FINDINGS) }).loose(),
]);

export interface ScanningOptions {
  blockSeverity: Severity;
  /** The built-in rules' time budget (default SCAN_BUDGET_MS). */
  budgetMs?: number;
  scanner?: ExternalScannerConfig;
}

export class ScanService {
  constructor(private readonly options: ScanningOptions) {}

  /** The rules a verdict is reached with: the built-in version, and the external scanner when set. */
  get rules(): string {
    return this.options.scanner ? `${RULES_VERSION}+external` : RULES_VERSION;
  }

  /** Findings at or above this severity block (SKILLREG_SCAN_BLOCK_SEVERITY). */
  get blockSeverity(): Severity {
    return this.options.blockSeverity;
  }

  /** The scan of a bundle, each finding fingerprinted (rule, file, matched text) for releases. */
  async scan(files: readonly BundleFile[]): Promise<StoredScan> {
    const builtIn = await scanBundle(files, {
      blockSeverity: this.options.blockSeverity,
      budgetMs: this.options.budgetMs,
    });
    const scanner = this.options.scanner;
    if (!scanner) return withFingerprints(builtIn, files);
    const external = await runExternalScanner(scanner, files);
    const findings = [...builtIn.findings, ...external];
    return withFingerprints(
      { verdict: verdictOf(findings, this.options.blockSeverity), rules: this.rules, findings },
      files,
    );
  }
}

/** The external scanner's findings, or one `scanner-error` finding when it fails in any way. */
export async function runExternalScanner(
  scanner: ExternalScannerConfig,
  files: readonly BundleFile[],
): Promise<Finding[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'skillreg-scan-'));
  try {
    const bundle = path.join(dir, 'bundle');
    await unpack(bundle, files);
    const outcome = await runCommand(scanner.command, bundle, scanner.timeoutMs);
    if (outcome.failure) return [scannerError(scanner, outcome.failure)];
    let parsed: unknown;
    try {
      parsed = JSON.parse(outcome.stdout);
    } catch {
      return [scannerError(scanner, `it printed something that is not JSON: ${excerpt(outcome.stdout)}`)];
    }
    const checked = externalOutputSchema.safeParse(parsed);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      return [
        scannerError(
          scanner,
          `its output is not a JSON array of findings nor {findings: [...]} (${issue ? `${issue.path.join('.') || 'output'}: ${issue.message}` : 'invalid'}); each finding is {rule, severity: low|medium|high|critical, path, line, detail}, at most ${MAX_SCANNER_FINDINGS}`,
        ),
      ];
    }
    const findings = Array.isArray(checked.data) ? checked.data : checked.data.findings;
    return findings.map((finding) => ({ ...finding, path: bundleRelative(finding.path, bundle) }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function unpack(root: string, files: readonly BundleFile[]): Promise<void> {
  await mkdir(root, { recursive: true });
  for (const file of files) {
    // Paths were validated at parse time (relative, no `..`), so they stay inside the root.
    const target = path.join(root, file.path);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, file.bytes);
    if (file.mode & 0o111) await chmod(target, 0o755);
  }
}

/** Scanners often print absolute paths; findings name files relative to the bundle root. */
function bundleRelative(reported: string, bundle: string): string {
  if (reported.startsWith(`${bundle}/`)) return reported.slice(bundle.length + 1);
  if (reported === bundle) return '.';
  return reported.replace(/^\.\//, '');
}

function scannerError(scanner: ExternalScannerConfig, why: string): Finding {
  return {
    rule: SCANNER_ERROR_RULE,
    severity: scanner.failSeverity,
    path: '.',
    line: 0,
    detail: `the external scanner (SKILLREG_SCANNER_CMD) failed, so the bundle counts as unscanned by it: ${why}`,
  };
}

function excerpt(text: string, limit = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > limit ? `${flat.slice(0, limit)}...` : flat || '(nothing)';
}

interface CommandOutcome {
  stdout: string;
  failure?: string;
}

/**
 * Runs `command` through the shell with `dir` as its first argument ($1, never spliced into the
 * text), in a process group of its own so a timeout kills whatever it started too.
 */
function runCommand(command: string, dir: string, timeoutMs: number): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', `${command} "$1"`, 'skillreg-scanner', dir], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let failure: string | undefined;
    const stop = (why: string) => {
      failure ??= why;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(
      () => stop(`it did not finish within ${timeoutMs} ms (SKILLREG_SCANNER_TIMEOUT_MS)`),
      timeoutMs,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > MAX_SCANNER_OUTPUT_BYTES) {
        stop(`it printed more than ${MAX_SCANNER_OUTPUT_BYTES} bytes`);
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2_000) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => stop(`it could not be started (${error.message})`));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (!failure && code !== 0) {
        failure = `it exited with ${code === null ? `signal ${signal}` : `status ${code}`}${stderr.trim() ? `: ${excerpt(stderr)}` : ''}`;
      }
      resolve({ stdout: Buffer.concat(stdout).toString('utf8'), failure });
    });
  });
}
