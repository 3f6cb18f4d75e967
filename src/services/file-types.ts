import mime from 'mime-types';

/**
 * What a bundled file is, decided once for every face: REST serves it with a content type, MCP as
 * text, an image or a base64 resource.
 */

const TEXT_TYPES = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|x-sh|toml))/;
/** What MCP returns as text besides TEXT_TYPES: SVG is XML a model can read. */
const MCP_TEXT_TYPES = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|x-sh|toml)|image\/svg\+xml)/;
/** Raster formats models accept as image content; other binaries are embedded resources. */
export const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as text when they are valid UTF-8 without NUL, else undefined (a binary file). */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Content type of a bundled file: by extension, with charset for text; unknown files are bytes unless text. */
export function contentTypeFor(path: string, bytes?: Uint8Array): string {
  const type =
    mime.lookup(path) ||
    (bytes && decodeText(bytes) !== undefined ? 'text/plain' : 'application/octet-stream');
  return TEXT_TYPES.test(type) ? `${type}; charset=utf-8` : type;
}

/** Text when the bytes are UTF-8 without NUL (whatever the extension), else binary with a media type. */
export function classifyFile(path: string, bytes: Uint8Array): { mimeType: string; text?: string } {
  const looked = mime.lookup(path) || undefined;
  if (looked && IMAGE_TYPES.has(looked)) return { mimeType: looked };
  const text = decodeText(bytes);
  if (text === undefined) return { mimeType: looked ?? 'application/octet-stream' };
  return { mimeType: looked && MCP_TEXT_TYPES.test(looked) ? looked : 'text/plain', text };
}
