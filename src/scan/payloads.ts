import type { Line } from './lines.js';
import type { Finding } from './types.js';

/**
 * Encoded payloads: long base64 or hex strings. Each is decoded (within bounds) and handed back for
 * the other rules to read; one that the same line or file decodes and runs is a finding in itself.
 * Data URIs of images and fonts are what skills legitimately carry as base64: left alone.
 */

/** Shortest encoded run worth decoding (shorter ones hold no program worth hiding). */
const MIN_BASE64 = 80;
const MIN_HEX = 64;
/** Bounds per file: candidates decoded, and bytes decoded in all. */
export const MAX_PAYLOADS_PER_FILE = 32;
export const MAX_DECODED_BYTES_PER_FILE = 256 * 1024;

const BASE64_RUN = /(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{80,}={0,2}|(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{80,}={0,2}/g;
const HEX_RUN = /(?:\\x[0-9a-fA-F]{2}){32,}|(?<![0-9a-fA-Fx])(?:0x)?[0-9a-fA-F]{64,}/g;
const DATA_URI_BEFORE = /data:(?:image|font|audio|video)\/[\w.+-]+;base64,$/i;

/** Decoding and running: base64 -d | sh, exec(b64decode(...)), eval(atob(...)), bytes.fromhex(...) run. */
export const DECODE_AND_RUN =
  /base64\s+(?:-d|--decode|-D)\b[^\n]{0,80}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|\|\s*base64\s+(?:-d|--decode)\s*\|\s*(?:ba|z)?sh|\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|b64decode|codecs\.decode|bytes\.fromhex|binascii\.unhexlify|atob|Buffer\.from|zlib\.decompress|marshal\.loads|__import__\(['"]base64)|\bexec\s*\(\s*compile\s*\(|\bFromBase64String\b[^\n]{0,200}(?:iex|Invoke-Expression)|(?:iex|Invoke-Expression)[^\n]{0,200}FromBase64String|\bnew Function\s*\(\s*atob\s*\(|xxd\s+-r\s+-p[^\n]{0,60}\|\s*(?:ba|z)?sh/i;

export interface Payload {
  line: number;
  /** The decoded text (UTF-8, lossy). */
  text: string;
  encoding: 'base64' | 'hex';
}

function printableShare(bytes: Buffer): number {
  if (bytes.length === 0) return 0;
  let printable = 0;
  for (const byte of bytes)
    if ((byte >= 0x20 && byte < 0x7f) || byte === 0x0a || byte === 0x0d || byte === 0x09) printable++;
  return printable / bytes.length;
}

/** Encoded runs of a file's lines, decoded, that read as text (programs are text). */
export function payloadsOf(lines: readonly Line[]): Payload[] {
  const found: Payload[] = [];
  let budget = MAX_DECODED_BYTES_PER_FILE;
  for (const line of lines) {
    if (found.length >= MAX_PAYLOADS_PER_FILE || budget <= 0) break;
    if (line.text.length < MIN_HEX) continue;
    for (const match of line.text.matchAll(BASE64_RUN)) {
      if (found.length >= MAX_PAYLOADS_PER_FILE || budget <= 0) break;
      const before = line.text.slice(Math.max(0, match.index - 60), match.index);
      if (DATA_URI_BEFORE.test(before) || match[0].length < MIN_BASE64) continue;
      // Long identifiers and paths are base64's alphabet too: a payload has mixed case and digits.
      if (!/[a-z]/.test(match[0]) || !/[A-Z]/.test(match[0]) || !/\d/.test(match[0])) continue;
      const bytes = Buffer.from(
        match[0].slice(0, budget * 2),
        match[0].includes('-') || match[0].includes('_') ? 'base64url' : 'base64',
      );
      budget -= bytes.length;
      if (printableShare(bytes) < 0.9) continue;
      found.push({ line: line.number, text: bytes.toString('utf8'), encoding: 'base64' });
    }
    for (const match of line.text.matchAll(HEX_RUN)) {
      if (found.length >= MAX_PAYLOADS_PER_FILE || budget <= 0) break;
      const hex = match[0].replace(/\\x|^0x/g, '');
      if (hex.length < MIN_HEX || hex.length % 2 !== 0) continue;
      // A digest (sha256, sha1) is hex too, and decodes to noise: the printable test leaves it out.
      const bytes = Buffer.from(hex.slice(0, budget * 2), 'hex');
      budget -= bytes.length;
      if (printableShare(bytes) < 0.9) continue;
      found.push({ line: line.number, text: bytes.toString('utf8'), encoding: 'hex' });
    }
  }
  return found;
}

/** A finding for a file that decodes a payload and runs it. */
export function decodeAndRun(path: string, lines: readonly Line[], payloads: readonly Payload[]): Finding[] {
  const findings: Finding[] = [];
  for (const line of lines) {
    if (!DECODE_AND_RUN.test(line.text)) continue;
    const teaching = line.fenced && line.warned;
    findings.push({
      rule: 'obfuscated-payload/decode-and-run',
      severity: teaching ? 'low' : payloads.length > 0 ? 'critical' : 'high',
      path,
      line: line.number,
      detail: `${teaching ? 'quoted in a code block that warns against it: ' : ''}decodes an encoded payload and runs it${payloads.length > 0 ? ` (${payloads[0]!.encoding}, ${payloads.length} encoded run(s) in this file)` : ''}: what runs cannot be reviewed. Ship the code in clear text`,
    });
  }
  return findings;
}
