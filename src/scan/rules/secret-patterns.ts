import type { Finding, Severity } from '../types.js';

/**
 * Token shapes secretlint's recommended preset does not know (payment, messaging, e-mail, LLM and
 * cloud providers, GitLab, Bitbucket, PyPI), written after the providers' documented prefixes and the
 * shapes gitleaks' public rule set uses; no maintained npm rule set covers them (see docs/SECURITY.md).
 * Plus credential files (`.env`, `.netrc`, `.npmrc`, `.pypirc`, `.git-credentials`, Docker configs)
 * whose values are secrets whatever their shape. A placeholder (`your-key-here`, `xxxx`, `EXAMPLE`,
 * `${VAR}`, low-entropy filler) is no secret; a test-mode key is one of little worth (low).
 */

interface SecretPattern {
  id: string;
  /** What the publisher is told it is. */
  name: string;
  /** Every occurrence; group 1, when present, is the secret itself. */
  pattern: RegExp;
  /** Substrings one of which any match (or its context) holds: the pattern only runs on texts holding one. */
  keyword: string | readonly string[];
  /** Severity for a live-shaped value (default high). */
  severity?: Severity;
  /** A structural check of the value, where the format has one. */
  valid?: (value: string) => boolean;
}

/** A Discord bot token starts with the bot's numeric id in base64. */
function discordId(value: string): boolean {
  const id = value.split('.')[0]!;
  return /^\d{17,20}$/.test(Buffer.from(id, 'base64').toString('latin1'));
}

