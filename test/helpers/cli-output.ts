import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/main.js';
import type { Output } from '../../src/cli/output.js';

/** A CLI Output that keeps what a command prints (as the binary would print it to stdout and stderr). */
export function capturedOutput(): { output: Output; captured: { stdout: string; stderr: string } } {
  const captured = { stdout: '', stderr: '' };
  const output: Output = {
    info: (line) => {
      captured.stdout += `${line}\n`;
    },
    error: (line) => {
      captured.stderr += `${line}\n`;
    },
    raw: (text) => {
      captured.stdout += text;
    },
    rawError: (text) => {
      captured.stderr += text;
    },
    interactive: false,
  };
  return { output, captured };
}

/** The CLI in process (the same commands as the binary), its exit code and output captured. */
export async function cliInProcess(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { output, captured } = capturedOutput();
  const code = await runCli(args, output);
  return { code, ...captured };
}

/** What a run of the real binary printed, and how it ended. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export const SKILLREG_BIN = fileURLToPath(new URL('../../bin/skillreg.js', import.meta.url));

/** package.json's version, read here rather than through the code under test: what `skillreg -V` prints. */
export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * The environment of a run of the real binary: this process's, without any registry or database
 * setting, in CI mode (plain lines), pointed at `url` with `token`.
 */
export function binaryEnv(url: string, token?: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || key.startsWith('SKILLREG_') || key === 'DATABASE_URL') continue;
    env[key] = value;
  }
  return {
    ...env,
    CI: 'true',
    NO_COLOR: '1',
    SKILLREG_URL: url,
    ...(token ? { SKILLREG_TOKEN: token } : {}),
  };
}

/**
 * `node bin/skillreg.js <args>` as a real process. `env` entries override binaryEnv's (undefined removes
 * one); `closeStdout` closes the reading end of its stdout at once, as `| true` would.
 */
export function runSkillreg(
  args: string[],
  options: {
    cwd: string;
    url: string;
    token?: string;
    env?: Record<string, string | undefined>;
    closeStdout?: boolean;
  },
): Promise<CliRun> {
  const env = binaryEnv(options.url, options.token);
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  const child = spawn(process.execPath, [SKILLREG_BIN, ...args], { cwd: options.cwd, env });
  if (options.closeStdout) child.stdout.destroy();
  return outputOf(child);
}

/**
 * What a spawned process prints on stdout and stderr until it ends, and its exit code. Given
 * `timeoutMs`, a process still running then is killed (its code is then null).
 */
export function outputOf(child: ChildProcess, timeoutMs?: number): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The row of `sync`'s summary table for a folder: its cells (status, name, version, folder, reason). */
export function summaryRow(output: string, folder: string): string[] | undefined {
  return output
    .split('\n')
    .map((line) => line.split(/ {2,}/))
    .find((cells) => cells[3] === folder);
}

/** A run, for an assertion's message. */
export function showRun(run: CliRun): string {
  return `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
}
