/**
 * Finds the commands in documentation that install or fetch-and-run software, and the package (or
 * image, or URL) each one names: `npm install|i|add`, `npx`, `npm exec|x`, `pnpm add|dlx`,
 * `yarn add|dlx`, `bunx`, `bun add`, `pip|pip3|pipx install`, `apt-get|apt install`, `apk add`,
 * `brew install`, `docker run|pull`, and `curl|wget ... | sh`. test/operations/docs-install.test.ts
 * checks that each one is the project's own or a well-known tool.
 */

export interface InstallCommand {
  /** 1-based line in the file. */
  line: number;
  /** The command as written (one segment of a `&&`/`;`/`|` chain). */
  command: string;
  /** What it installs: a package spec, an image, a URL or a path; possibly `$VARIABLE`. */
  target: string;
  kind: 'npm' | 'pip' | 'system' | 'docker' | 'script';
}

/** The places commands sit: code blocks and code spans of Markdown; every line of anything else. */
function commandLines(file: string, text: string): { line: number; text: string }[] {
  const lines = text.split('\n');
  const found: { line: number; text: string }[] = [];
  if (!file.endsWith('.md')) {
    lines.forEach((line, index) => {
      found.push({ line: index + 1, text: line.replace(/^\s*#\s?/, '') });
    });
    return joinContinuations(found);
  }
  let fenced = false;
  lines.forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return;
    }
    if (fenced) {
      found.push({ line: index + 1, text: line });
      return;
    }
    // Code spans; `\|` is a pipe escaped for a table.
    for (const span of line.matchAll(/(`+)(.+?)\1/g)) {
      found.push({ line: index + 1, text: span[2]!.replaceAll('\\|', '|') });
    }
  });
  return joinContinuations(found);
}

function joinContinuations(lines: { line: number; text: string }[]): { line: number; text: string }[] {
  const joined: { line: number; text: string }[] = [];
  let pending: { line: number; text: string } | undefined;
  for (const entry of lines) {
    const text = pending ? `${pending.text} ${entry.text.trim()}` : entry.text;
    const start = pending?.line ?? entry.line;
    if (/\\\s*$/.test(text)) {
      pending = { line: start, text: text.replace(/\\\s*$/, '') };
      continue;
    }
    pending = undefined;
    joined.push({ line: start, text });
  }
  if (pending) joined.push(pending);
  return joined;
}

/** Shell words, quotes removed (enough of the syntax for documentation). */
function words(segment: string): string[] {
  return [...segment.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map(
    (match) => match[1] ?? match[2] ?? match[3]!,
  );
}

/** Flags that take the next word as their value, per tool. */
const VALUE_FLAGS: Record<string, Set<string>> = {
  npm: new Set(['--prefix', '--registry', '--cache', '-w', '--workspace', '--userconfig', '--tag', '-C']),
  npx: new Set(['--prefix', '--registry', '--cache', '--userconfig', '-c', '--call', '-w', '--workspace']),
  docker: new Set([
    ...['-p', '--publish', '-v', '--volume', '-e', '--env', '--env-file', '--name', '--network', '-w'],
    ...['--workdir', '-u', '--user', '--entrypoint', '--mount', '--platform', '--restart', '-m'],
    ...['--memory', '--cpus', '--add-host', '-h', '--hostname', '-l', '--label', '--tmpfs', '--ulimit'],
  ]),
};

function positionals(args: string[], valueFlags = new Set<string>()): string[] {
  const result: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      result.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith('-')) {
      if (valueFlags.has(arg)) i++;
      continue;
    }
    result.push(arg);
  }
  return result;
}

/**
 * `npx` / `npm exec`: with `--package`, those are what it fetches and the first word is a command;
 * else the first word is the package. `--no-install` (`--no`) never downloads: not an install.
 */
function npxTargets(args: string[]): string[] {
  const packages: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--no-install' || arg === '--no' || arg === '--offline') return [];
    if (arg === '--package' || arg === '-p') packages.push(args[++i] ?? '');
    else if (arg.startsWith('--package=')) packages.push(arg.slice('--package='.length));
    else if (arg === '--') break;
    else if (arg.startsWith('-')) {
      if (VALUE_FLAGS.npx!.has(arg)) i++;
    } else {
      rest.push(arg);
      break;
    }
  }
  return packages.length > 0 ? packages : rest.slice(0, 1);
}

function targetsOf(segment: string): { target: string; kind: InstallCommand['kind'] }[] {
  const all = words(segment);
  // The tool may follow env assignments, sudo or a pipeline: find the first installer word.
  const at = all.findIndex((word) =>
    /^(npm|npx|pnpm|yarn|bunx|bun|pip|pip3|pipx|apt-get|apt|apk|brew|docker)$/.test(word),
  );
  if (at < 0) return [];
  const [tool, verb = '', ...args] = all.slice(at) as [string, ...string[]];
  const npm = (list: string[]) => list.map((target) => ({ target, kind: 'npm' as const }));
  switch (tool) {
    case 'npm':
      if (['install', 'i', 'in', 'add'].includes(verb)) return npm(positionals(args, VALUE_FLAGS.npm));
      if (verb === 'exec' || verb === 'x') return npm(npxTargets(args));
      return []; // npm ci installs the lockfile of the project at hand; run, start, test install nothing
    case 'npx':
      return npm(npxTargets([verb, ...args]));
    case 'bunx':
      return npm(npxTargets([verb, ...args]));
    case 'pnpm':
    case 'yarn':
    case 'bun': {
      const global = verb === 'global';
      const action = global ? args[0] : verb;
      const rest = global ? args.slice(1) : args;
      if (action === 'add' || action === 'install' || action === 'i') return npm(positionals(rest));
      if (action === 'dlx' || action === 'x') return npm(npxTargets(rest));
      return [];
    }
    case 'pip':
    case 'pip3':
    case 'pipx':
      return verb === 'install' || verb === 'run'
        ? positionals(args, new Set(['-r', '--requirement', '-i', '--index-url', '-c'])).map((target) => ({
            target,
            kind: 'pip' as const,
          }))
        : [];
    case 'apt-get':
    case 'apt':
    case 'brew':
      return verb === 'install'
        ? positionals(args).map((target) => ({ target, kind: 'system' as const }))
        : [];
    case 'apk':
      return verb === 'add' ? positionals(args).map((target) => ({ target, kind: 'system' as const })) : [];
    case 'docker':
      return verb === 'run' || verb === 'pull'
        ? positionals(args, VALUE_FLAGS.docker)
            .slice(0, 1)
            .map((target) => ({ target, kind: 'docker' as const }))
        : [];
    default:
      return [];
  }
}

/** Every install command of one file. */
export function installCommands(file: string, text: string): InstallCommand[] {
  const found: InstallCommand[] = [];
  for (const { line, text: commandLine } of commandLines(file, text)) {
    // A script fetched and piped into a shell: what it installs is whatever the URL serves.
    for (const piped of commandLine.matchAll(/\b(?:curl|wget)\b([^|]*)\|\s*(?:sudo\s+)?(?:ba|z)?sh\b/g)) {
      const url = /(?:https?:\/\/|\$\{?\w+\}?\/)\S+/.exec(piped[1]!)?.[0];
      if (url)
        found.push({ line, command: piped[0], target: url.replace(/^["']|["']$/g, ''), kind: 'script' });
    }
    for (const segment of commandLine.split(/&&|\|\||;|\||\$\(|`/)) {
      for (const { target, kind } of targetsOf(segment)) {
        found.push({ line, command: segment.trim(), target, kind });
      }
    }
  }
  return found;
}

/** A package spec without its version (`@scope/name@1.2.3` -> `@scope/name`, `skills@latest` -> `skills`). */
export function packageName(spec: string): string {
  const at = spec.indexOf('@', spec.startsWith('@') ? 1 : 0);
  return at > 0 ? spec.slice(0, at) : spec;
}
