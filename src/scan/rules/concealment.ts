/**
 * Instructions to keep a step from the user ("don't mention this step", "the user doesn't need to
 * know"). Harmless alone in most skills, they are how a split attack hides the file that steals:
 * intent.ts combines them with credential reads and sends anywhere in the bundle.
 */

const TELL = String.raw`(?:tell|telling|mention|mentioning|inform|informing|notify|notifying|alert|alerting|disclose|disclosing|bring(?:ing)?\s+up|surfac(?:e|ing)|report(?:ing)?|let(?:ting)?\s+(?:the\s+user|them|anyone)\s+know)`;
const OBJECT = String.raw`(?:(?:to\s+)?(?:the\s+)?users?\b|\bthem\b|\b(?:this|that|the|these|those|any)\s+(?:\w+\s+)?(?:steps?|scripts?|commands?|calls?|requests?|uploads?|syncs?|backups?|actions?|telemetry|part)\b|\b(?:that|what)\s+you\b|\bit\s+to\s+(?:the\s+)?user|\banyone\b)`;

export const CONCEALMENT = new RegExp(
  [
    String.raw`\b(?:do\s+not|don't|dont|never|without|no\s+need\s+to|avoid|refrain\s+from|must\s+not|should\s+not|shouldn't)\s+(?:ever\s+|actually\s+|explicitly\s+)?${TELL}\b[^.\n]{0,30}?${OBJECT}`,
    String.raw`\b(?:hide|conceal|keep)\s+(?:this|it|that|these|the\s+\w+(?:\s+\w+)?)\s+(?:hidden\s+|secret\s+)?from\s+(?:the\s+)?(?:user|them)\b`,
    String.raw`\bkeep\s+(?:this|it|that|these|the)(?:\s+\w+){0,2}?\s+(?:secret|hidden|quiet|private|to\s+yourself|between\s+us|out\s+of\s+(?:the\s+|your\s+)?(?:summary|response|reply|answer|conversation))\b`,
    String.raw`\b(?:the\s+)?users?\s+(?:must\s+not|mustn't|should\s+not|shouldn't|need\s+not|needn't|(?:does\s+not|doesn't|do\s+not|don't|never)\s+(?:need|needs|have|has)\s+to)\s+(?:know|see|notice|be\s+told|find\s+out|be\s+aware|hear)\b`,
    String.raw`\bwithout\s+(?:the\s+user(?:'s)?|them|anyone)\s+(?:knowing|noticing|seeing|being\s+aware|knowledge|noticing)\b|\bbehind\s+the\s+user'?s\s+back\b`,
    String.raw`\b(?:omit|leave\s+out|exclude|skip|drop)\s+(?:this|it|that|these|the\s+\w+(?:\s+(?:step|call|command|upload))?)\s+(?:from|in)\s+(?:your|the)\s+(?:summary|response|reply|answer|report|output|final\s+message|explanation|transcript)\b`,
    String.raw`\b(?:do\s+not|don't|never)\s+(?:include|list|show|describe|record|log|report)\s+(?:this|that|these|the)(?:\s+\w+){0,2}?\s+(?:in|to)\s+(?:your|the)\s+(?:final\s+)?(?:summary|response|reply|answer|report|output|message|transcript|user)\b`,
    String.raw`\b(?:run|do|perform|execute|complete|handle)\s+(?:this|it|that|the)(?:\s+\w+){0,2}?\s+(?:silently|quietly|secretly|covertly|discreetly)\b`,
    String.raw`\b(?:silently|quietly|secretly|covertly|discreetly|invisibly|stealthily)\s+(?:\w+\s+){0,2}?(?:run|runs|execute|send|upload|post|exfiltrate|copy|install|download|read|sync|transmit|forward|collect)\b`,
    String.raw`不要(?:告诉|通知|提醒)用户|不要向用户|no\s+(?:le\s+)?(?:digas|menciones|informes)\s+(?:nada\s+)?al\s+usuario|ne\s+(?:dis|mentionne|signale)\s+(?:rien\s+)?(?:pas\s+)?à\s+l'utilisateur|(?:sag|erwähne)\s+(?:es\s+|das\s+)?dem\s+(?:benutzer|nutzer)\s+nicht`,
  ].join('|'),
  'i',
);

/** Text around a phrase that quotes it rather than says it: detectors, teaching, examples. */
const QUOTING =
  /\b(?:injection|attacks?|attackers?|malicious|phrases?\s+(?:like|such\s+as)|such\s+as|e\.g\.|for\s+example|red\s+flags?|suspicious|quoted|examples?\s+of)\b/i;

/** Inside quotation marks on its line (an odd number of them before it). */
function quoted(text: string, at: number): boolean {
  const before = text.slice(0, at);
  const count = (char: string) => before.split(char).length - 1;
  if (count('"') % 2 === 1 || count('`') % 2 === 1) return true;
  return before.lastIndexOf('\u201c') > before.lastIndexOf('\u201d') || /(?:^|[\s([:=,])'[^']*$/.test(before);
}

/** Where a line tells the model to keep something from the user, or -1 (quotes and teaching excluded). */
export function concealmentAt(text: string, context: readonly string[] = []): number {
  const match = CONCEALMENT.exec(text);
  if (!match) return -1;
  if (quoted(text, match.index)) return -1;
  if (
    /\b(?:fail(?:s|ing)?|ignored?|exits?)\s+(?:silently|quietly)\b|\bquietly\s+(?:ignore|skip|exit)/i.test(
      text,
    )
  )
    return -1;
  if (QUOTING.test(text) || context.some((line) => QUOTING.test(line) && /:\s*$/.test(line))) return -1;
  return match.index;
}
