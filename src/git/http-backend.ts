import { spawn } from 'node:child_process';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { gitEnvironment } from './repository-builder.js';

/**
 * Git's smart HTTP protocol, served by git's own CGI program (`git http-backend`) for one bare
 * repository: it speaks protocol v0 and v2, shallow fetches included, and inflates gzip request bodies.
 * The registry decides which repository a request reads and whether it may; git does the rest.
 */
export interface GitHttpRequest {
  /** The bare repository's folder. */
  repository: string;
  /** What follows the repository in the URL: `/info/refs` or `/git-upload-pack`. */
  service: '/info/refs' | '/git-upload-pack';
  method: 'GET' | 'POST';
  /** The query string without '?': `service=git-upload-pack` for the ref advertisement. */
  query: string;
  contentType?: string;
  contentEncoding?: string;
  /** The client's Git-Protocol header (`version=2`). */
  gitProtocol?: string;
  body?: Readable;
}

export interface GitHttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: Readable;
}

/** Runs git http-backend and answers with its status, headers and streamed body. */
export function gitHttpBackend(request: GitHttpRequest): Promise<GitHttpAnswer> {
  const env = gitEnvironment({
    GIT_PROJECT_ROOT: path.dirname(request.repository),
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: `/${path.basename(request.repository)}${request.service}`,
    REQUEST_METHOD: request.method,
    QUERY_STRING: request.query,
    CONTENT_TYPE: request.contentType ?? '',
    REMOTE_ADDR: '127.0.0.1',
    ...(request.contentEncoding ? { HTTP_CONTENT_ENCODING: request.contentEncoding } : {}),
    ...(request.gitProtocol ? { GIT_PROTOCOL: request.gitProtocol } : {}),
  });
  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 4000) stderr += chunk;
  });
  child.stdin.on('error', () => {});
  if (request.body) request.body.pipe(child.stdin);
  else child.stdin.end();
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    let answered = false;
    const body = new PassThrough();
    child.on('error', (error) =>
      reject(
        (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? new Error('git is not installed: the git faces run git http-backend (apt-get install git)')
          : error,
      ),
    );
    child.stdout.on('data', (chunk: Buffer) => {
      if (answered) return;
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      answered = true;
      child.stdout.removeAllListeners('data');
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === 'status') status = Number.parseInt(value, 10) || 500;
        else headers[name] = value;
      }
      body.write(head.subarray(end + 4));
      child.stdout.pipe(body);
      resolve({ status, headers, body });
    });
    child.on('close', (code) => {
      if (!answered) reject(new Error(`git http-backend exited ${code} without an answer: ${stderr.trim()}`));
    });
  });
}
