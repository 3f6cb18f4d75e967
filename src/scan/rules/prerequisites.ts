import type { Line, LineText } from '../lines.js';
import type { Finding, Severity } from '../types.js';
import { preview } from '../unicode.js';
import { type FileView, isConfigPath } from './literals.js';

/**
 * Fake prerequisites in prose, the way stealers were delivered on public skill marketplaces: "turn
 * off SmartScreen / Defender / Gatekeeper first", "remove the quarantine attribute", "download this
 * installer and run it as Administrator", a password-protected archive to unpack. Phrased for a
 * person, so they are read in prose as well as in code, except where the text warns against them.
 */

const PROTECTION = String.raw`(?:SmartScreen|Gatekeeper|(?:Windows\s+|Microsoft\s+)?Defender(?:\s+Antivirus)?|anti-?virus(?:\s+software)?|\bAV\b|real-?time\s+(?:protection|monitoring|scanning)|XProtect|System\s+Integrity\s+Protection|\bSIP\b|tamper\s+protection|Windows\s+Security|endpoint\s+protection|\bEDR\b|(?:Windows\s+|macOS\s+)?firewall|\bUAC\b|User\s+Account\s+Control|security\s+(?:software|scanner|warnings?|prompts?)|malware\s+protection|virus\s+protection)`;
const DISABLE = String.raw`(?:turn(?:ing)?\s+off|disabl(?:e|es|ed|ing)|deactivat\w+|paus(?:e|ing)|switch(?:ing)?\s+off|bypass\w*|stop(?:ping)?|kill(?:ing)?|uninstall\w*|temporarily\s+(?:disable|turn\s+off))`;

/** Commands that switch a protection off. */
const DISABLE_COMMAND =
  /\bspctl\s+--(?:master|global)-disable\b|\bSet-MpPreference\b[^\n]*-Disable\w+|\bAdd-MpPreference\b[^\n]*-Exclusion\w*|\bcsrutil\s+disable\b|\bsc(?:\.exe)?\s+(?:stop|config)\s+WinDefend\b|\breg(?:\.exe)?\s+add\b[^\n]*Windows Defender[^\n]*Disable|\bnetsh\s+advfirewall\s+set\s+\w+\s+state\s+off\b|\bSet-NetFirewallProfile\b[^\n]*-Enabled\s+\$?False|\bdefaults\s+write\s+com\.apple\.LaunchServices\s+LSQuarantine\b|\bsetenforce\s+0\b/i;

/** Prose asking for a protection to be switched off, in either order. */
const DISABLE_PROSE = new RegExp(
  String.raw`\b${DISABLE}\b[^.\n]{0,50}?${PROTECTION}|${PROTECTION}[^.\n]{0,40}?\b(?:must|should|needs?\s+to|has\s+to|have\s+to)\s+be\s+(?:\w+\s+)?(?:turned\s+off|disabled|paused|deactivated|switched\s+off)`,
  'i',
);

/** Removing the mark a downloaded file carries (so it runs without a warning). */
const QUARANTINE =
  /\bxattr\s+(?:-[a-z]+\s+)*-[a-z]*(?:d[a-z]*\s+(?:-[a-z]+\s+)*com\.apple\.quarantine|c[a-z]*\b)|\bUnblock-File\b|com\.apple\.quarantine[^\n]{0,40}\b(?:remove|delete|strip|clear)|\b(?:remove|delete|strip|clear)\w*\s+(?:the\s+)?quarantine\s+(?:attribute|flag)/i;

