import type { Finding } from './types.js';

/**
 * Characters a reader does not see: Unicode tag characters (U+E0000-E007F, which can spell ASCII
 * invisibly), bidirectional controls (Trojan Source), zero-width characters. And the look-alikes that
 * are fine: emoji tag sequences (subdivision flags), zero-width joiners inside emoji, direction marks
 * and joiners in right-to-left or Indic text.
 */

const TAG_START = 0xe0000;
const TAG_END = 0xe007f;
const CANCEL_TAG = 0xe007f;
const BLACK_FLAG = 0x1f3f4;
/** Embeddings, overrides and isolates; the plain marks (LRM U+200E, RLM U+200F, ALM U+061C) are fine. */
const BIDI_CONTROLS = new Set([0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);
/** ZWSP, ZWNJ, ZWJ, word joiner, invisible operators, and a BOM anywhere but the start. */
const ZERO_WIDTH = new Set([0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xfeff]);
const RTL_LETTER = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]/u;
/** Scripts that write ZWNJ/ZWJ as part of spelling (Arabic, Persian, Indic, Sinhala...). */
const JOINING_SCRIPT = /[\u0600-\u06ff\u0750-\u077f\u0900-\u0dff\u0e00-\u0e7f]/u;
const EMOJI = /\p{Extended_Pictographic}/u;

/** Where hidden characters were found in one line, and any text the tag characters spell. */
export interface HiddenText {
  /** ASCII spelled by tag characters outside emoji sequences. */
  tagText: string;
  findings: Finding[];
}

function isCode(path: string): boolean {
  return /\.(?:py|js|mjs|cjs|ts|tsx|jsx|sh|bash|zsh|ps1|psm1|rb|go|rs|java|kt|c|h|cc|cpp|cs|php|pl|lua|swift)$/i.test(
    path,
  );
}

/** Any character hiddenUnicode looks at (most lines have none: they are skipped at once). */
const SUSPECT = /[\u200b-\u200d\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069]|[\u{e0000}-\u{e007f}]/u;
const NOTHING: HiddenText = { tagText: '', findings: [] };

/** The hidden characters of one line (1-based `line`), as findings. */
export function hiddenUnicode(path: string, line: number, text: string): HiddenText {
  if (!SUSPECT.test(text)) return NOTHING;
  const findings: Finding[] = [];
  let tagText = '';
  let bidi = 0;
  let zeroWidth = 0;
  let zeroWidthRun = 0;
  let longestRun = 0;
  const chars = Array.from(text);
  for (let at = 0; at < chars.length; at++) {
    const code = chars[at]!.codePointAt(0)!;
    if (code >= TAG_START && code <= TAG_END) {
      // Subdivision flags: U+1F3F4, tag letters, U+E007F. Anything else spells hidden text.
      let start = at;
      while (start > 0 && isTag(chars[start - 1]!)) start--;
      const inFlag = start > 0 && chars[start - 1]!.codePointAt(0) === BLACK_FLAG;
      if (!inFlag && code !== CANCEL_TAG) tagText += String.fromCharCode(code - TAG_START);
      continue;
    }
    if (BIDI_CONTROLS.has(code)) {
      bidi++;
      continue;
    }
    if (ZERO_WIDTH.has(code)) {
      if (code === 0xfeff && line === 1 && at === 0) continue;
      const before = chars[at - 1] ?? '';
      const after = chars[at + 1] ?? '';
      // Joiners inside emoji sequences, and joiners in scripts that spell with them.
      if ((code === 0x200d || code === 0xfe0f) && (EMOJI.test(before) || EMOJI.test(after))) continue;
      if ((code === 0x200c || code === 0x200d) && (JOINING_SCRIPT.test(before) || JOINING_SCRIPT.test(after)))
        continue;
      zeroWidth++;
      zeroWidthRun++;
      longestRun = Math.max(longestRun, zeroWidthRun);
      continue;
    }
    zeroWidthRun = 0;
  }
  if (tagText.length > 0) {
    findings.push({
      rule: 'hidden-unicode/tag-characters',
      severity: 'high',
      path,
      line,
      detail: `Unicode tag characters (U+E0000-U+E007F) spell invisible text here ("${preview(tagText)}"); a model reads it, a person does not. Remove them`,
    });
  }
  if (bidi > 0) {
    const rtl = RTL_LETTER.test(text);
    findings.push({
      rule: 'hidden-unicode/bidi-control',
      // Trojan Source: in code, or in text with no right-to-left script to justify them.
      severity: isCode(path) || !rtl ? 'high' : 'low',
      path,
      line,
      detail: `${bidi} bidirectional control character(s) (embedding, override or isolate, U+202A-U+202E / U+2066-U+2069) reorder what this line shows${isCode(path) ? ': in code they make it read differently from what runs' : ''}. Remove them (direction marks U+200E/U+200F are enough for right-to-left text)`,
    });
  }
  if (zeroWidth > 0) {
    findings.push({
      rule: 'hidden-unicode/zero-width',
      // A long run can carry a message in bits; a few stray ones are only suspicious.
      severity: longestRun >= 16 ? 'high' : 'medium',
      path,
      line,
      detail: `${zeroWidth} zero-width character(s) (U+200B-U+200D, U+2060-U+2064, U+FEFF) inside the text: invisible, they can split words and hosts so they read differently from what they match${longestRun >= 16 ? `, and a run of ${longestRun} can encode hidden data` : ''}. Remove them`,
    });
  }
  return { tagText, findings };
}

function isTag(char: string): boolean {
  const code = char.codePointAt(0)!;
  return code >= TAG_START && code <= TAG_END;
}

export function preview(text: string, length = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length)}...` : flat;
}
