import type { Command } from 'commander';
import { Option } from 'commander';
import type { RetryEvent, SkillRegistryClient } from '../client/index.js';
import { type CliContext, ReportedFailure } from './context.js';

/**
 * `--oidc` for publish and sync: trusted publishing from CI without a stored secret. In GitHub Actions
 * (a job with `permissions: id-token: write`) the runner hands out ID tokens at
 * ACTIONS_ID_TOKEN_REQUEST_URL; one with the registry as its audience is exchanged at POST /oidc/exchange
 * for a publish token of a few minutes, which the command then uses.
 */

export function oidcOptions(): Option[] {
  return [
    new Option(
      '--oidc',
      "publish with the CI job's OIDC identity instead of a token (GitHub Actions: permissions id-token: write)",
    ),
    new Option(
      '--oidc-audience <audience>',
      "the audience to request the ID token for (default: the registry's URL; must match the registry's SKILLREG_OIDC_AUDIENCE)",
    ).env('SKILLREG_OIDC_AUDIENCE'),
  ];
}

export interface OidcFlags {
  oidc?: boolean;
  oidcAudience?: string;
}

/** A GitHub Actions ID token for `audience`, from the runner's token endpoint. */
export async function githubActionsIdToken(
  audience: string,
  env: Record<string, string | undefined> = process.env,
): Promise<string> {
  const requestUrl = env.ACTIONS_ID_TOKEN_REQUEST_URL;
  const requestToken = env.ACTIONS_ID_TOKEN_REQUEST_TOKEN;
  if (!requestUrl || !requestToken) {
    throw new Error(
      'no OIDC token source: ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN are not set. --oidc works in a GitHub Actions job with `permissions: id-token: write`; elsewhere use --token',
    );
  }
  const url = new URL(requestUrl);
  url.searchParams.set('audience', audience);
  const response = await fetch(url, {
    headers: { authorization: `bearer ${requestToken}`, accept: 'application/json' },
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(
      `the CI's OIDC token endpoint answered ${response.status}: ${text.slice(0, 300) || '(empty)'}`,
    );
  }
  let value: unknown;
  try {
    value = (JSON.parse(text) as { value?: unknown }).value;
  } catch {
    value = undefined;
  }
  if (typeof value !== 'string' || value.split('.').length !== 3) {
    throw new Error("the CI's OIDC token endpoint answered without a token in 'value'");
  }
  return value;
}

/**
 * The client a writing command uses: as given, or with --oidc one holding a publish token exchanged
 * for the job's ID token. Explains and fails when the exchange cannot be made.
 */
export async function publishingClient(
  command: Command,
  { output, clientOf }: CliContext,
  onRetry?: (event: RetryEvent) => void,
): Promise<SkillRegistryClient> {
  const client = clientOf(command, onRetry);
  const { oidc, oidcAudience, url } = command.optsWithGlobals<OidcFlags & { url: string }>();
  if (!oidc) return client;
  const audience = oidcAudience || url.replace(/\/+$/, '');
  let idToken: string;
  try {
    idToken = await githubActionsIdToken(audience);
  } catch (error) {
    output.error(`--oidc: ${(error as Error).message}`);
    throw new ReportedFailure();
  }
  const exchanged = await client.exchangeOidcToken(idToken);
  output.error(
    `trusted publishing: exchanged the job's OIDC token (audience ${audience}) for a publish token for ${exchanged.namespaces.join(', ')}, valid until ${exchanged.expiresAt}`,
  );
  return clientOf(command, onRetry, exchanged.secret);
}
