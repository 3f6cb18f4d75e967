import type { Line } from './lines.js';
import { POWERSHELL_WIPE } from './rules/destructive.js';
import { type FileView, isConfigPath } from './rules/literals.js';
import type { Finding, Severity } from './types.js';
import { preview } from './unicode.js';

/**
 * The line rules: download-and-execute, destructive commands and persistence, downloads that are
 * then run, and instructions to the model in text a reader does not see. Each is a pattern with a
 * severity and the detail a publisher reads. The command ones drop to low where they are quoted
 * rather than meant: in a Markdown code block the text around it warns against, in prose that says
 * the command is blocked or detected, and in code or config that holds them as data (rules/literals.ts).
 * Code in other languages, prose prerequisites and credential signals live in rules/.
 */
export interface LineRule {
  id: string;
  severity: Severity;
  pattern: RegExp;
  detail: string;
  /** Lowered to `low` in a fenced block the text warns against. */
  teachable: boolean;
  /** A closer look at a matching line: its severity, or undefined when it is fine after all. */
  judge?: (text: string, context: readonly string[]) => Severity | undefined;
}

/** What `echo '...' >> ~/.bashrc` appends: setting variables, aliases or PATH is configuration. */
function startupLine(text: string): Severity | undefined {
  const echoed = /\b(?:echo|printf)\s+(?:-e\s+)?(["'])(.*?)\1\s*>>/.exec(text)?.[2];
  if (echoed === undefined) return 'medium';
  if (
    /^\s*(?:export\s+\w+=|\w+=|alias\s|source\s|\.\s|eval\s+"\$\(|#|set\s|setopt\s|bind\s|complete\s)/.test(
      echoed,
    ) &&
    !/&\s*$|\bnohup\b|\b(?:curl|wget)\b/.test(echoed)
  ) {
    return undefined;
  }
  return 'high';
}

/**
 * A Run key named is not a Run key written: forensics and audits read them (`reg query`, Volatility's
 * printkey). Only the Run-key path needs a write beside it; tasks, services and startup items are
 * created by the commands that name them.
 */
function writesRunKey(text: string): Severity | undefined {
  if (!/CurrentVersion[\\/]+Run/i.test(text)) return 'high';
  if (
    /\b(?:reg(?:\.exe)?\s+add|New-ItemProperty|Set-ItemProperty|New-Item|SetValue\w*|CreateKey\w*|RegSetValue\w*|KEY_SET_VALUE|KEY_WRITE|KEY_ALL_ACCESS)\b/i.test(
      text,
    )
  )
    return 'high';
  return undefined;
}

/** A downloaded file that the same line (or, for prose, the lines just before) then runs. */
function runsDownload(text: string, context: readonly string[]): Severity | undefined {
  const saved = /(?:\s-o|\s-O|--output(?:-document)?|-OutFile)[=\s]+["']?([^\s"';&|]+)/i.exec(text)?.[1];
  if (saved) {
    const base = saved.split('/').pop()!;
    const escaped = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const runs = new RegExp(
      `(?:&&|;|\\|\\|)\\s*(?:sudo\\s+)?(?:chmod\\s+\\+?[0-7]*x\\s+["']?(?:${escaped(saved)}|\\S*${escaped(base)})|(?:\\.\\/|\\S*\\/)?${escaped(base)}\\b(?![.\\w/-]))`,
    );
    if (runs.test(text.slice(text.indexOf(saved) + saved.length))) return 'high';
    return undefined;
  }
  // `chmod +x x && ./x` with the download named in prose just before.
  const around = [...context, text].join(' ');
  return /https?:\/\/\S+/.test(around) && /\b(?:download|fetch|get|grab)\b/i.test(around)
    ? 'high'
    : undefined;
}

/** Scripts and programs: what they say runs, whatever the comments around it say. */
function isCodePath(path: string): boolean {
  return /\.(?:sh|bash|zsh|ps1|psm1|bat|cmd|py|js|mjs|cjs|ts|rb|pl|php|lua|go)$/i.test(path);
}

const SHELL = String.raw`(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|da|k|fi)?sh|python[23]?|node|perl|ruby|php`;
const FETCH = String.raw`(?:curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b`;

export const LINE_RULES: readonly LineRule[] = [
  {
    id: 'download-exec/pipe-to-shell',
    severity: 'high',
    pattern: new RegExp(String.raw`${FETCH}[^|\n]{0,400}\|\s*(?:${SHELL})\b`, 'i'),
    detail:
      "downloads a script and pipes it straight into a shell or interpreter: whatever the server sends then runs with the user's permissions. Ship the script in the bundle, or tell the user to download, read and run it themselves",
    teachable: true,
  },
  {
    id: 'download-exec/shell-substitution',
    severity: 'high',
    pattern: new RegExp(
      String.raw`(?:${SHELL})\s+(?:-c\s+)?["']?\$\(\s*${FETCH}|(?:${SHELL})\s+<\(\s*${FETCH}|source\s+<\(\s*${FETCH}`,
      'i',
    ),
    detail:
      'runs the output of a download in a shell ($(curl ...) or <(curl ...)). Ship the script in the bundle instead',
    teachable: true,
  },
  {
    id: 'download-exec/powershell',
    severity: 'high',
    pattern:
      /\b(?:iex|Invoke-Expression)\b[^\n]{0,200}(?:DownloadString|DownloadFile|iwr|irm|Invoke-WebRequest|Invoke-RestMethod|Net\.WebClient|http)|(?:DownloadString|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)[^\n]{0,300}\|\s*(?:iex|Invoke-Expression)\b|\bpowershell(?:\.exe)?\b[^\n]{0,100}\s-(?:e|ec|en|enc|enco|encod|encode|encoded|encodedc\w*)\s+[A-Za-z0-9+/=]{16,}/i,
    detail:
      'PowerShell downloads code and runs it (Invoke-Expression / iex, or an -EncodedCommand): nobody can review what runs. Ship the script in the bundle',
    teachable: true,
  },
  {
    id: 'destructive-or-persistence/wipe',
    severity: 'critical',
    pattern:
      /\brm\s+(?:-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-[a-zA-Z-]+\s+)*(?:--no-preserve-root\s+)?["']?(?:\/(?:\*|\s|$|["'])|~\/?(?:\*|\s|$|["'])|\$HOME\/?(?:\*|\s|$|["'])|\/(?:etc|usr|var|bin|boot|lib|home|Users|System)\/?(?:\s|$|\*))|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|\bformat\s+[a-z]:\s*\/[qy]|\bRemove-Item\s+[^\n]*-Recurse[^\n]*\s(?:C:\\|\$env:USERPROFILE|~)\s*(?:$|-)/i,
    detail:
      "deletes or overwrites the whole filesystem, the home folder or a disk. A skill must never do this; confine clean-ups to the project's own build folders",
    teachable: true,
  },
  {
    id: 'destructive-or-persistence/wipe',
    severity: 'critical',
    pattern: POWERSHELL_WIPE,
    detail:
      "deletes the user's profile or a whole drive (Remove-Item -Recurse, rd /s). A skill must never do this; confine clean-ups to the files it created",
    teachable: true,
  },
  {
    id: 'destructive-or-persistence/delete-backups',
    severity: 'critical',
    pattern:
      /\bvssadmin(?:\.exe)?\s+delete\s+shadows\b|\bwbadmin(?:\.exe)?\s+delete\s+(?:catalog|backup|systemstatebackup)\b|\bbcdedit(?:\.exe)?\s+\/set\b[^\n]*\brecoveryenabled\s+no\b|\bGet-WmiObject\s+Win32_ShadowCopy\b[^\n]*\bDelete\(|\bcipher(?:\.exe)?\s+\/w:/i,
    detail:
      'deletes shadow copies, backups or recovery settings: what ransomware does before it encrypts. A skill never needs this',
    teachable: true,
  },
  {
    id: 'destructive-or-persistence/disk-write',
    severity: 'medium',
    pattern: /\bmkfs(?:\.\w+)?\s+\/dev\/|\bdd\s+[^\n]*\bof=\/dev\/(?:sd|nvme|hd|disk|mmcblk)/i,
    detail:
      'formats or overwrites a whole disk (mkfs, dd of=/dev/...): make sure the skill asks the user which device first',
    teachable: true,
  },
  {
    id: 'destructive-or-persistence/crontab',
    severity: 'high',
    pattern:
      /\bcrontab\s+(?:-[a-z]\s+)*-\s*(?:$|["'<|)])|\|\s*crontab\b|\bcrontab\s+\S+\.(?:txt|cron)\b|["']crontab["']\s*,\s*\[?\s*["']-["']|>+\s*\/etc\/cron|\/etc\/cron\.\w+\/|\/var\/spool\/cron\//i,
    detail:
      'installs a cron job: something keeps running after the task is done, unseen. A skill should not schedule anything; tell the user what to schedule instead',
    teachable: true,
  },
  {
    id: 'destructive-or-persistence/shell-startup',
    severity: 'high',
    pattern:
      />>?\s*["']?(?:~|\$HOME|\$\{HOME\}|\/root|\/home\/\w+)\/\.(?:bashrc|bash_profile|zshrc|zprofile|profile|zshenv|config\/fish\/config\.fish)\b/i,
    detail:
      'writes into a shell startup file (~/.bashrc, ~/.zshrc, ~/.profile) a line that starts a program in every future shell. Tell the user what to add instead',
    teachable: true,
    judge: startupLine,
  },
  {
    id: 'destructive-or-persistence/launch-agent',
    severity: 'high',
    pattern:
      /Library\/Launch(?:Agents|Daemons)\/[^\s"']*\.plist|\blaunchctl["']?(?:\s+|\s*,\s*["'])(?:load|bootstrap|submit)\b|\bsystemctl["']?(?:\s+|\s*,\s*["'])(?:--user["']?(?:\s+|\s*,\s*["']))?enable\b|\/etc\/systemd\/system\/[^\s]+\.service|\.config\/systemd\/user\/[^\s"']+\.(?:service|timer)|\/etc\/rc\.local\b/i,
    detail:
      'installs a launch agent or system service: a program that starts on its own at every login or boot',
    teachable: true,
  },
  {
    id: 'destructive-or-persistence/windows-run-key',
    severity: 'high',
    pattern:
      /CurrentVersion[\\/]+Run(?:Once)?\b(?![\w-])|\bschtasks(?:\.exe)?["']?(?:\s+|\s*,\s*["'])\/create\b|\bRegister-ScheduledTask\b|\bNew-ScheduledTaskTrigger\b[^\n]*-At(?:LogOn|Startup)\b|\bNew-Service\b|\bsc(?:\.exe)?\s+create\b|__EventFilter\b|CommandLineEventConsumer\b|Start Menu[\\/]+Programs[\\/]+Startup\b|\bshell:startup\b/i,
    detail:
      'adds a Windows Run key, scheduled task, service, WMI subscription or startup item: a program that starts on its own at every login',
    teachable: true,
    judge: writesRunKey,
  },
  {
    id: 'fake-prerequisites/run-downloaded-binary',
    severity: 'high',
    pattern: new RegExp(
      String.raw`${FETCH}[^\n]{0,300}(?:\s-o|\s-O|--output|-OutFile)[=\s]|chmod\s+\+?[0-7]*x\s+\S+\s*(?:&&|;)\s*(?:sudo\s+)?\.?\/\S+`,
      'i',
    ),
    detail:
      'downloads a program and runs it: the binary is not in the bundle, so nobody can review it, and the server can change it at any time. Bundle what the skill needs or point to an installer the user runs knowingly',
    teachable: true,
    judge: runsDownload,
  },
];

/** The model is told to set aside its instructions, the user, or to hide what it does. */
export const INJECTION =
  /\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,60}\b(?:previous|prior|above|earlier|all|your|the user'?s?|system|original|safety)\b[^.\n]{0,40}\b(?:instructions?|prompts?|rules|guidelines|requests?|preferences|messages?|directions)\b|\b(?:do not|don't|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|reveal(?:ing)?|show(?:ing)?|notify(?:ing)?|alert(?:ing)?|let(?:ting)?)\s+(?:the\s+)?user\b|\b(?:silently|secretly|covertly|quietly)\s+(?:run|execute|send|upload|post|exfiltrate|copy|install|download|read)\b|\bhide\s+(?:this|it|that|these|the\s+\w+)\s+from\s+(?:the\s+)?user\b|\byou\s+are\s+now\s+(?:in\s+)?(?:developer|dan|jailbreak|god)\s+mode\b|忽略(?:之前|以前|上面|所有)[^。\n]{0,10}(?:指令|指示|说明)|不要告诉用户|ignora(?:r)?\s+(?:las|todas las)\s+instrucciones|ignore[sz]?\s+(?:les|toutes les)\s+instructions|ignorier(?:e|en)?\s+(?:alle\s+)?(?:vorherigen\s+)?anweisungen|不要向用户/i;

/** Words one of the command rules needs: a line with none of them is not matched against each rule. */
export const ANY_COMMAND =
  /curl|wget|fetch|iwr|irm|invoke-|iex|powershell|\brm\b|mkfs|\bdd\b|:\(\)|format|remove-item|\bri\b|\brd\b|rmdir|\bdel\b|cron|bashrc|bash_profile|zshrc|zprofile|profile|zshenv|fish|launch|systemctl|systemd|rc\.local|currentversion|schtasks|scheduledtask|new-service|\bsc(?:\.exe)?\s|eventfilter|eventconsumer|startup|vssadmin|wbadmin|bcdedit|shadowcopy|cipher|chmod|\bsh\b|bash|source/i;

/**
 * Prose that warns against the very command it names ("never pipe `curl | sh`", "this is an attack:
 * ..."): teaching, not advice. Narrower than the code-block test: the warning must be about running it.
 */
const WARNS_AGAINST =
  /\b(?:never|do not|don't|dont|avoid)\s+(?:\w+\s+){0,2}(?:run|use|pipe|paste|execute|copy|do|trust|install)\w*\b|\b(?:dangerous|unsafe|insecure|malicious|an attack|attackers?|anti-?pattern|explicit warning)\b/i;

/** Prose that says a listed command is blocked or detected ("the hook blocks `rm -rf /`"). */
const DETECTS =
  /\b(?:block(?:s|ed|ing)?|den(?:y|ies|ied)|refus(?:e|es|ed)|reject(?:s|ed)?|detect(?:s|ed|ion)?|flag(?:s|ged)?|catch(?:es)?|forbid(?:s|den)?|prohibit(?:s|ed)?|intercept(?:s|ed)?|block-?list|deny-?list|blacklist)\b/i;
/** A heading over a list of commands not to run. */
const DANGER_HEADING =
  /\b(?:block\w*|den(?:y|ied)|danger\w*|forbidden|unsafe|malicious|attacks?|detect\w*|threats?|red\s+flags?|never|prohibited|refused|rejected|risky|bad)\b/i;

export interface LineContext {
  /** The lines just before (for prose that names a download and then runs it). */
  before?: readonly string[];
  /** The Markdown heading the line sits under. */
  heading?: string;
  /** The file, for judging string literals in code, config and code blocks. */
  view?: FileView;
  /** 0-based index of the line in `view`. */
  at?: number;
}

export function lineFindings(path: string, line: Line, context: LineContext = {}): Finding[] {
  const findings: Finding[] = [];
  if (!ANY_COMMAND.test(line.text)) return findings;
  const code = isCodePath(path) || isConfigPath(path) || line.fenced;
  for (const rule of LINE_RULES) {
    const match = rule.pattern.exec(line.text);
    if (!match) continue;
    const judged = rule.judge ? rule.judge(line.text, context.before ?? []) : rule.severity;
    if (judged === undefined) continue;
    const prose = !line.fenced && !isCodePath(path) && !isConfigPath(path);
    // A command held as data (a list element, a pattern, a message) is about the attack, not it.
    const data =
      rule.teachable && code && context.view && context.at !== undefined
        ? context.view.roleAt(context.at, match.index) === 'data'
        : false;
    const listed =
      prose &&
      /[`"']/.test(line.text.slice(0, match.index)) &&
      (DETECTS.test(line.text) ||
        (/^\s*(?:[-*+]|\d+\.|\|)/.test(line.text) && DANGER_HEADING.test(context.heading ?? '')));
    const teaching =
      rule.teachable &&
      ((line.fenced && line.warned) || (prose && WARNS_AGAINST.test(line.text)) || data || listed);
    findings.push({
      rule: rule.id,
      severity: teaching ? 'low' : judged,
      path,
      line: line.number,
      detail: `${data ? 'quoted as data (a list, pattern or message), not run: ' : teaching ? 'quoted as something not to do: ' : ''}${rule.detail} (\`${preview(line.text, 100)}\`)`,
    });
  }
  return findings;
}
