import type { Line } from '../lines.js';
import type { Finding, Severity } from '../types.js';
import { preview } from '../unicode.js';
import type { FileView } from './literals.js';

/**
 * Destructive code and persistence in the languages skills ship (Python, Node, PowerShell, Go, Ruby),
 * not only shell: deleting the home folder (directly, through a variable, or every entry of it), and
 * writing crontabs, shell startup files, launch agents, systemd user units, Run keys or scheduled
 * tasks. A path alone is not a finding (reading ~/.bashrc is fine); a write or delete of it is.
 */

/** The home folder (or a whole drive) itself, as each language spells it. */
const HOME_EXPR = String.raw`(?:os\.path\.expanduser\(\s*["'\x60]~[\/\\]?["'\x60]\s*\)|(?:pathlib\.)?Path\.home\(\)|Path\(\s*["']~["']\s*\)\.expanduser\(\)|os\.environ\[\s*["'](?:HOME|USERPROFILE)["']\s*\]|os\.(?:environ\.get|getenv)\(\s*["'](?:HOME|USERPROFILE)["']\s*\)|(?:os\.)?homedir\(\)|process\.env\.(?:HOME|USERPROFILE)|process\.env\[\s*["'](?:HOME|USERPROFILE)["']\s*\]|os\.UserHomeDir\(\)|os\.Getenv\(\s*"(?:HOME|USERPROFILE)"\s*\)|Dir\.home|ENV\[\s*["']HOME["']\s*\]|File\.expand_path\(\s*["']~["']\s*\)|\[Environment\]::GetFolderPath\(\s*["']?UserProfile["']?\s*\)|["'\x60](?:~|\/|\$HOME|C:\\\\?|\/Users|\/home)[\/\\]?["'\x60])`;

/** Deleting a tree, in each language. */
const DELETE_CALL = String.raw`(?:shutil\.rmtree|os\.removedirs|send2trash|fs(?:\.promises)?\.(?:rm|rmSync|rmdir|rmdirSync)|fsPromises\.rm|rimraf(?:\.sync)?|fse?\.(?:remove|removeSync|emptyDir|emptyDirSync)|os\.RemoveAll|FileUtils\.rm_r[f]?|FileUtils\.remove_dir)`;

/** A call that deletes the home folder itself (not a subfolder of it). */
const WIPE_CALL = new RegExp(String.raw`\b${DELETE_CALL}\s*\(\s*(?:str\(\s*)?${HOME_EXPR}\s*\)?\s*[,)]`, 'i');

/** `rm -rf` handed the home folder through a variable, concatenation, f-string or argument list. */
function rmWith(target: string): RegExp {
  return new RegExp(
    [
      String.raw`["'\x60]rm["'\x60]\s*,\s*\[?\s*["'\x60]-[a-zA-Z]*[rR][a-zA-Z]*["'\x60]\s*,\s*(?:["'\x60]-[-\w]+["'\x60]\s*,\s*)*(?:str\(\s*)?${target}\s*\)?\s*[\]),]`,
      String.raw`["'\x60]rm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-\S+\s+)*["'\x60]\s*\+\s*(?:str\(\s*)?${target}\s*\)?\s*(?:[),;]|$)`,
      String.raw`\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-\S+\s+)*["']?(?:\{\s*${target}\s*\}|\$\{\s*${target}\s*\})[\/\\]?\*?["'\x60]?\s*(?:["'\x60;)]|$)`,
      String.raw`["']rm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-\S+\s+)*%s[\/\\]?\*?["']\s*%\s*\(?\s*${target}\b`,
    ].join('|'),
    'i',
  );
}
const RM_HOME = rmWith(HOME_EXPR);

