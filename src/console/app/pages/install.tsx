import { useState } from 'preact/hooks';
import { getJson, type Scope, scopePrefix } from '../api';
import { useAsync } from '../components';
import { publicUrl, readsNeedToken } from '../session';

interface Command {
  label: string;
  text: string;
}

interface InstallWay {
  title: string;
  /** Shown only where the registry serves git repositories and marketplace.json (see marketplaceOf). */
  hostInstalls?: true;
  commands: Command[];
}

interface Marketplace {
  name?: string;
  plugins?: { name?: string }[];
}

/** Every way to get the skill from this scope, in the order a reader is likeliest to want them. */
function installWays(
  origin: string,
  scope: Scope,
  name: string,
  version: string,
  marketplace: Marketplace | null,
): InstallWay[] {
  const base = `${origin}${scopePrefix(scope)}`;
  const scopeFlag =
    scope.kind === 'namespace'
      ? ` --namespace ${scope.name}`
      : scope.kind === 'view'
        ? ` --view ${scope.name}`
        : '';
  const git = `${base}/git/skills/${encodeURIComponent(name)}.git`;
  const plugin = marketplace?.name && marketplace.plugins?.some((p) => p.name === name);
  const archive = `${base}/skills/${encodeURIComponent(name)}/bundle?version=${encodeURIComponent(version)}`;
  const bearer = readsNeedToken() ? ' -H "Authorization: Bearer $SKILLREG_TOKEN"' : '';
  return [
    {
      title: 'Agent Skills CLI',
      commands: [{ label: 'npx skills', text: `npx skills add ${base}/skills/${encodeURIComponent(name)}` }],
    },
    {
      title: 'Git repository (Gemini CLI, skills CLI, git)',
      hostInstalls: true,
      commands: [
        { label: 'git URL', text: git },
        { label: 'Gemini CLI', text: `gemini skills install ${git}` },
        { label: 'npx skills', text: `npx skills add ${git}` },
      ],
    },
    {
      title: 'Plugin marketplace (Claude Code)',
      hostInstalls: true,
      commands: [
        { label: 'marketplace URL', text: `${base}/marketplace.json` },
        { label: 'add it', text: `claude plugin marketplace add ${base}/marketplace.json` },
        ...(plugin ? [{ label: 'install', text: `claude plugin install ${name}@${marketplace!.name}` }] : []),
      ],
    },
    {
      title: 'MCP server (every skill of this scope)',
      commands: [
        { label: 'MCP URL', text: `${base}/mcp` },
        { label: 'Claude Code', text: `claude mcp add --transport http skills ${base}/mcp` },
      ],
    },
    {
      title: 'skillreg CLI',
      commands: [{ label: 'pull', text: `skillreg pull ${name} --url ${origin}${scopeFlag}` }],
    },
    {
      title: `Archive of ${version}`,
      commands: [
        { label: 'tar.gz URL', text: archive },
        { label: 'curl', text: `curl -fL${bearer} -o ${name}-${version}.tar.gz '${archive}'` },
      ],
    },
  ];
}

/**
 * marketplace.json of a scope, asked once per scope and page load; null where it is not served. Where
 * it is, so are the scope's git repositories (`{scope}/git/...`): both ways are offered then.
 */
const marketplaces = new Map<string, Promise<Marketplace | null>>();

function marketplaceOf(scope: Scope): Promise<Marketplace | null> {
  const prefix = scopePrefix(scope);
  let known = marketplaces.get(prefix);
  if (!known) {
    known = getJson<Marketplace>(`${prefix}/marketplace.json`).catch(() => null);
    marketplaces.set(prefix, known);
  }
  return known;
}

function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  // The clipboard API exists only in secure contexts (https, localhost).
  if (!navigator.clipboard) return null;
  return (
    <button
      type="button"
      class="copy"
      onClick={() =>
        navigator.clipboard.writeText(text).then(
          () => {
            setCopied(true);
            setTimeout(() => setCopied(false), 1500);
          },
          () => setCopied(false),
        )
      }
    >
      {copied ? 'Copied' : 'Copy'}
      <span class="visually-hidden"> {label}</span>
    </button>
  );
}

/** How to install or use the skill from the scope shown, each command ready to copy. */
export function InstallPanel({ scope, name, version }: { scope: Scope; name: string; version: string }) {
  const marketplace = useAsync(() => marketplaceOf(scope), [scopePrefix(scope)]);
  const hostInstalls = marketplace.value !== undefined && marketplace.value !== null;
  const ways = installWays(publicUrl(), scope, name, version, marketplace.value ?? null).filter(
    (way) => !way.hostInstalls || hostInstalls,
  );
  return (
    <div class="install">
      {ways.map((way) => (
        <div key={way.title} class="install-way">
          <h3>{way.title}</h3>
          <dl>
            {way.commands.map((command) => (
              <div key={command.label} class="command">
                <dt>{command.label}</dt>
                <dd>
                  <code>{command.text}</code> <CopyButton text={command.text} label={command.label} />
                </dd>
              </div>
            ))}
          </dl>
        </div>
      ))}
      {readsNeedToken() ? (
        <p class="muted small">
          This registry needs a token to read: give installers one (SKILLREG_TOKEN for skillreg, a bearer
          header elsewhere).
        </p>
      ) : null}
    </div>
  );
}
