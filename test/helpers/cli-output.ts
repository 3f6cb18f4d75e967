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