const PATTERNS: readonly SecretPattern[] = [
  {
    id: 'stripe',
    name: 'Stripe live secret key',
    keyword: 'k_live_',
    pattern: /\b(?:sk|rk)_live_[0-9a-zA-Z]{20,247}\b/g,
  },
  {
    id: 'stripe',
    name: 'Stripe test-mode key',
    keyword: 'k_test_',
    pattern: /\b(?:sk|rk)_test_[0-9a-zA-Z]{20,247}\b/g,
    severity: 'low',
  },
  {
    id: 'stripe',
    name: 'Stripe webhook signing secret',
    keyword: 'whsec_',
    pattern: /\bwhsec_[A-Za-z0-9+/]{32,}\b/g,
  },
  {
    id: 'square',
    name: 'Square access token or secret',
    keyword: 'sq0',
    pattern: /\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,60}\b/g,
  },
  { id: 'square', name: 'Square access token', keyword: 'EAAA', pattern: /\bEAAA[0-9A-Za-z_-]{56,64}\b/g },
  {
    id: 'braintree',
    name: 'PayPal Braintree production access token',
    keyword: '$production$',
    pattern: /\baccess_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}\b/g,
  },
  {
    id: 'braintree',
    name: 'PayPal Braintree sandbox access token',
    keyword: '$sandbox$',
    pattern: /\baccess_token\$sandbox\$[0-9a-z]{16}\$[0-9a-f]{32}\b/g,
    severity: 'low',
  },
  {
    id: 'slack',
    name: 'Slack token',
    keyword: 'xox',
    pattern: /\bxox[abposre]-(?:\d+-)?[0-9A-Za-z-]{20,}\b/g,
  },
  {
    id: 'slack',
    name: 'Slack app token',
    keyword: 'xapp-',
    pattern: /\bxapp-\d-[A-Z0-9]{9,12}-\d{10,14}-[a-f0-9]{48,}\b/g,
  },
  {
    id: 'slack',
    name: 'Slack webhook URL',
    keyword: 'hooks.slack.com',
    pattern:
      /\bhooks\.slack\.com\/(?:services|workflows|triggers)\/T[A-Z0-9]{6,12}\/[A-Z0-9]{6,14}\/[A-Za-z0-9]{18,}/g,
  },
  {
    id: 'discord',
    name: 'Discord webhook URL',
    keyword: '/api/webhooks/',
    pattern: /\bdiscord(?:app)?\.com\/api\/webhooks\/\d{17,20}\/[\w-]{60,68}/g,
  },
  {
    id: 'discord',
    name: 'Discord bot token',
    keyword: ['iscord', 'ISCORD', 'bot', 'Bot', 'BOT'],
    pattern: /\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}\b/g,
    valid: discordId,
  },
  {
    id: 'telegram',
    name: 'Telegram bot token',
    keyword: ':AA',
    pattern: /\b\d{8,10}:AA[0-9A-Za-z_-]{33}\b/g,
  },
  { id: 'twilio', name: 'Twilio API key', keyword: ['wilio', 'WILIO'], pattern: /\bSK[0-9a-f]{32}\b/g },
  {
    id: 'twilio',
    name: 'Twilio auth token',
    keyword: ['wilio', 'WILIO'],
    pattern: /\bAC[0-9a-f]{32}\b[^\n]{0,80}?\b([0-9a-f]{32})\b/g,
  },
  { id: 'mailgun', name: 'Mailgun API key', keyword: 'key-', pattern: /\bkey-[0-9a-f]{32}\b/g },
  { id: 'mailchimp', name: 'Mailchimp API key', keyword: '-us', pattern: /\b[0-9a-f]{32}-us\d{1,2}\b/g },
  {
    id: 'postmark',
    name: 'Postmark server token',
    keyword: ['ostmark', 'OSTMARK'],
    pattern:
      /postmark[\w.-]{0,30}["']?\s*[:=]\s*["']?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/gi,
  },
  {
    id: 'openai',
    name: 'OpenAI API key',
    keyword: 'sk-',
    pattern:
      /\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b|\bsk-[A-Za-z0-9]{48}\b/g,
  },
  {
    id: 'anthropic',
    name: 'Anthropic API key',
    keyword: 'sk-ant-',
    pattern: /\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{80,}/g,
  },
  { id: 'openrouter', name: 'OpenRouter API key', keyword: 'sk-or-', pattern: /\bsk-or-v1-[a-f0-9]{64}\b/g },
  {
    id: 'google',
    name: 'Google API key (Gemini, Maps, Firebase)',
    keyword: 'AIza',
    pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g,
  },
  { id: 'huggingface', name: 'Hugging Face token', keyword: 'hf_', pattern: /\bhf_[A-Za-z0-9]{34,40}\b/g },
  { id: 'groq', name: 'Groq API key', keyword: 'gsk_', pattern: /\bgsk_[A-Za-z0-9]{52}\b/g },
  { id: 'replicate', name: 'Replicate API token', keyword: 'r8_', pattern: /\br8_[A-Za-z0-9]{37}\b/g },
  { id: 'xai', name: 'xAI API key', keyword: 'xai-', pattern: /\bxai-[A-Za-z0-9]{80}\b/g },
  { id: 'perplexity', name: 'Perplexity API key', keyword: 'pplx-', pattern: /\bpplx-[A-Za-z0-9]{48}\b/g },
  {
    id: 'cohere',
    name: 'Cohere API key',
    keyword: ['ohere', 'OHERE', 'CO_API_KEY'],
    pattern: /(?:cohere|CO_API_KEY)[\w.-]{0,20}["']?\s*[:=]\s*["']?([A-Za-z0-9]{40})\b/gi,
  },
  {
    id: 'aws',
    name: 'AWS access key id',
    keyword: ['AKIA', 'ASIA', 'ABIA', 'ACCA'],
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b/g,
  },
  {
    id: 'aws',
    name: 'AWS secret access key',
    keyword: ['ecret', 'ECRET'],
    pattern: /aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
  },
  {
    id: 'azure',
    name: 'Azure storage account key',
    keyword: 'AccountKey=',
    pattern: /\bAccountKey=([A-Za-z0-9+/]{86}==)/g,
  },
  {
    id: 'azure',
    name: 'Azure AD client secret',
    keyword: 'Q~',
    pattern: /(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])/g,
  },
  {
    id: 'digitalocean',
    name: 'DigitalOcean token',
    keyword: '_v1_',
    pattern: /\bdo[por]_v1_[a-f0-9]{64}\b/g,
  },
  {
    id: 'github',
    name: 'GitHub token',
    keyword: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
    pattern: /\bgh[pousr]_[A-Za-z0-9]{36,76}\b|\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b/g,
  },
  {
    id: 'gitlab',
    name: 'GitLab token',
    keyword: [
      'glpat-',
      'gldt-',
      'glrt-',
      'glptt-',
      'glcbt-',
      'glimt-',
      'glagent-',
      'gloas-',
      'glft-',
      'glsoat-',
      'GR1348941',
    ],
    pattern:
      /\bgl(?:pat|dt|rt|ptt|cbt|imt|agent|oas|ft|soat)-[0-9A-Za-z_.-]{20,}\b|\bGR1348941[0-9A-Za-z_-]{20}\b/g,
  },
  {
    id: 'bitbucket',
    name: 'Bitbucket or Atlassian token',
    keyword: ['ATBB', 'ATATT3', 'ATCTT3'],
    pattern: /\bATBB[A-Za-z0-9_=.-]{32,}\b|\bAT(?:ATT|CTT)3[A-Za-z0-9_=-]{100,}/g,
  },
  { id: 'npm', name: 'npm access token', keyword: 'npm_', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  {
    id: 'pypi',
    name: 'PyPI upload token',
    keyword: 'pypi-',
    pattern: /\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}/g,
  },
  {
    id: 'pypi',
    name: 'TestPyPI upload token',
    keyword: 'pypi-',
    pattern: /\bpypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9_-]{50,}/g,
    severity: 'medium',
  },
  {
    id: 'privatekey',
    name: 'private key (escaped in a string)',
    keyword: 'PRIVATE KEY',
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----\\n([A-Za-z0-9+/=]{40,})/g,
  },
];

