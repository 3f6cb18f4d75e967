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
