import { type Command, InvalidArgumentError, Option } from 'commander';
import { BundleError } from '../bundle/types.js';
import { DEFAULT_RETRY, RegistryError, type RetryEvent, SkillRegistryClient } from '../client/index.js';
import { packageVersion } from '../process/package-version.js';
import type { Output } from './output.js';

const DEFAULT_URL = 'http://127.0.0.1:3000';

/** Thrown for a failure already explained to the user: exit non-zero without a stack trace. */
export class ReportedFailure extends Error {}

export interface GlobalOptions {
  url: string;
  token?: string;
  retries: number;
  /** The commands that take them: --namespace (reads and writes), --view (reads: list, search, info, pull). */
  namespace?: string;
  view?: string;
}

/** `--view`, for the commands that read: what the view resolves each name to. */
export function viewOption(): Option {
  return new Option(
    '--view <view>',
    'read through a view: each name as its layers resolve it (views are read-only)',
  ).env('SKILLREG_VIEW');
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
      new Option(
        '--token <token>',
        'bearer token; writes need scope publish, token and view changes admin',
      ).env('SKILLREG_TOKEN'),
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
  clientOf(
    command: Command,
    onRetry?: (event: RetryEvent) => void,
    /** A token to use instead of --token (trusted publishing's exchanged one). */
    token?: string,
  ): SkillRegistryClient;
}

export function createContext(output: Output): CliContext {
  return {
    output,
    clientOf(command, onRetry = (event) => output.error(`skillreg: ${describeRetry(event)}`), token) {
      const options = command.optsWithGlobals<GlobalOptions>();
      return new SkillRegistryClient({
        url: options.url,
        token: token ?? (options.token || undefined),
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
    const hint = tokenHint(error);
    if (hint) output.error(`hint: ${hint}`);
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

/**
 * What to set after a 401 or a 403 about the token: the variable or flag, and how to get a token that
 * will do. The registry's problem says which scope (`requiredScope`) and namespace the request needed.
 */
export function tokenHint(error: RegistryError): string | undefined {
  const { status, problem } = error;
  if (status !== 401 && status !== 403) return undefined;
  const scope = typeof problem.requiredScope === 'string' ? problem.requiredScope : undefined;
  const namespace = typeof problem.namespace === 'string' ? problem.namespace : undefined;
  const limited = Array.isArray(problem.namespaces);
  const set = 'set SKILLREG_TOKEN or pass --token';
  const create = (scopeWanted: string, extra = '') =>
    `skillreg token create --name <name> --scope ${scopeWanted}${extra}, run with an admin token`;
  if (status === 401 && problem.reason !== 'missing') {
    return `the token from --token or SKILLREG_TOKEN was refused: ${set} with a valid one${scope ? ` with scope '${scope}'` : ''} (writes need scope publish, token and view changes admin; ${create(scope ?? 'publish')})`;
  }
  if (!scope) return undefined;
  if (scope === 'admin' && !namespace) {
    const which = limited ? 'a token with scope admin that is not limited to namespaces' : 'an admin token';
    return `${set} with ${which} (the server's SKILLREG_ADMIN_TOKEN, or ${create('admin')})`;
  }
  if (namespace && limited) {
    return `${set} with a token for namespace '${namespace}' (${create(scope, ` --namespace ${namespace}`)})`;
  }
  return `${set} with a token with scope '${scope}' (${create(scope)})`;
}

/** The "Examples:" block of a help text. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`;
}
