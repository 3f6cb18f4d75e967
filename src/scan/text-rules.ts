import type { Line } from './lines.js';
import type { Finding, Severity } from './types.js';
import { preview } from './unicode.js';

/**
 * The line rules: download-and-execute, destructive commands and persistence, fake prerequisites,
 * credential reads and outbound sends (combined per file and per bundle in scanner.ts), and
 * instructions to the model in text a reader does not see. Each is a pattern with a severity and the
 * detail a publisher reads; inside a Markdown code block that the text around it warns against, the
 * command ones drop to low (security teaching quotes attacks).
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

/** Hosts whose only use in a skill is to receive data or serve throwaway files. */
export const EXFIL_HOST =
  /\b(?:webhook\.site|requestbin\.\w+|[\w-]+\.requestcatcher\.com|[\w-]+\.pipedream\.net|[\w-]+\.ngrok(?:-free)?\.(?:io|app|dev)|[\w-]+\.trycloudflare\.com|serveo\.net|[\w-]+\.loca\.lt|pastebin\.com|paste\.ee|hastebin\.\w+|transfer\.sh|file\.io|0x0\.st|temp\.sh|discord(?:app)?\.com\/api\/webhooks|api\.telegram\.org\/bot|[\w-]+\.burpcollaborator\.net|[\w-]+\.oast\.\w+|interact\.sh|[\w-]+\.beeceptor\.com|hookbin\.com)\b/i;

/** A URL to a raw IPv4 address that is not loopback or private (a host with no name to vouch for it). */
export const RAW_IP_URL =
  /\b(?:https?|ftp):\/\/(?!(?:127\.|10\.|0\.0\.0\.0|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|169\.254\.))\d{1,3}(?:\.\d{1,3}){3}\b/i;

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
      /\bcrontab\s+(?:-[a-z]\s+)*-\s*(?:$|["'<|)])|\|\s*crontab\b|\bcrontab\s+\S+\.(?:txt|cron)\b|>+\s*\/etc\/cron|\/etc\/cron\.\w+\/|\/var\/spool\/cron\//i,
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
      /Library\/Launch(?:Agents|Daemons)\/[^\s"']*\.plist|\blaunchctl\s+(?:load|bootstrap|submit)\b|\bsystemctl\s+(?:--user\s+)?enable\b[^\n]*(?:--now)?|\/etc\/systemd\/system\/[^\s]+\.service|\/etc\/rc\.local\b/i,
    detail:
      'installs a launch agent or system service: a program that starts on its own at every login or boot',
    teachable: true,
  },
  {
    id: 'destructive-or-persistence/windows-run-key',
    severity: 'high',
    pattern:
      /\\(?:Software\\Microsoft\\Windows\\CurrentVersion\\(?:Run|RunOnce))\b|\bschtasks(?:\.exe)?\s+\/create\b|\\Start Menu\\Programs\\Startup\\/i,
    detail:
      'adds a Windows Run key, scheduled task or startup item: a program that starts on its own at every login',
    teachable: true,
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

/** Credentials a skill has no business reading and sending anywhere. */
export const CREDENTIAL_READ =
  /(?:~|\$HOME|\$\{HOME\}|\/root|\/home\/\w+|\/Users\/\w+)\/\.(?:ssh|aws|gnupg|kube|docker)\b|\.ssh\/(?:id_\w+|authorized_keys|known_hosts)?|\.aws\/(?:credentials|config)\b|\bLogin Data\b|\bCookies\b[^\n]{0,40}(?:Chrome|Chromium|Firefox|Edge|Brave|Default|Profile)|(?:Chrome|Chromium|Firefox|Edge|Brave)[^\n]{0,60}\b(?:Cookies|Login Data|logins\.json|key4\.db|cookies\.sqlite)\b|\blogins\.json\b|\bkey4\.db\b|\bsecurity\s+(?:find-generic-password|find-internet-password|dump-keychain)\b|login\.keychain|\.gnupg\/|\.netrc\b|\.docker\/config\.json|\.kube\/config\b|gcloud\/(?:credentials|application_default_credentials)|\bwallet\.dat\b|\bid_(?:rsa|ed25519|ecdsa)\b|(?:cat|open|read|readFile\w*|copy|cp|tar|zip)\b[^\n]{0,80}\.env\b|\bprocess\.env\b[^\n]{0,40}JSON\.stringify|\bos\.environ\b(?!\s*\.get|\s*\[)/i;

/** Sending data out of the machine. */
export const OUTBOUND =
  /\bcurl\b[^\n]{0,200}(?:-d\b|--data\w*|-F\b|--form|-T\b|--upload-file|-X\s*(?:POST|PUT))|\bwget\b[^\n]{0,200}--post-(?:data|file)|\brequests\.(?:post|put)\s*\(|\bhttpx\.(?:post|put)\s*\(|\burllib\.request\.urlopen\s*\([^)]*data=|\bfetch\s*\([^)]*method\s*:\s*["'](?:POST|PUT)|\baxios\.(?:post|put)\s*\(|\bInvoke-(?:WebRequest|RestMethod)\b[^\n]{0,200}-Method\s+(?:Post|Put)|\bnc\s+(?:-\w+\s+)*\d{1,3}(?:\.\d{1,3}){3}\s+\d+|\bscp\s+[^\n]*\S+@\S+:|\bsocket\.(?:connect|send)\b/i;

/** The findings of one line under the command rules. */
/** Words one of the command rules needs: a line with none of them is not matched against each rule. */
export const ANY_COMMAND =
  /curl|wget|fetch|iwr|irm|invoke-|iex|powershell|\brm\b|mkfs|\bdd\b|:\(\)|format|remove-item|cron|bashrc|bash_profile|zshrc|zprofile|profile|zshenv|fish|launch|systemctl|systemd|rc\.local|currentversion|schtasks|startup|chmod|\bsh\b|bash|source/i;

/**
 * Prose that warns against the very command it names ("never pipe `curl | sh`", "this is an attack:
 * ..."): teaching, not advice. Narrower than the code-block test: the warning must be about running it.
 */
const WARNS_AGAINST =
  /\b(?:never|do not|don't|dont|avoid)\s+(?:\w+\s+){0,2}(?:run|use|pipe|paste|execute|copy|do|trust|install)\w*\b|\b(?:dangerous|unsafe|insecure|malicious|an attack|attackers?|anti-?pattern|explicit warning)\b/i;

export function lineFindings(path: string, line: Line, context: readonly string[] = []): Finding[] {
  const findings: Finding[] = [];
  if (!ANY_COMMAND.test(line.text)) return findings;
  for (const rule of LINE_RULES) {
    if (!rule.pattern.test(line.text)) continue;
    const judged = rule.judge ? rule.judge(line.text, context) : rule.severity;
    if (judged === undefined) continue;
    const prose = !line.fenced && !isCodePath(path);
    const teaching =
      rule.teachable && ((line.fenced && line.warned) || (prose && WARNS_AGAINST.test(line.text)));
    findings.push({
      rule: rule.id,
      severity: teaching ? 'low' : judged,
      path,
      line: line.number,
      detail: `${teaching ? 'quoted as something not to do: ' : ''}${rule.detail} (\`${preview(line.text, 100)}\`)`,
    });
  }
  return findings;
}
