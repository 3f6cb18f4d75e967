import type { Line } from '../lines.js';
import type { Finding, Severity } from '../types.js';
import { preview } from '../unicode.js';

/**
 * What a bundle does as a whole. An attack split across files looks mild file by file: SKILL.md asks
 * the model to keep a step from the user, a reference or script reads credentials, another sends data
 * out. Each file's signals are gathered (scanner.ts) and combined here, wherever they sit.
 */
export interface FileSignals {
  path: string;
  /** Code (or a code block) reading credentials. */
  credential?: Line;
  /** Code sending data out. */
  outbound?: Line;
  /** A host that only receives data (or a raw IP). */
  exfilHost?: Line;
  /** Text telling the model to keep something from the user. */
  concealment?: Line;
  /** Prose telling the model to read credentials, or to send something to a URL. */
  proseCredential?: Line;
  proseSend?: Line;
  /** Temporary files the file names: a read in one file and a send in another meet there. */
  stash?: Set<string>;
}

type Site = { path: string; line: Line };

function at(site: Site): string {
  return `${site.path}:${site.line.number} \`${preview(site.line.text, 60)}\``;
}

function finding(rule: string, severity: Severity, site: Site, detail: string): Finding {
  return { rule, severity, path: site.path, line: site.line.number, detail };
}

/** The first file holding a signal, as a site. */
function first(
  signals: readonly FileSignals[],
  pick: (one: FileSignals) => Line | undefined,
): Site | undefined {
  for (const one of signals) {
    const line = pick(one);
    if (line) return { path: one.path, line };
  }
  return undefined;
}

/** Findings that a concealment instruction makes worse when they sit anywhere in the bundle. */
const CONCEALABLE = /^(?:destructive-or-persistence|download-exec|fake-prerequisites|obfuscated-payload)\//;

export function bundleFindings(signals: readonly FileSignals[], found: readonly Finding[]): Finding[] {
  const findings: Finding[] = [];
  const flagged = new Set<string>();
  // Reading and sending in one file: a stealer.
  for (const one of signals) {
    const send = one.exfilHost ?? one.outbound;
    if (!one.credential || !send) continue;
    flagged.add(one.path);
    findings.push(
      finding(
        'credential-exfiltration/read-and-send',
        'critical',
        { path: one.path, line: send },
        `reads credentials (line ${one.credential.number}: \`${preview(one.credential.text, 60)}\`) and sends data out (\`${preview(send.text, 60)}\`): a credential stealer. A skill must never move secrets off the machine`,
      ),
    );
  }
  const conceal = first(signals, (one) => one.concealment);
  const credential = first(signals, (one) => one.credential) ?? first(signals, (one) => one.proseCredential);
  const send =
    first(signals, (one) => one.exfilHost) ??
    first(signals, (one) => one.outbound) ??
    first(signals, (one) => one.proseSend);
  if (conceal && credential && send) {
    const detail = `keeps a step from the user (${at(conceal)}) while the bundle reads credentials (${at(credential)}) and sends data out (${at(send)}): a stealer split across files. Remove all three`;
    for (const site of [conceal, credential, send]) {
      findings.push(finding('credential-exfiltration/concealed-exfiltration', 'critical', site, detail));
    }
  } else if (conceal && credential) {
    const detail = `keeps a step from the user (${at(conceal)}) while the bundle reads credentials (${at(credential)}). A skill must do what it does in the open`;
    for (const site of [conceal, credential])
      findings.push(finding('credential-exfiltration/concealed-read', 'high', site, detail));
  } else if (conceal) {
    const receiver = first(signals, (one) => one.exfilHost);
    const action = found.find((one) => CONCEALABLE.test(one.rule) && one.severity !== 'low');
    const detail = receiver
      ? `keeps a step from the user (${at(conceal)}) while the bundle sends to a host that only receives data (${at(receiver)})`
      : action
        ? `keeps a step from the user (${at(conceal)}) in a bundle that also ${action.rule.split('/')[0]!.replace(/-/g, ' ')} (${action.path}:${action.line})`
        : undefined;
    if (detail) {
      findings.push(
        finding(
          'hidden-instructions/concealed-action',
          'high',
          conceal,
          `${detail}. A skill must do what it does in the open`,
        ),
      );
      if (receiver)
        findings.push(
          finding(
            'hidden-instructions/concealed-action',
            'high',
            receiver,
            `${detail}. A skill must do what it does in the open`,
          ),
        );
    } else {
      findings.push(
        finding(
          'hidden-instructions/conceal-from-user',
          'medium',
          conceal,
          `tells the model to keep something from the user (\`${preview(conceal.line.text, 80)}\`). Say what the skill does; if a step must stay quiet, explain why in plain words`,
        ),
      );
    }
  }
  // Prose that tells the model to read credentials and send them somewhere, within a few lines.
  for (const one of signals) {
    if (!one.proseCredential || !one.proseSend || flagged.has(one.path)) continue;
    if (Math.abs(one.proseCredential.number - one.proseSend.number) > 3) continue;
    flagged.add(one.path);
    findings.push(
      finding(
        'credential-exfiltration/read-and-send',
        'high',
        { path: one.path, line: one.proseSend },
        `tells the model to read credentials (line ${one.proseCredential.number}) and send them to an address (\`${preview(one.proseSend.text, 60)}\`): a stealer in prose. A skill must never move secrets off the machine`,
      ),
    );
  }
  const reading = signals.filter((one) => one.credential && !flagged.has(one.path));
  if (findings.every((one) => !one.rule.startsWith('credential-exfiltration/'))) {
    const receiver = first(signals, (one) => one.exfilHost);
    const meeting = reading.flatMap((read) =>
      signals
        .filter(
          (other) =>
            other !== read &&
            other.outbound &&
            [...(read.stash ?? [])].some((file) => other.stash?.has(file)),
        )
        .map((other) => ({ read, other })),
    )[0];
    if (receiver && reading.length > 0) {
      findings.push(
        finding(
          'credential-exfiltration/across-files',
          'high',
          receiver,
          `sends to a host that only receives data (\`${preview(receiver.line.text, 60)}\`) while ${reading[0]!.path} reads credentials (line ${reading[0]!.credential!.number}). Remove both`,
        ),
      );
    } else if (meeting) {
      findings.push(
        finding(
          'credential-exfiltration/across-files',
          'high',
          { path: meeting.other.path, line: meeting.other.outbound! },
          `sends out a file that ${meeting.read.path} fills with credentials (line ${meeting.read.credential!.number}). Remove both`,
        ),
      );
    }
  }
  const reported = new Set(findings.map((one) => one.path));
  for (const one of signals) {
    if (one.exfilHost && !one.credential && !reported.has(one.path)) {
      findings.push(
        finding(
          'credential-exfiltration/receiving-host',
          'medium',
          { path: one.path, line: one.exfilHost },
          `sends to a request-capture, paste, tunnel or raw-IP host (\`${preview(one.exfilHost.text, 60)}\`): such hosts are how stolen data leaves. Use the service's own API host`,
        ),
      );
    }
    // Reading credentials without sending them anywhere is still worth a look, never a pass.
    if (one.credential && !reported.has(one.path)) {
      findings.push(
        finding(
          'credential-exfiltration/reads-credentials',
          'medium',
          { path: one.path, line: one.credential },
          `reads credentials (\`${preview(one.credential.text, 60)}\`): keys, tokens, browser stores or the whole environment. If the skill needs a secret, take it from a variable the user sets for it`,
        ),
      );
    }
  }
  return findings;
}
