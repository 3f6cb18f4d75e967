/**
 * How the service stops. Process managers signal the process they started: for `npm start` that is npm,
 * which passes SIGTERM and SIGINT on to the script's shell (the start script `exec`s node, so the shell
 * is node). `npx skillreg serve` runs the command through a shell that does not pass signals on: when
 * the process that started us goes away, nothing will ever signal us, so that is a stop too.
 */
export interface StopOptions {
  /** Drains in-flight requests and releases what the process holds; resolves when done. */
  stop: (reason: string) => Promise<void>;
  /** Longest time the drain may take before the process exits anyway. */
  drainMs: number;
  log: { info(fields: object, message: string): void; error(message: string): void };
  /** Watch the parent process (started by npm or npx): its exit stops the service. */
  watchParent: boolean;
}

const PARENT_POLL_MS = 250;

export function handleStops(options: StopOptions): void {
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    options.log.info({ signal: reason }, 'shutting down: draining in-flight requests');
    // Exit even if the drain hangs, before an orchestrator's own kill timeout.
    setTimeout(() => {
      options.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, options.drainMs).unref();
    options.stop(reason).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => stop('SIGHUP'));
  if (options.watchParent) {
    const parent = process.ppid;
    const timer = setInterval(() => {
      if (process.ppid !== parent) {
        clearInterval(timer);
        stop('parent exited');
      }
    }, PARENT_POLL_MS);
    timer.unref();
  }
}

/** True when npm (npm start, npm run, npx) started this process, through a shell of its own. */
export function startedByNpm(env: Record<string, string | undefined>): boolean {
  return Boolean(env.npm_lifecycle_event || env.npm_command);
}
