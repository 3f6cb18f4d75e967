import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { createLimitTracker, tooLarge, tooManyFiles } from '../bundle/archive-read.js';
import { BundleError, type BundleFile, type BundleLimits } from '../bundle/types.js';

export interface MultipartUpload {
  files: BundleFile[];
  fields: Record<string, string>;
}

/**
 * A multipart upload: one file part per bundle file (the filename is its path) and any plain fields
 * (the vendor faces' display_name, default). Bounded by the bundle limits as it streams in.
 */
export async function readMultipartUpload(
  request: FastifyRequest,
  limits: BundleLimits,
): Promise<MultipartUpload> {
  try {
    return await readMultipartParts(request, limits);
  } catch (error) {
    throw multipartLimitError(error, limits);
  }
}

/**
 * busboy enforces the same limits (app.ts) and can trip before the tracker does: on the part after
 * the last allowed file, or on a single file cut at exactly the byte limit. Its errors name no limit,
 * so they are replaced by the bundle layer's, which give the value and the variable that sets it.
 */
function multipartLimitError(error: unknown, limits: BundleLimits): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'FST_FILES_LIMIT') return tooManyFiles(limits);
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(limits);
  return error;
}

async function readMultipartParts(request: FastifyRequest, limits: BundleLimits): Promise<MultipartUpload> {
  const tracker = createLimitTracker(limits);
  const files: BundleFile[] = [];
  const fields: Record<string, string> = {};
  for await (const part of request.parts()) {
    if (part.type !== 'file') {
      if (typeof part.value === 'string') fields[part.fieldname] = part.value;
      continue;
    }
    const file = part as MultipartFile;
    const path = file.filename;
    if (!path) {
      throw new BundleError(400, 'Bad Request', `multipart part '${file.fieldname}' has no filename`, [
        {
          path: file.fieldname,
          detail: `part '${file.fieldname}' has no filename; the filename carries the file's path in the bundle, e.g. -F "files[]=@SKILL.md;filename=SKILL.md"`,
        },
      ]);
    }
    tracker.addFile(path);
    const chunks: Buffer[] = [];
    for await (const chunk of file.file) {
      tracker.addBytes(chunk.length);
      chunks.push(chunk as Buffer);
    }
    files.push({ path, bytes: Buffer.concat(chunks), mode: 0o644 });
  }
  if (files.length === 0) {
    throw new BundleError(400, 'Bad Request', 'the multipart body has no file parts', [
      {
        path: '(body)',
        detail: 'send one file part per bundle file, with the relative path as its filename',
      },
    ]);
  }
  return { files, fields };
}
