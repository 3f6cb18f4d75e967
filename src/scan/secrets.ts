import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import { liveShaped, providerSecretFindings } from './rules/secret-patterns.js';
import type { Finding } from './types.js';

/**
 * Committed secrets, found by secretlint's recommended preset (private keys, AWS, GCP, GitHub, Slack,
 * npm, OpenAI and more, with their checksums and formats), so the patterns are maintained upstream;
 * the providers it does not know and credential files come from rules/secret-patterns.ts. One finding
 * a line: secretlint's first, then the provider's, then the credential file's.
 */
/**
 * secretlint 11 marks every rule run on the global performance timeline and its profiler keeps every
 * mark for good, searching them all at each new one (secretlint#1633; the fix needs Node 22). In a
 * process that scans every publish, that made each publish slower than the last and memory grow.
 * Its marks are dropped instead: the registry never reads secretlint's profile.
 */
(secretLintProfiler as unknown as { perf: Pick<Performance, 'mark' | 'measure'> }).perf = {
  mark: () => undefined as never,
  measure: () => undefined as never,
};

const CONFIG = { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: recommended }] };

/** A PEM private key block with a body (secretlint skips short ones, such as Ed25519 PKCS#8 keys). */
const PRIVATE_KEY_BLOCK = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----\r?\n(?:[A-Za-z0-9+/=]{16,}\r?\n?){1,}/;

export async function secretFindings(path: string, text: string, providers = true): Promise<Finding[]> {
  const own: Finding[] = [];
  const block = PRIVATE_KEY_BLOCK.exec(text);
  if (block) {
    own.push({
      rule: 'committed-secrets/privatekey',
      severity: 'high',
      path,
      line: text.slice(0, block.index).split('\n').length,
      detail:
        'a private key is committed here: anyone who installs the skill gets it. Revoke it, remove it from the bundle and read it from the environment or a secret store instead',
    });
  }
  const result = await lintSource({
    source: { filePath: path, content: text, contentType: 'text' },
    options: { config: CONFIG as never, maskSecrets: true },
  });
  // A placeholder secretlint takes for a token (`ghp_xxxx...`, `xoxb-000...`) is no secret.
  const live = result.messages.filter((message) => {
    const rule = String(message.ruleId);
    if (/privatekey|database-connection-string/.test(rule) || !message.range) return true;
    return liveShaped(text.slice(message.range[0], message.range[1]));
  });
  const found = live.map((message) => {
    const rule = String(message.ruleId).replace(/^@secretlint\/secretlint-rule-/, '');
    return {
      rule: `committed-secrets/${rule}`,
      // Connection strings in documentation are mostly examples (user:password@localhost): flagged only.
      severity: rule === 'database-connection-string' ? ('medium' as const) : ('high' as const),
      path,
      line: message.loc?.start?.line ?? 0,
      detail: `a secret is committed here (${message.message.split(':')[0]}): anyone who installs the skill gets it. Revoke it, remove it from the bundle and read it from the environment instead`,
    };
  });
  // One finding a key block: the upstream rule and this one agree on most keys.
  const upstream = found.filter(
    (finding) => !own.some((mine) => mine.rule === finding.rule && mine.line === finding.line),
  );
  const kept = [...own, ...upstream];
  const lines = new Set(kept.map((finding) => finding.line));
  for (const finding of providers ? providerSecretFindings(path, text) : []) {
    if (lines.has(finding.line)) continue;
    lines.add(finding.line);
    kept.push(finding);
  }
  return kept;
}
