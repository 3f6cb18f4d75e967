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

export function consoleOutput(): Output {
  return {
    info: (line) => process.stdout.write(`${line}\n`),
    error: (line) => process.stderr.write(`${line}\n`),
    raw: (text) => process.stdout.write(text),
    rawError: (text) => process.stderr.write(text),
    interactive: Boolean(process.stderr.isTTY) && !process.env.CI,
  };
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
      note(text) {
        output.info(`      ${text}`);
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
