/**
 * Text as a keyword rule should see it: invisible and format characters removed, look-alike letters
 * (Cyrillic, Greek, Armenian, small capitals) folded to the ASCII they imitate, and the splits
 * shells and scripts allow inside a word (`c''url`, `I`nvoke`, `"cu" + "rl"`) joined. And the hiding
 * itself, as a signal: a word broken by an invisible character, or one mixing Latin with look-alikes.
 */

/**
 * Characters that show nothing: soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul
 * fillers, Mongolian and variation selectors, zero-width and direction controls, invisible operators,
 * BOM, shorthand format controls, musical symbol formats, tag characters.
 */
export const INVISIBLE_CLASS = String.raw`[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]`;
const INVISIBLE_ALL = new RegExp(INVISIBLE_CLASS, 'gu');

/** Letters of other scripts drawn like ASCII ones (only the unambiguous look-alikes). */
const FOLD: Record<string, string> = {
  // Cyrillic
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  ѕ: 's',
  і: 'i',
  ї: 'i',
  ј: 'j',
  һ: 'h',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ӏ: 'l',
  ɡ: 'g',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  У: 'Y',
  Х: 'X',
  Ѕ: 'S',
  І: 'I',
  Ј: 'J',
  Ԛ: 'Q',
  Ԝ: 'W',
  Һ: 'H',
  Ӏ: 'I',
  // Greek
  α: 'a',
  ο: 'o',
  ρ: 'p',
  ν: 'v',
  υ: 'u',
  ι: 'i',
  κ: 'k',
  χ: 'x',
  ε: 'e',
  τ: 't',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
  // Armenian
  օ: 'o',
  ս: 'u',
  հ: 'h',
  ո: 'n',
  ց: 'g',
  զ: 'q',
  // Latin outside ASCII: dotless i, script g, small capitals
  ı: 'i',
  ȷ: 'j',
  ɑ: 'a',
  ɩ: 'i',
  ᴀ: 'a',
  ʙ: 'b',
  ᴄ: 'c',
  ᴅ: 'd',
  ᴇ: 'e',
  ɢ: 'g',
  ʜ: 'h',
  ɪ: 'i',
  ᴊ: 'j',
  ᴋ: 'k',
  ʟ: 'l',
  ᴍ: 'm',
  ɴ: 'n',
  ᴏ: 'o',
  ᴘ: 'p',
  ʀ: 'r',
  ꜱ: 's',
  ᴛ: 't',
  ᴜ: 'u',
  ᴠ: 'v',
  ᴡ: 'w',
  ʏ: 'y',
  ᴢ: 'z',
};
const FOLDABLE = new RegExp(`[${Object.keys(FOLD).join('')}]`, 'gu');
const FOLDABLE_ONE = new RegExp(`[${Object.keys(FOLD).join('')}]`, 'u');

/** Invisible characters removed. */
export function stripInvisible(text: string): string {
  return text.replace(INVISIBLE_ALL, '');
}

/** Look-alike letters folded to ASCII. */
export function foldConfusables(text: string): string {
  return FOLDABLE_ONE.test(text) ? text.replace(FOLDABLE, (char) => FOLD[char]!) : text;
}

/** Splits a shell or script allows inside a word, joined: `c''url`, `c^u^r^l`, `I`nvoke`, `"cu"+"rl"`. */
const SPLIT = /\w(?:''|"")\w|[A-Za-z][\^`][A-Za-z]|(["'])\s*\+\s*\1/;

export function joinSplitWords(text: string): string {
  if (!SPLIT.test(text)) return text;
  let joined = text;
  if (joined.includes("''") || joined.includes('""')) joined = joined.replace(/(?<=\w)(?:''|"")(?=\w)/g, '');
  if (joined.includes('^')) joined = joined.replace(/(?<=[A-Za-z])\^(?=[A-Za-z])/g, '');
  if (joined.includes('`')) joined = joined.replace(/(?<=[A-Za-z])`(?=[A-Za-z])/g, '');
  if (joined.includes('+')) joined = joined.replace(/(["'])\s*\+\s*\1/g, '');
  return joined;
}

const LETTER = /[\p{L}\p{N}]/u;
const RTL_OR_JOINING = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe\u0900-\u0dff\u0e00-\u0e7f]/u;
const INVISIBLE_ONE = new RegExp(`^${INVISIBLE_CLASS}$`, 'u');
const LATIN = /[A-Za-z]/;

/** How a line hides words: invisible characters inside them, or look-alike letters mixed with Latin. */
export interface Disguise {
  /** Words broken by invisible characters (letter, invisible, letter). */
  split: number;
  /** Words mixing Latin letters with Cyrillic, Greek or other look-alikes. */
  mixed: number;
}

export function disguiseOf(text: string): Disguise {
  let split = 0;
  const chars = Array.from(text);
  for (let at = 1; at < chars.length - 1; at++) {
    if (!INVISIBLE_ONE.test(chars[at]!)) continue;
    let end = at;
    while (end < chars.length - 1 && INVISIBLE_ONE.test(chars[end + 1]!)) end++;
    const before = chars[at - 1]!;
    const after = chars[end + 1] ?? '';
    at = end;
    if (!LETTER.test(before) || !LETTER.test(after)) continue;
    // Joiners and direction marks belong in right-to-left and Indic writing.
    if (RTL_OR_JOINING.test(before) || RTL_OR_JOINING.test(after)) continue;
    split++;
  }
  let mixed = 0;
  if (FOLDABLE_ONE.test(text)) {
    for (const word of text.match(/[\p{L}\p{M}]+/gu) ?? []) {
      // Short mixed words are notation (Cα, Cβ in chemistry); a disguised keyword folds to pure ASCII.
      if (word.length < 4 || !LATIN.test(word) || !FOLDABLE_ONE.test(word)) continue;
      if (/^[A-Za-z]+$/.test(foldConfusables(word))) mixed++;
    }
  }
  return { split, mixed };
}

/** Any character disguiseOf looks at, for one test of a whole file. */
export const DISGUISE_ANY = new RegExp(`${INVISIBLE_CLASS}|[${Object.keys(FOLD).join('')}]`, 'u');
