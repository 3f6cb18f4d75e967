import { readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { BundleError } from '../bundle/types.js';
import { DEFAULT_RETRY, RegistryError, type RetryEvent, SkillRegistryClient } from '../client/index.js';
import type { Output } from './output.js';

const DEFAULT_URL = 'http://127.0.0.1:3000';

export function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return (JSON.parse(text) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Thrown for a failure already explained to the user: exit non-zero without a stack trace. */
export class ReportedFailure extends Error {}

export interface GlobalOptions {
  url: string;
  token?: string;
  retries: number;
  /** The commands that take them: --namespace (publish, sync, pull), --view (pull). */
  namespace?: string;
  view?: string;
}

/** `--namespace`, for the commands that read or write one namespace. */
export function namespaceOption(verb: string): Option {
  return new Option(
    '--namespace <namespace>',
    `namespace to ${verb} (default: default, the unprefixed API); the first publish into one creates it`,
  ).env('SKILLREG_NAMESPACE');
}

function parseRetries(value: string): number {
  const retries = Number(value);
  if (!Number.isInteger(retries) || retries < 0 || retries > 10)
    throw new InvalidArgumentError('expected a whole number from 0 to 10');
  return retries;
}

/** The options every command accepts, read back with `command.optsWithGlobals<GlobalOptions>()`. */
export function addGlobalOptions(program: Command): Command {
  return program
    .addOption(new Option('--url <url>', 'registry base URL').env('SKILLREG_URL').default(DEFAULT_URL))
    .addOption(
      new Option('--token <token>', 'bearer token; writes need scope publish, token commands admin').env(
        'SKILLREG_TOKEN',
      ),
    )
    .addOption(
      new Option(
        '--retries <n>',
        'retries of a request the registry refuses for now (429, 503) or that cannot connect; 0 disables',
      )
        .env('SKILLREG_RETRIES')
        .argParser(parseRetries)
        .default(DEFAULT_RETRY.retries),
    );
}

/** What every command module is given: where to write, and how to reach the registry. */
export interface CliContext {
  output: Output;
  /**
   * The client of a command, from its global options. `onRetry` says where "waiting" lines go (sync puts
   * them in its progress); by default they go to stderr, so the output of a command stays what it prints
   * on success.
   */
  clientOf(command: Command, onRetry?: (event: RetryEvent) => void): SkillRegistryClient;
}

export function createContext(output: Output): CliContext {
  return {
    output,
    clientOf(command, onRetry = (event) => output.error(`skillreg: ${describeRetry(event)}`)) {
      const options = command.optsWithGlobals<GlobalOptions>();
      return new SkillRegistryClient({
        url: options.url,
        token: options.token || undefined,
        ...(options.namespace ? { namespace: options.namespace } : {}),
        ...(options.view ? { view: options.view } : {}),
        headers: { 'user-agent': `skillreg-cli/${packageVersion()}` },
        retry: { retries: options.retries, onRetry },
      });
    },
  };
}

/** One line saying that a request is waiting to be retried, so a long wait does not look like a hang. */
export function describeRetry(event: RetryEvent): string {
  const seconds =
    event.delayMs >= 10_000 ? Math.round(event.delayMs / 1000) : (event.delayMs / 1000).toFixed(1);
  const why =
    event.status === 429
      ? 'rate limited (429)'
      : event.status === 503
        ? 'registry unavailable (503)'
        : `cannot reach the registry (${event.reason})`;
  return `${why}; retrying ${event.method} ${event.path.split('?')[0]} in ${seconds} s${event.retryAfter ? ' as Retry-After asks' : ''} (attempt ${event.attempt + 1} of ${event.attempts})`;
}

export function networkCause(error: unknown): string | undefined {
  if (!(error instanceof TypeError) || !error.message.includes('fetch failed')) return undefined;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? 'network error';
}

/** Turns registry and bundle errors into the lines a person needs: status, detail, every listed problem. */
export function explain(output: Output, error: unknown, context = '', url?: string): void {
  const prefix = context ? `${context}: ` : '';
  if (error instanceof RegistryError) {
    const title = error.problem.title ? ` ${error.problem.title}` : '';
    output.error(`${prefix}${error.status}${title} - ${error.problem.detail}`);
    for (const issue of error.problem.errors ?? []) {
      if (issue.detail !== error.problem.detail) output.error(`  ${issue.path}: ${issue.detail}`);
    }
  } else if (error instanceof BundleError) {
    output.error(`${prefix}${error.message}`);
    for (const issue of error.errors)
      if (issue.detail !== error.message) output.error(`  ${issue.path}: ${issue.detail}`);
  } else if (networkCause(error)) {
    output.error(
      `${prefix}cannot reach the registry${url ? ` at ${url}` : ''} (${networkCause(error)}); check --url / SKILLREG_URL`,
    );
  } else {
    output.error(`${prefix}${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The "Examples:" block of a help text. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`;
}
