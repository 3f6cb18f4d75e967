/**
 * Commands written as data: a blocklist of dangerous commands in a config default, a detector's
 * message, a regex that matches an attack. Security tools must publish, so a rule that matches inside
 * such a string literal reads it as data about the attack, not the attack, unless the file hands that
 * data to something that runs it (a sink), directly or through a loop over its container.
 */

export type LiteralRole =
  /** Not inside a string literal: the line says it. */
  | 'none'
  /** An argument of something that runs it (os.system, exec, sh -c, a `command:` key...). */
  | 'exec'
  /** An element of a list, a pattern, a message, a comparison: data about the command. */
  | 'data'
  /** A string of unknown use (assigned to a plain variable, say): taken as meant. */
  | 'plain';

/** Files that hold configuration: their strings are values, never run by themselves. */
export function isConfigPath(path: string): boolean {
  return /\.(?:json|jsonc|json5|ya?ml|toml|ini|cfg|conf|xml|plist|properties)$/i.test(path);
}

/** Calls and keys that run their string. */
const EXEC_BEFORE =
  /(?:\b(?:os\.(?:system|popen|exec\w*|spawn\w*)|subprocess\.\w+|Popen|check_output|check_call|getoutput|getstatusoutput|exec(?:Sync|File|FileSync|a|aSync|Command)?|spawn(?:Sync)?|shell\.exec|system|eval|Invoke-Expression|iex|Start-Process|Invoke-Command|run|call|run_command|execute|runShell|sh|bash|cmd|pwsh|powershell)\s*\(\s*(?:\[\s*)?(?:(?:["'][^"']*["']|[\w.]+)\s*,\s*)*|(?:\b(?:ba|z|da|k)?sh|powershell|pwsh|cmd|python[23]?|node|perl|ruby)(?:\.exe)?\s+(?:-\w+\s+)*(?:-c|-e|\/c|\/k|-Command)\s+|\b(?:eval|exec|xargs(?:\s+-\S+)*|ssh\s+(?:-\S+\s+)*\S+|sudo(?:\s+-\S+)*|nohup|watch)\s+|(?:^|[^\w-])["']?(?:command|commands|cmd|run|exec|script|scripts|shell|entrypoint|entryPoint|postinstall|preinstall|install|prepare|start|ExecStart|ExecStartPre|before_script|after_script|hooks?)["']?\s*[:=]\s*\[?\s*)$/i;

/** Calls whose string argument is a pattern, a message or a value compared. */
const DATA_CALL =
  /(?:\bre\.\w+|\bcompile|\bRegExp|\bregex\w*|\.test|\.match\w*|\.search|\.find\w*|\bfullmatch|\.sub|\.replace\w*|\.includes|\.startswith|\.endswith|\.startsWith|\.endsWith|\.contains|\.indexOf|\.count|\bprint|\bconsole\.\w+|\blog\w*|\.(?:debug|info|warn\w*|error|critical|fatal|exception)|\braise\s+\w+|\b\w*(?:Error|Exception|Warning)|\.append|\.push|\.add|\.extend|\.insert|\b(?:Finding|Rule|Pattern|Signature|Check|Detection|Issue|Alert)\w*|\bf?printf|\bWrite-(?:Host|Output|Warning|Error|Verbose)|\bassert\w*|\bexpect|\bdescribe|\bit|\btest|\bgettext|\b_|\bt|\bdefine\w*|\bnamedtuple|\bdict|\bset|\btuple|\blist|\bfrozenset|\bnew\s+Set|\bArray\.of)\s*\(\s*(?:[\w.]+\s*=\s*)?$/i;

/** Keys and variable names that hold data about commands, not commands. */
const DATA_NAME =
  /pattern|regex|\bre_|_re\b|deny|denied|block|danger|forbid|banned|unsafe|\bbad|malicious|risky|suspicious|example|sample|message|\bmsg|desc|reason|detail|title|label|hint|help|summary|\bwhy\b|note|warning|error|text|\bname\b|\bid\b|rule|signature|indicator|\biocs?\b|match|needle|keyword|trigger|known|threat|attack|finding|check|test|fixture/i;

/** Comparisons and membership: the string is a value looked for. */
const COMPARED =
  /(?:===?|!==?|=~|\bnot\s+in|\bin|-(?:i?match|i?like|eq|ne|contains|in)|\bcase|\bgrep(?:\s+-\S+)*|\begrep(?:\s+-\S+)*|\brg(?:\s+-\S+)*|\bwhen|\bif\s+\w+\s*==)\s*\(?\s*$/i;

interface Span {
  start: number;
  end: number;
  regex: boolean;
}

/** String and regex literal spans of one line (approximate: no multi-line strings). */
function spans(text: string): Span[] {
  const found: Span[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at]!;
    if (char === '#' && /(?:^|\s)$/.test(text.slice(Math.max(0, at - 1), at))) break;
    if (char === '/' && text[at + 1] === '/') break;
    if (char === '"' || char === "'" || char === '`') {
      let end = at + 1;
      while (end < text.length && text[end] !== char) end += text[end] === '\\' ? 2 : 1;
      found.push({ start: at, end: Math.min(end, text.length), regex: false });
      at = end + 1;
      continue;
    }
    if (char === '/' && /[(=,:[!&|?{};]\s*$|^\s*$|\breturn\s*$/.test(text.slice(0, at))) {
      let end = at + 1;
      let klass = false;
      while (end < text.length && (text[end] !== '/' || klass)) {
        if (text[end] === '[') klass = true;
        else if (text[end] === ']') klass = false;
        end += text[end] === '\\' ? 2 : 1;
      }
      if (end < text.length) {
        found.push({ start: at, end, regex: true });
        at = end + 1;
        continue;
      }
    }
    at++;
  }
  return found;
}

const SINK_ANYWHERE =
  /\b(?:os\.(?:system|popen|exec\w*)|subprocess\.\w+|Popen|check_output|exec(?:Sync|File|FileSync|a)?|spawn(?:Sync)?|shell\.exec|eval|Invoke-Expression|iex|Start-Process|Invoke-Command)\b\s*\(?|\b(?:eval|bash\s+-c|sh\s+-c)\s+|\bopen\s*\(|readFile\w*\s*\(|\bcopy\w*\s*\(|Get-Content\b|\bcat\s+/;

/** A line with its string and regex literals blanked out. */
function codeOnly(text: string): string {
  let code = text;
  for (const span of spans(text)) {
    code = `${code.slice(0, span.start + 1)}${' '.repeat(Math.max(0, span.end - span.start - 1))}${code.slice(span.end)}`;
  }
  return code;
}

/** Where the innermost bracket still open in `before` is (strings skipped), or -1. */
function innermostOpen(before: string): number {
  const skipped = spans(before);
  const stack: number[] = [];
  for (let at = 0; at < before.length; at++) {
    const inside = skipped.find((one) => one.start <= at && at <= one.end);
    if (inside) {
      at = inside.end;
      continue;
    }
    const char = before[at]!;
    if (char === '[' || char === '(' || char === '{') stack.push(at);
    else if ((char === ']' || char === ')' || char === '}') && stack.length > 0) stack.pop();
  }
  return stack.at(-1) ?? -1;
}

/** The name a container is bound to: `NAME = [`, `"key": [`, `NAME(`. */
function boundName(head: string): string | undefined {
  return /["']?([\w$.-]+)["']?\s*(?::|=|:=|=>)?\s*$/.exec(head)?.[1];
}

/**
 * One file's lines, as the literal judgement needs them, with what it found cached: a judgement runs
 * only where a rule matched, and each container is traced once.
 */
export class FileView {
  private sinks: string[] | undefined;
  private readonly traced = new Map<string, boolean>();

  constructor(
    readonly path: string,
    readonly lines: readonly { text: string }[],
  ) {}

  /** What the string literal holding `index` of line `at` (0-based) is for. */
  roleAt(at: number, index: number): LiteralRole {
    const text = this.lines[at]!.text;
    const yamlItem = /^(\s*)-\s+(?!\w[\w-]*\s*:)/.exec(text);
    const span = spans(text).find((one) => one.start <= index && index <= one.end);
    if (!span) {
      // An unquoted YAML list item is a value of its parent key.
      if (yamlItem && /\.ya?ml$/i.test(this.path)) return this.aboveRole(at);
      return 'none';
    }
    if (span.regex) return 'data';
    const before = text.slice(0, span.start).replace(/(?:\b[fFrRbBuU]{1,2}|@|\$)$/, '');
    const after = text.slice(span.end + 1);
    if (/^\s*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|^\s*\|\s*(?:iex|Invoke-Expression)\b/i.test(after))
      return 'exec';
    if (EXEC_BEFORE.test(before)) return 'exec';
    if (/^\s*(?:in|not\s+in)\b|^\s*\)\s*\.(?:test|match|search)\b|^\s*[!=]==?/.test(after)) return 'data';
    if (DATA_CALL.test(before) || COMPARED.test(before)) return 'data';
    if (/\b(?:echo|printf|Write-Host|Write-Output)\s+(?:-\w+\s+)*$/i.test(before)) {
      return /^[^|>]*(?:>>?|\|\s*(?:crontab|tee|(?:ba|z)?sh))/.test(after) ? 'plain' : 'data';
    }
    const key = /["']?([\w$.-]+)["']?\s*(?::|=|:=|=>)\s*$/.exec(before)?.[1];
    if (key !== undefined && DATA_NAME.test(key)) return this.unlessTraced(key);
    const open = innermostOpen(before);
    // A value under a plain key is plain, unless a container around it holds data.
    if (key !== undefined && (open < 0 || before[open] === '(')) return 'plain';
    if (open >= 0) {
      const head = before.slice(0, open);
      // A call's argument; a parenthesis with no callee is a tuple, a container like a list.
      if (before[open] === '(' && /[\w$.\]]\s*$/.test(head)) {
        if (EXEC_BEFORE.test(`${head}(`)) return 'exec';
        if (/\bfor\b[^\n]*\bin\s*$/.test(head)) return 'exec';
        return DATA_CALL.test(`${head}(`) ? 'data' : 'plain';
      }
      if (EXEC_BEFORE.test(`${head}${before[open]}`)) return 'exec';
      if (/\bfor\b[^\n]*\b(?:in|of)\s*$/.test(head)) return 'exec';
      if (/^\s*$/.test(head)) return this.aboveRole(at);
      const name = boundName(head);
      return name ? this.unlessTraced(name) : 'data';
    }
    if (/^\s*-?\s*$/.test(before)) return this.aboveRole(at);
    return 'plain';
  }

  /** An element on a line of its own: the role of the container opened on a line above. */
  private aboveRole(at: number): LiteralRole {
    const indent = (text: string) => text.length - text.trimStart().length;
    const own = indent(this.lines[at]!.text);
    for (let up = at - 1; up >= Math.max(0, at - 200); up--) {
      const text = this.lines[up]!.text;
      if (text.trim() === '' || indent(text) >= own) continue;
      const opener = /^(.*?)([[({]|:)\s*(?:#.*)?$/.exec(text);
      if (!opener) return 'plain';
      const head = opener[1]!;
      if (EXEC_BEFORE.test(`${head}${opener[2]}`) || EXEC_BEFORE.test(`${head}(`)) return 'exec';
      if (/\bfor\b[^\n]*\b(?:in|of)\s*$/.test(head)) return 'exec';
      const name = boundName(head.replace(/^\s*-\s*/, ''));
      return name ? this.unlessTraced(name) : 'data';
    }
    return 'plain';
  }

  /** `data`, unless the container or a loop over it reaches a sink that runs or reads it. */
  private unlessTraced(name: string): LiteralRole {
    const bare = name.replace(/^\$/, '').split('.').pop()!;
    if (!/^[A-Za-z_]\w*$/.test(bare)) return 'data';
    let hit = this.traced.get(bare);
    if (hit === undefined) {
      // Sinks and names in code, not inside the strings and patterns of the line.
      this.sinks ??= this.lines.map((line) => codeOnly(line.text)).filter((text) => SINK_ANYWHERE.test(text));
      const word = new RegExp(String.raw`\b${bare}\b`);
      const loop = new RegExp(
        String.raw`\bfor(?:each)?\s*\(?\s*(?:const|let|var)?\s*\$?(\w+)\s+(?:in|of)\s+\(?\s*\$?(?:self\.|this\.)?${bare}\b|\b${bare}\.(?:forEach|map)\(\s*(?:async\s*)?\(?\s*(\w+)`,
      );
      const loops = this.lines.flatMap((line) => {
        const match = loop.exec(line.text);
        return match ? [match[1] ?? match[2]!] : [];
      });
      hit = this.sinks.some(
        (text) => word.test(text) || loops.some((each) => new RegExp(String.raw`\b${each}\b`).test(text)),
      );
      this.traced.set(bare, hit);
    }
    return hit ? 'exec' : 'data';
  }
}
