import { BundleError } from './types.js';

export const MAX_PATH_BYTES = 1024;
export const MAX_SEGMENT_BYTES = 255;

/** C0 controls, DEL and C1 controls: never part of a real file name, often part of a terminal or parser trick. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
/** A UTF-16 half with no partner: a string that has no UTF-8 encoding. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** `C:`, `c:foo`: a Windows drive, absolute or drive-relative, either way outside the bundle. */
const WINDOWS_DRIVE = /^[A-Za-z]:/;

/**
 * Validates one path from an archive entry or a multipart filename and returns it in canonical form:
 * forward slashes, no leading "./", no "." or empty segments, no trailing slash.
 *
 * Paths are literal: nothing is percent-decoded, so "%2e%2e" is an ordinary file name. Backslashes are
 * read as separators (Windows tools write them) and only then checked, so "..\\x" is as refused as "../x".
 * Unicode normalisation is deliberately not applied: the digest covers the bytes the author sent.
 */
export function normalizeEntryPath(raw: string): string {
  const refuse = (why: string): never => {
    throw invalidPath(raw, why);
  };
  if (raw.length === 0) refuse('the path is empty');
  if (LONE_SURROGATE.test(raw) || raw.includes('\ufffd')) refuse('the path is not valid UTF-8');
  if (CONTROL_CHARACTER.test(raw)) refuse('the path contains a NUL or control character');
  if (byteLength(raw) > MAX_PATH_BYTES) refuse(`the path is longer than ${MAX_PATH_BYTES} bytes`);

  const slashed = raw.replaceAll('\\', '/');
  if (slashed.startsWith('/'))
    refuse('absolute paths are not allowed; use a path relative to the skill root');

  const segments = slashed.split('/').filter((segment) => segment !== '' && segment !== '.');
  // Checked after "./" and empty segments are dropped: "./C:/x" would otherwise come out as "C:/x".
  if (WINDOWS_DRIVE.test(segments[0] ?? ''))
    refuse('Windows drive paths are not allowed; use a relative path');
  for (const segment of segments) {
    if (segment === '..') refuse('".." segments would escape the bundle');
    if (byteLength(segment) > MAX_SEGMENT_BYTES) {
      refuse(`the name "${truncate(segment)}" is longer than ${MAX_SEGMENT_BYTES} bytes`);
    }
  }
  if (segments.length === 0) refuse('the path names no file');
  return segments.join('/');
}

function invalidPath(raw: string, why: string): BundleError {
  const shown = JSON.stringify(truncate(raw));
  const detail = `invalid path ${shown}: ${why}`;
  return new BundleError(400, 'Invalid path in upload', detail, [{ path: truncate(raw), detail }]);
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Keeps error messages readable when the offending path is itself a 100 KB attack string. */
function truncate(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