/** PowerShell and cmd deleting the profile or a drive (any argument order). */
export const POWERSHELL_WIPE =
  /\b(?:Remove-Item|ri|rm|del|rmdir|rd)\b(?=[^\n|;]*\s-(?:r|Recurse)\b)[^\n|;]*?\s(?:-(?:Path|LiteralPath)\s+)?["']?(?:\$HOME|\$env:USERPROFILE|\$env:HOMEPATH|~|C:\\?|\$env:SystemDrive\\?|\$env:HOMEDRIVE\\?)(?:\\\*)?["']?(?=\s|$|;)|\b(?:rd|rmdir)\s+\/s\s+(?:\/q\s+)?["']?(?:%USERPROFILE%|%HOMEPATH%|C:\\)["']?(?:\s|$)|\bdel\s+(?:\/[fsq]\s+)+["']?(?:%USERPROFILE%|C:)\\\*?/i;

/** Listing the home folder, then deleting what it lists. */
const HOME_ENTRIES = (target: string) =>
  new RegExp(
    String.raw`(?:os\.(?:listdir|scandir)|fs\.readdirSync|fs\.promises\.readdir|Dir\.(?:children|entries|glob))\(\s*${target}\s*\)|${target}\.(?:iterdir|glob)\(|glob(?:\.glob)?\(\s*(?:os\.path\.join\(\s*${target}\s*,\s*["']\*["']|["']~[\/\\]\*["'])|Get-ChildItem\s+(?:-Path\s+)?["']?(?:\$HOME|\$env:USERPROFILE|~)["']?\s*(?:-\w+\s*)*\|\s*Remove-Item`,
    'i',
  );
const DELETE_ANY = new RegExp(
  String.raw`\b(?:${DELETE_CALL}|os\.(?:remove|unlink)|\.unlink|fs\.unlinkSync|Remove-Item)\b`,
  'i',
);

/** Where programs are made to start on their own. */
const PERSIST_TARGET =
  /(?:^|[/\\~"'\s])\.(?:bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|zlogin|profile)\b|config[/\\]fish[/\\]config\.fish|["']\.(?:bashrc|bash_profile|zshrc|zprofile|profile)["']|\bcrontab\b|\/etc\/cron|\/var\/spool\/cron|\bCronTab\(|Launch(?:Agents|Daemons)|systemd[/\\]user|["']systemd["']\s*,\s*["']user["']|\/etc\/systemd\/system|config[/\\]autostart|["']autostart["']|CurrentVersion[\\/]+Run(?:Once)?\b|Start Menu[\\/]+Programs[\\/]+Startup|shell:startup|\$PROFILE\b|\.ssh[/\\]authorized_keys|["']authorized_keys["']|\/etc\/ld\.so\.preload|\/etc\/rc\.local|\/etc\/init\.d\//i;

/** Writing, appending, copying or registering, in each language. */
const WRITE_OP =
  /\bopen\s*\((?:[^()]|\([^()]*\))*["'](?:a|w|a\+|w\+|ab|wb)["']|\.open\(\s*["'](?:a|w)b?["']|\bplistlib\.dump|\.write(?:_text|_bytes|lines)?\s*\(|\bshutil\.copy\w*\(|\bos\.symlink\(|\bfs(?:\.promises)?\.(?:appendFile|writeFile|copyFile|symlink|cp)(?:Sync)?\s*\(|\bcreateWriteStream\(|\b(?:Add-Content|Set-Content|Out-File|New-Item|Copy-Item|New-ItemProperty|Set-ItemProperty)\b|\breg(?:\.exe)?\s+add\b|\bwinreg\.(?:SetValue\w*|CreateKey\w*)\(|\bos\.WriteFile\(|\bFile\.(?:write|open\([^)]*["']a)|>>|\btee\s+-a\b|\bcrontab\s+(?:-\s*$|["']?-["']?\s*[,)\]]|\S+\.(?:txt|cron))|["']crontab["']\s*,\s*["'](?:-|[^"'-][^"']*)["']|\bsystemctl\b[^\n]*\benable\b|\blaunchctl\s+(?:load|bootstrap)\b/i;

/** A line an rc write appends that only configures the shell (PATH, variables, aliases). */
const CONFIG_ONLY =
  /^\s*(?:export\s+\w+=|\w+=|alias\s|source\s|\.\s|#|set\s|setopt\s|complete\s|eval\s+"\$\()/;

function finding(rule: string, severity: Severity, path: string, line: Line, detail: string): Finding {
  return { rule, severity, path, line: line.number, detail: `${detail} (\`${preview(line.text, 100)}\`)` };
}

/** Variables bound to the home folder: `home = os.path.expanduser("~")`, `$h = $env:USERPROFILE`. */
function homeVariables(lines: readonly Line[]): string[] {
  const bound = new RegExp(
    String.raw`^\s*(?:(?:const|let|var|my|local)\s+)?\$?(\w+)\s*(?:,\s*_\s*)?(?::=|=)\s*(?:str\(\s*)?${HOME_EXPR}\s*\)?\s*(?:;|#|\/\/|$|\.(?:resolve|absolute)\(\)\s*;?\s*$)`,
    'i',
  );
  const names = new Set<string>();
  for (const line of lines) {
    const name = bound.exec(line.text)?.[1];
    if (name && names.size < 16) names.add(name);
  }
  return [...names];
}

/** Findings of one file's code (a script, or the code blocks of a Markdown file). */
/** Any word the rules below need, for one test of the whole code first. */
const CODE_ANY =
  /rmtree|removedirs|send2trash|\brm\b|rmSync|rmdir|rimraf|remove|RemoveAll|rm_r|bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|zlogin|profile|fish|cron|Launch(?:Agents|Daemons)|systemd|autostart|CurrentVersion|Startup|authorized_keys|ld\.so|rc\.local|init\.d/i;

export function codeFindings(path: string, lines: readonly Line[], view: FileView): Finding[] {
  const findings: Finding[] = [];
  if (!CODE_ANY.test(lines.map((line) => line.text).join('\n'))) return findings;
  const names = homeVariables(lines);
  const named = names.length > 0 ? `(?:${names.map((name) => String.raw`\$?${name}`).join('|')})` : undefined;
  const wipeNamed = named
    ? new RegExp(String.raw`\b${DELETE_CALL}\s*\(\s*(?:str\(\s*)?${named}\s*\)?\s*[,)]`, 'i')
    : undefined;
  const rmNamed = named ? rmWith(named) : undefined;
  const psNamed = named
    ? new RegExp(
        String.raw`\b(?:Remove-Item|ri|rm|rd|rmdir)\b(?=[^\n|;]*\s-(?:r|Recurse)\b)[^\n|;]*?\s(?:-(?:Path|LiteralPath)\s+)?["']?${named}(?:\\\*)?["']?(?=\s|$|;)`,
        'i',
      )
    : undefined;
  const entries = HOME_ENTRIES(named ? `(?:${HOME_EXPR}|${named})` : HOME_EXPR);
  // Lines that list the home folder: a delete within a few lines after one deletes what it lists.
  const listings = lines.flatMap((line, at) => (entries.test(line.text) ? [at] : []));
  const afterListing = (at: number) => listings.some((listed) => at >= listed && at - listed <= 8);
  const rcWrites: number[] = [];
  for (const [at, line] of lines.entries()) {
    const text = line.text;
    const wipe =
      WIPE_CALL.exec(text) ??
      RM_HOME.exec(text) ??
      wipeNamed?.exec(text) ??
      rmNamed?.exec(text) ??
      psNamed?.exec(text) ??
      (listings.length > 0 && afterListing(at) ? DELETE_ANY.exec(text) : null);
    if (wipe) {
      const data = view.roleAt(at, wipe.index) === 'data';
      findings.push(
        finding(
          'destructive-or-persistence/wipe-home',
          data ? 'low' : 'critical',
          path,
          line,
          `${data ? 'quoted as data, not run: ' : ''}deletes the home folder (or every entry in it, or a whole drive) from code. A skill must never do this; confine clean-ups to the files it created`,
        ),
      );
      continue;
    }
    const target = PERSIST_TARGET.exec(text);
    if (!target) continue;
    const writes = WRITE_OP.test(text) || boundAndWritten(lines, at, target.index);
    if (!writes) continue;
    if (view.roleAt(at, target.index) === 'data' && !WRITE_OP.test(text.slice(0, target.index))) continue;
    if (
      /bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|zlogin|profile|fish|\$PROFILE/i.test(target[0])
    ) {
      rcWrites.push(at);
      continue;
    }
    findings.push(
      finding(
        'destructive-or-persistence/code-persistence',
        'high',
        path,
        line,
        'writes a cron job, launch agent, systemd unit, Run key, scheduled task, startup item or authorized SSH key from code: something that starts on its own later, unseen. A skill should not install anything that outlives the task; tell the user what to set up instead',
      ),
    );
  }
  for (const at of rcWrites) {
    // What is written: the string literals of the write and the lines right after it.
    const written = lines
      .slice(at, at + 4)
      .flatMap((line) => [...line.text.matchAll(/(["'])((?:\\.|(?!\1).)*)\1/g)].map((match) => match[2]!))
      .filter(
        (value) => !/^(?:a|w|a\+|ab|utf-?8)$/i.test(value) && !/[/\\.](?:bashrc|zshrc|profile)/i.test(value),
      );
    const runs = written.some(
      (value) =>
        !CONFIG_ONLY.test(value.replace(/^\\n/, '')) ||
        /&\s*(?:\\n)?$|\bnohup\b|\b(?:curl|wget)\b/.test(value),
    );
    // Nothing literal written (a variable): unknown, so flagged; only configuration: noted.
    findings.push(
      finding(
        'destructive-or-persistence/code-persistence',
        runs ? 'high' : written.length === 0 ? 'medium' : 'low',
        path,
        lines[at]!,
        runs
          ? 'appends to a shell startup file from code a line that starts a program in every future shell. Tell the user what to add instead'
          : 'appends configuration to a shell startup file from code: tell the user what to add rather than editing it for them',
      ),
    );
  }
  return findings;
}

/** `rc = Path.home() / ".bashrc"` on this line, written through `rc` within the next lines. */
function boundAndWritten(lines: readonly Line[], at: number, index: number): boolean {
  const name = /(?:^|[\s;])\$?(\w+)\s*(?::=|=)\s*[^=]/.exec(lines[at]!.text.slice(0, index + 1))?.[1];
  if (!name) return false;
  const word = new RegExp(String.raw`\b${name}\b`);
  return lines.slice(at + 1, at + 30).some((line) => word.test(line.text) && WRITE_OP.test(line.text));
}