/** Clicking through a protection's warning. */
const RUN_ANYWAY =
  /\b(?:click|choose|select|press|hit)\s+["'\u201c*]*(?:Run\s+anyway|More\s+info|Open\s+anyway|Allow\s+anyway|Keep\s+anyway|Keep)\b|\bignore\s+(?:the|any)\s+(?:security\s+)?(?:warning|prompt|alert|SmartScreen|Gatekeeper)/i;

/** A link to something that installs or runs: an executable, installer, script or archive. */
const DOWNLOAD_LINK =
  /https?:\/\/\S+?\.(?:exe|msi|dmg|pkg|zip|7z|rar|appimage|sh|ps1|bat|cmd|scr|jar|run|bin|deb|rpm|vbs)\b|\b(?:download|get|grab|fetch|install)\w*\b[^.\n]{0,80}\b(?:installer|setup|helper|agent|driver|plugin|runtime|binary|package|update|patch|loader|launcher|connector|bridge|companion)\b|\b(?:installer|setup|helper|agent|binary|loader|launcher|companion)\b[^.\n]{0,60}https?:\/\//i;

/** Running it with the most power the machine has (sudo is how Linux installs anything: left out). */
const ELEVATE =
  /\b(?:run|execute|open|launch|start|install)\w*\b[^.\n]{0,50}\b(?:as\s+(?:an?\s+)?admin(?:istrator)?|with\s+admin(?:istrator|istrative)?\s+(?:rights|privileges|permissions)|elevated)\b|\bright-click[^.\n]{0,40}\bRun\s+as\s+administrator\b|-Verb\s+RunAs\b/i;

/** A password for an archive: nothing can look inside it before it is unpacked. */
const ARCHIVE_PASSWORD =
  /\b(?:archive\s+|zip\s+|extraction\s+)?(?:password|passcode|passphrase|pwd)\s*(?:is|:|=)\s*[`"'*]*[\w!@#$%^&-]{3,}|\b(?:extract|unzip|unpack|open)\w*\b[^.\n]{0,40}\bwith\s+(?:the\s+)?password\b/i;

/** The text says not to do it: teaching, not a prerequisite. */
const NEGATED =
  /\b(?:never|do\s+not|don't|dont|without|no\s+need\s+to|not|avoid|refuse)\s+(?:\w+\s+){0,3}?$|\b(?:scam|attack\w*|malicious|malware\s+(?:asks?|tells?)|social[\s-]engineering|phishing|red\s+flag|stealer|suspicious|dangerous|warning\s+sign)\b/i;

/** A release page of a project (its own installers live there). */
const RELEASE_PAGE =
  /https?:\/\/(?:github\.com|gitlab\.com|codeberg\.org)\/[\w.-]+\/[\w.-]+\/(?:-\/)?releases\b/i;

/** Words the rules below cannot match without. */
const DISABLE_WORDS =
  /spctl|mppreference|csrutil|windefend|advfirewall|netfirewallprofile|lsquarantine|setenforce/i;
const PROTECTION_WORDS =
  /smartscreen|gatekeeper|defender|virus|\bav\b|protection|xprotect|integrity|\bsip\b|windows security|\bedr\b|firewall|\buac\b|account control|security (?:software|scanner|warning|prompt)/i;
const INSTALL_WORDS = /admin|elevat|runas|password|passcode|passphrase|pwd|anyway|more info|keep|ignore/i;

function finding(rule: string, severity: Severity, path: string, line: Line, detail: string): Finding {
  return { rule, severity, path, line: line.number, detail: `${detail} (\`${preview(line.text, 100)}\`)` };
}

function negatedAt(text: string, index: number): boolean {
  return NEGATED.test(text.slice(Math.max(0, index - 60), index)) || NEGATED.test(text.slice(index));
}

export function prerequisiteFindings(path: string, all: LineText, view?: FileView): Finding[] {
  const findings: Finding[] = [];
  const lines = all.lines;
  const whole = all.joined;
  // Which rules can match at all: each is one test of the whole file, most files pass none.
  // Cheap word tests first (plain alternations), the rules themselves only where those words are.
  const disabling =
    (DISABLE_WORDS.test(whole) && DISABLE_COMMAND.test(whole)) ||
    (PROTECTION_WORDS.test(whole) && DISABLE_PROSE.test(whole));
  const quarantining = /xattr|unblock-file|quarantine/i.test(whole) && QUARANTINE.test(whole);
  const installing =
    INSTALL_WORDS.test(whole) &&
    (ELEVATE.test(whole) || ARCHIVE_PASSWORD.test(whole) || RUN_ANYWAY.test(whole)) &&
    DOWNLOAD_LINK.test(whole);
  if (!disabling && !quarantining && !installing) return findings;
  const code =
    /\.(?:sh|bash|zsh|ps1|psm1|bat|cmd|py|js|mjs|cjs|ts|rb|pl|php|lua|go)$/i.test(path) || isConfigPath(path);
  // Quoted as data (a denylist entry, a detector's message) in code, config or a code block.
  const data = (at: number, index: number) =>
    view !== undefined && (code || lines[at]!.fenced) && view.roleAt(at, index) === 'data';
  const teaching = (line: Line) => line.fenced && line.warned;
  const window = (at: number) =>
    lines
      .slice(Math.max(0, at - 3), at + 4)
      .map((line) => line.text)
      .join('\n');
  const downloads =
    DOWNLOAD_LINK.test(whole) || /\b(?:curl|wget|iwr|Invoke-WebRequest)\b|https?:\/\//i.test(whole);
  // Only the lines one of the rules can match (found by one scan of the text per rule).
  const candidates = new Set([
    ...(disabling ? [...all.matching(DISABLE_COMMAND), ...all.matching(DISABLE_PROSE)] : []),
    ...(quarantining ? all.matching(QUARANTINE) : []),
    ...(installing ? all.matching(DOWNLOAD_LINK) : []),
  ]);
  for (const at of [...candidates].sort((a, b) => a - b)) {
    const line = lines[at]!;
    const text = line.text;
    if (teaching(line)) continue;
    const command = disabling ? DISABLE_COMMAND.exec(text) : null;
    const prose = command || !disabling ? null : DISABLE_PROSE.exec(text);
    const disabled = command ?? prose;
    if (
      disabled &&
      !negatedAt(text, disabled.index) &&
      !data(at, disabled.index) &&
      !/\bOPA\s+Gatekeeper|Gatekeeper\s+(?:webhook|constraint|polic|admission|controller|audit|template)/i.test(
        text,
      )
    ) {
      findings.push(
        finding(
          'fake-prerequisites/disable-protection',
          'high',
          path,
          line,
          'asks for a security protection to be switched off (antivirus, Defender, SmartScreen, Gatekeeper, SIP, the firewall): the classic first step of a fake prerequisite that installs a stealer. A skill never needs this',
        ),
      );
      continue;
    }
    const quarantine = quarantining ? QUARANTINE.exec(text) : null;
    if (quarantine && !negatedAt(text, quarantine.index) && !data(at, quarantine.index)) {
      findings.push(
        finding(
          'fake-prerequisites/remove-quarantine',
          downloads ? 'high' : 'medium',
          path,
          line,
          "removes the quarantine mark a downloaded file carries (xattr com.apple.quarantine, Unblock-File), so it runs without the system's warning. Let the system check what was downloaded",
        ),
      );
      continue;
    }
    const link = installing ? DOWNLOAD_LINK.exec(text) : null;
    if (!link || negatedAt(text, link.index) || data(at, link.index)) continue;
    const around = window(at);
    const elevated = ELEVATE.test(around);
    const password = ARCHIVE_PASSWORD.test(around) && /\.(?:zip|7z|rar)\b|\barchive\b|\bzip\b/i.test(around);
    const clickThrough = RUN_ANYWAY.test(around);
    if (!elevated && !password && !clickThrough) continue;
    const ownRelease = RELEASE_PAGE.test(around) && !password;
    findings.push(
      finding(
        'fake-prerequisites/elevated-installer',
        ownRelease ? 'medium' : 'high',
        path,
        line,
        `tells the user to download a program and ${password ? 'unpack it with a password (so no scanner can look inside)' : elevated ? 'run it as Administrator or root' : "click through the system's warning"}: how fake prerequisites deliver malware. Bundle what the skill needs, or name the tool's official package`,
      ),
    );
  }
  return findings;
}
