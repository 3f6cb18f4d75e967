import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { writeTarGz, writeZip } from '../../src/bundle/archive-write.js';
import type { BundleFile } from '../../src/bundle/types.js';
import { adminAuth } from './context.js';

export function skillMd(options: {
  name?: string;
  description?: string;
  body?: string;
  extra?: string;
}): string {
  const lines = ['---'];
  if (options.name !== undefined) lines.push(`name: ${options.name}`);
  if (options.description !== undefined) lines.push(`description: ${JSON.stringify(options.description)}`);
  if (options.extra) lines.push(options.extra.trimEnd());
  lines.push('---', '', options.body ?? `# ${options.name ?? 'Skill'}\n\nDo the thing carefully.\n`);
  return lines.join('\n');
}

export function files(entries: Record<string, string | Uint8Array>): BundleFile[] {
  return Object.entries(entries).map(([path, content]) => ({
    path,
    bytes: typeof content === 'string' ? Buffer.from(content) : content,
    mode: 0o644,
  }));
}

/** A minimal valid skill with a unique name per call, so tests never collide. */
let counter = 0;
export function uniqueName(prefix = 'skill'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 7)}`;
}

export function multipartBody(parts: BundleFile[], field = 'files[]'): { body: Buffer; contentType: string } {
  const boundary = `----skillreg${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${part.path}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      Buffer.from(part.bytes),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export type UploadFormat = 'tar.gz' | 'zip' | 'multipart' | 'markdown';

export async function encodeUpload(
  bundle: BundleFile[],
  format: UploadFormat,
): Promise<{ body: Buffer; contentType: string }> {
  switch (format) {
    case 'tar.gz':
      return { body: await writeTarGz(bundle), contentType: 'application/gzip' };
    case 'zip':
      return { body: await writeZip(bundle), contentType: 'application/zip' };
    case 'multipart':
      return multipartBody(bundle);
    case 'markdown': {
      const skill = bundle.find((file) => file.path.endsWith('SKILL.md'))!;
      return { body: Buffer.from(skill.bytes), contentType: 'text/markdown' };
    }
  }
}

export async function publish(
  app: FastifyInstance,
  bundle: BundleFile[],
  options: { format?: UploadFormat; query?: string; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  const { body, contentType } = await encodeUpload(bundle, options.format ?? 'tar.gz');
  return app.inject({
    method: 'POST',
    url: `/skills${options.query ? `?${options.query}` : ''}`,
    headers: { 'content-type': contentType, ...(options.headers ?? adminAuth) },
    payload: body,
  });
}

/** A one-file skill whose body names `label`: each label is different content of the same skill. */
export function labelledSkill(name: string, label: string, options: { kind?: string; extra?: string } = {}) {
  const { kind = 'Variant', extra } = options;
  return files({
    'SKILL.md': skillMd({ name, description: `${kind} ${label}.`, body: `# ${label}\n`, extra }),
  });
}
