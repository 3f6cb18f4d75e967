import cliProgress from 'cli-progress';

/** Where the CLI writes; tests capture it, the binary sends it to stdout/stderr. */
export interface Output {
  info(line: string): void;
  error(line: string): void;
  raw(text: string): void;
  rawError(text: string): void;
  /** A person at a terminal (progress bars) rather than a CI log (plain lines). */
  interactive: boolean;
}

let closedPipesEndQuietly = false;

/**
 * `skillreg list | head -1`: once the reader has gone, writing fails with EPIPE. Like any Unix tool
 * the command ends there, quietly and with exit code 0, instead of an unhandled 'error' stack trace.
 */
function endQuietlyOnClosedPipe(): void {
  if (closedPipesEndQuietly) return;
  closedPipesEndQuietly = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
      throw error;
    });
  }
}

export function consoleOutput(): Output {
  endQuietlyOnClosedPipe();
  return {
    info: (line) => process.stdout.write(`${line}\n`),
    error: (line) => process.stderr.write(`${line}\n`),
    raw: (text) => process.stdout.write(text),
    rawError: (text) => process.stderr.write(text),
    interactive: Boolean(process.stderr.isTTY) && !process.env.CI,
  };
}

/**
 * Ends the process with `code` once stdout and stderr are flushed, without waiting for idle keep-alive
 * sockets or database pools: how bin/skillreg.js and the standalone CLI end every command but `serve`.
 */
export async function exitWhenFlushed(code: number): Promise<never> {
  await Promise.all(
    [process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))),
  );
  process.exit(code);
}

export interface Progress {
  update(label: string): void;
  /** Something the current item is waiting for (e.g. a retry after 429), shown without advancing. */
  note(text: string): void;
  stop(): void;
}

/** A progress bar on a terminal; in CI one plain line per item so the log reads top to bottom. */
export function createProgress(output: Output, total: number): Progress {
  if (!output.interactive) {
    let done = 0;
    return {
      update(label) {
        done += 1;
        output.info(`[${done}/${total}] ${label}`);
      },
      // A wait is a warning, not a result: stderr, so stdout stays the log of what was done.
      note(text) {
        output.error(`      ${text}`);
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      format: '{bar} {value}/{total} {label}',
      hideCursor: true,
      clearOnComplete: true,
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { label: '' });
  let current = '';
  return {
    update(label) {
      current = label;
      bar.increment(1, { label });
    },
    note(text) {
      bar.update({ label: `${current} (${text})` });
    },
    stop() {
      bar.stop();
    },
  };
}

/** One warning about a skill (the server's rules), as validate, publish and sync print it on stderr. */
export function printWarnings(
  output: Output,
  issues: readonly { path: string; detail: string }[],
  folder?: string,
): void {
  for (const issue of issues) {
    output.error(`  warn   ${folder ? `${folder}: ` : ''}${issue.path}: ${issue.detail}`);
  }
}

/** What the security scan found, one finding per line on stderr (a finding is a warning or worse). */
export function printFindings(
  output: Output,
  findings: readonly { severity: string; path: string; line: number; rule: string; detail: string }[],
  folder?: string,
): void {
  for (const finding of findings) {
    const where = `${folder ? `${folder}: ` : ''}${finding.path}${finding.line > 0 ? `:${finding.line}` : ''}`;
    output.error(`  ${finding.severity.padEnd(8)} ${where}  ${finding.rule}: ${finding.detail}`);
  }
}

/** Long free text (a description) cut to fit a table cell, the cut marked with an ellipsis. */
export function clip(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

/** `--json`: the registry's answer as it came, indented, on stdout. */
export function printJson(output: Output, value: unknown): void {
  output.info(JSON.stringify(value, null, 2));
}

export function printTable(output: Output, headers: string[], rows: string[][]): void {
  const widths = headers.map((header, column) =>
    Math.min(60, Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length))),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  output.info(line(headers.map((header) => header.toUpperCase())));
  for (const row of rows) output.info(line(row));
}
