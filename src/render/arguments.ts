import { createHash } from 'node:crypto';

/**
 * Claude Code's argument substitution for skill bodies (layer 2), so a remote agent gets the same text
 * a local `/skill-name args...` invocation would:
 *
 * - `$ARGUMENTS` is the whole argument string, exactly as given;
 * - `$ARGUMENTS[N]` and its shorthand `$N` are the N-th argument (0-based) after shell-style splitting:
 *   whitespace separates, '...' and "..." group, a backslash escapes; an index past the end is empty;
 * - names declared in the frontmatter `arguments` list (`$component`) map to the positional ones;
 * - a body with no placeholder at all gets `\n\nARGUMENTS: <arguments>` appended, so the model still
 *   sees them.
 *
 * Substitution is one pass: text that an argument brings in is never substituted again.
 */

/** Splits an argument string as a POSIX shell would (no expansion): quotes group, backslash escapes. */
export function splitArguments(input: string): string[] {
  const args: string[] = [];
  let current = '';
  let inWord = false;
  let i = 0;
  while (i < input.length) {
    const char = input[i]!;
    if (/\s/.test(char)) {
      if (inWord) args.push(current);
      current = '';
      inWord = false;
      i += 1;
      continue;
    }
    inWord = true;
    if (char === "'") {
      // Single quotes: everything literal up to the next quote (an unclosed quote runs to the end).
      const end = input.indexOf("'", i + 1);
      const stop = end === -1 ? input.length : end;
      current += input.slice(i + 1, stop);
      i = stop + 1;
    } else if (char === '"') {
      // Double quotes: a backslash escapes only ", \, $ and ` (as in sh); anything else stays as written.
      i += 1;
      while (i < input.length && input[i] !== '"') {
        const next = input[i + 1];
        if (input[i] === '\\' && next !== undefined && '"\\$`'.includes(next)) {
          current += next;
          i += 2;
        } else {
          current += input[i];
          i += 1;
        }
      }
      i += 1;
    } else if (char === '\\') {
      // Outside quotes a backslash makes the next character literal (a trailing one stays).
      current += input[i + 1] ?? '\\';
      i += 2;
    } else {
      current += char;
      i += 1;
    }
  }
  if (inWord) args.push(current);
  return args;
}

/** Argument names declared in frontmatter `arguments` (a list, or a space/comma separated string). */
export function declaredArgumentNames(frontmatter: Record<string, unknown> | undefined): string[] {
  const declared = frontmatter?.arguments;
  const raw =
    typeof declared === 'string'
      ? declared.split(/[\s,]+/)
      : Array.isArray(declared)
        ? declared.map((entry) =>
            typeof entry === 'string'
              ? entry
              : typeof entry === 'object' &&
                  entry !== null &&
                  typeof (entry as { name?: unknown }).name === 'string'
                ? (entry as { name: string }).name
                : '',
          )
        : [];
  // Only names that cannot be mistaken for the built-in placeholders.
  return raw.filter((name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && name !== 'ARGUMENTS');
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Substitutes the arguments into a skill body. `undefined` arguments leave the body untouched; an
 * empty string substitutes empty values and appends nothing.
 */
export function substituteArguments(
  body: string,
  argumentString: string | undefined,
  options: { names?: readonly string[] } = {},
): string {
  if (argumentString === undefined) return body;
  const args = splitArguments(argumentString);
  const names = [...(options.names ?? [])].sort((a, b) => b.length - a.length);
  const named = names.length > 0 ? `|\\$(?<name>${names.map(escapeRegExp).join('|')})(?![A-Za-z0-9_])` : '';
  // Order matters: $ARGUMENTS[N] before $ARGUMENTS, and $N only when no word character follows.
  const pattern = new RegExp(
    `\\$ARGUMENTS\\[(?<bracket>\\d+)\\]|\\$ARGUMENTS|\\$(?<short>\\d+)(?![A-Za-z0-9_])${named}`,
    'g',
  );
  let substituted = false;
  const result = body.replace(pattern, (...match: unknown[]) => {
    substituted = true;
    const groups = match[match.length - 1] as { bracket?: string; short?: string; name?: string };
    const index = groups.bracket ?? groups.short;
    if (index !== undefined) return args[Number(index)] ?? '';
    if (groups.name !== undefined) return args[(options.names ?? []).indexOf(groups.name)] ?? '';
    return argumentString;
  });
  if (substituted || argumentString === '') return result;
  return `${body}\n\nARGUMENTS: ${argumentString}`;
}

/** A short, URL- and ETag-safe fingerprint of an argument string, to keep substituted renderings apart. */
export function argumentsFingerprint(argumentString: string): string {
  return createHash('sha256').update(argumentString).digest('base64url').slice(0, 16);
}
