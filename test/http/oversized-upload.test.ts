import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/context.js';
import { listening } from '../helpers/http.js';

/**
 * A body over the limit, sent as fast as the socket takes it: the client must read the 413 problem,
 * never a connection reset (the server reads and discards a bounded amount, then closes).
 */
function post(
  url: string,
  total: number,
  chunked: boolean,
): Promise<{ status?: number; body?: string; error?: string }> {
  const target = new URL('/skills', url);
  const chunk = Buffer.alloc(64 * 1024, 1);
  return new Promise((resolve) => {
    let answer: { status?: number; body?: string } | undefined;
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/gzip',
          authorization: `Bearer ${ADMIN_TOKEN}`,
          ...(chunked ? {} : { 'content-length': total }),
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (text: string) => {
          body += text;
        });
        response.on('end', () => {
          answer = { status: response.statusCode, body };
          resolve(answer);
        });
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (!answer) resolve({ error: error.code ?? error.message });
    });
    let sent = 0;
    const write = () => {
      while (sent < total) {
        sent += chunk.length;
        if (!request.write(chunk)) {
          request.once('drain', write);
          return;
        }
      }
      request.end();
    };
    write();
  });
}

describe('an upload over the body limit', () => {
  let ctx: TestApp;
  let url: string;
  beforeAll(async () => {
    // The default limits, and a 40 MiB body: the case that used to end in a reset.
    ctx = await createTestApp();
    url = await listening(ctx.app);
  });
  afterAll(async () => ctx?.close());

  for (const chunked of [true, false]) {
    it(`answers a readable 413 problem, every time (${chunked ? 'chunked' : 'with content-length'})`, async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        const result = await post(url, 40 * 1024 * 1024, chunked);
        expect(result.error, `attempt ${attempt}`).toBeUndefined();
        expect(result.status).toBe(413);
        const problem = JSON.parse(result.body!);
        expect(problem).toMatchObject({ status: 413, title: 'Content Too Large' });
        expect(problem.detail).toContain('SKILLREG_MAX_BUNDLE_BYTES');
      }
    });
  }

  it('keeps serving afterwards', async () => {
    expect((await fetch(`${url}/livez`)).status).toBe(200);
  });
});