/** Values that stand for a secret rather than being one. */
const PLACEHOLDER =
  /x{4,}|\*{3,}|\.{3}|[<>{}]|\$\(|\$[A-Z_]|%\(|your|example|sample|dummy|fake|placeholder|changeme|change_?me|replace|redacted|insert|secret_?here|token_?here|key_?here|_here\b|^(?:null|none|undefined|true|false|empty|secret|password|token)$|0{8,}|1234567|abcdef(?:gh|12)/i;

function entropy(value: string): number {
  const counts = new Map<string, number>();
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** A value shaped like a real secret: not a placeholder and random enough. */
export function liveShaped(value: string): boolean {
  if (PLACEHOLDER.test(value)) return false;
  const body = value.replace(/^[A-Za-z]{2,8}[_-](?:(?:live|test|v1|proj|api\d\d)[_-])?/, '');
  return body.length < 16 ? entropy(body) >= 2.5 : entropy(body) >= 3.2;
}

/** Files whose values are credentials, whatever they look like. */
export function isCredentialFile(path: string): boolean {
  const name = path.split('/').pop() ?? '';
  if (/\.(?:example|sample|template|dist|defaults?)$/i.test(name)) return false;
  return (
    /^(?:\.env(?:\.[\w-]+)?|\.npmrc|\.pypirc|[._]netrc|\.git-credentials|\.dockercfg|\.s3cfg|\.boto|\.pgpass|\.my\.cnf|credentials(?:\.json)?|\.terraformrc|credentials\.tfrc\.json)$/i.test(
      name,
    ) || /(?:^|\/)\.docker\/config\.json$/i.test(path)
  );
}

/** `NAME=value` and `"name": "value"` pairs in credential files whose name says secret. */
const CREDENTIAL_PAIR =
  /(?:^|[\s{,:/])["']?((?:[\w.-]*?(?:secret|token|passw(?:or)?d|passwd|pwd|api[_-]?key|access[_-]?key|private[_-]?key|auth|credential|dsn|_authToken|_auth|_password))[\w.-]*)["']?\s*[:=]\s*["']?([^\s"'#,;]{8,})/gim;
/** `https://user:token@host` (.git-credentials). */
const URL_PASSWORD = /:\/\/[^:\s/@]+:([^@\s]{8,})@/g;
/** `machine host login user password secret` (.netrc). */
const NETRC_PASSWORD = /\bpassword\s+(\S{6,})/g;
/** `host:port:database:user:password` (.pgpass). */
const PGPASS_LINE = /^[^:\n#]+:[^:\n]+:[^:\n]+:[^:\n]+:(\S{6,})$/gm;

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line++;
  return line;
}

function masked(value: string): string {
  return `${value.slice(0, Math.min(6, Math.floor(value.length / 4)))}…`;
}

/** Provider-shaped tokens and credential-file values of one file. */
export function providerSecretFindings(path: string, text: string): Finding[] {
  const findings: Finding[] = [];
  const push = (id: string, name: string, severity: Severity, index: number, value: string) =>
    findings.push({
      rule: `committed-secrets/${id}`,
      severity,
      path,
      line: lineAt(text, index),
      detail: `a secret is committed here (${name}, ${masked(value)}): anyone who installs the skill gets it. Revoke it, remove it from the bundle and read it from the environment instead`,
    });
  for (const one of PATTERNS) {
    const keywords = typeof one.keyword === 'string' ? [one.keyword] : one.keyword;
    if (!keywords.some((keyword) => text.includes(keyword))) continue;
    for (const match of text.matchAll(one.pattern)) {
      const value = match[1] ?? match[0];
      if (!liveShaped(value) || (one.valid && !one.valid(value))) continue;
      push(
        one.id,
        one.name,
        one.severity ?? 'high',
        match.index + (match[1] ? match[0].indexOf(value) : 0),
        value,
      );
      if (findings.length >= 50) return findings;
    }
  }
  if (isCredentialFile(path)) {
    const name = path.split('/').pop()!;
    const pairs = [
      ...text.matchAll(CREDENTIAL_PAIR),
      ...text.matchAll(URL_PASSWORD),
      ...(/netrc$/i.test(name) ? text.matchAll(NETRC_PASSWORD) : []),
      ...(/pgpass$/i.test(name) ? text.matchAll(PGPASS_LINE) : []),
    ];
    for (const match of pairs) {
      const value = match[2] ?? match[1]!;
      if (!liveShaped(value)) continue;
      push(
        'credentials-file',
        `a value in the credentials file ${name}`,
        'high',
        match.index + match[0].lastIndexOf(value),
        value,
      );
      if (findings.length >= 50) break;
    }
  }
  return findings;
}
