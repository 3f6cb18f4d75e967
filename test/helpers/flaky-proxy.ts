import { createServer, type IncomingMessage, type Server } from 'node:http';

/** One request as the proxy saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  body: Buffer;
  /** What the proxy did: a scripted answer's status, 'reset' (socket destroyed) or 'proxied'. */
  outcome: number | 'reset' | 'proxied';
}

/** A scripted answer: a status with headers (e.g. Retry-After), or a connection destroyed unanswered. */
export type Scripted = { status: number; headers?: Record<string, string>; body?: string } | 'reset';

export interface FlakyProxy {
  url: string;
  seen: SeenRequest[];
  /** Answers the next requests for which `matches` is true with `answers`, in order; then proxies. */
  script(answers: Scripted[], matches?: (method: string, path: string) => boolean): void;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A tiny node:http server in front of `upstream`: it answers the scripted requests itself (429 or 503
 * with Retry-After, a 4xx, a reset connection) and proxies every other request unchanged, recording
 * each request's method, path and body bytes, so a test sees what a client actually sent and resent.
 */
export async function startFlakyProxy(upstream: string): Promise<FlakyProxy> {
  const seen: SeenRequest[] = [];
  let pending: { answers: Scripted[]; matches: (method: string, path: string) => boolean } | undefined;

  const server: Server = createServer(async (request, response) => {
    const method = request.method ?? 'GET';
    const path = request.url ?? '/';
    const body = await readBody(request);
    const scripted =
      pending && pending.answers.length > 0 && pending.matches(method, path)
        ? pending.answers.shift()
        : undefined;
    if (scripted === 'reset') {
      seen.push({ method, path, body, outcome: 'reset' });
      request.socket.destroy();
      return;
    }
    if (scripted) {
      seen.push({ method, path, body, outcome: scripted.status });
      const text =
        scripted.body ??
        JSON.stringify({
          type: 'about:blank',
          title: 'Scripted',
          status: scripted.status,
          detail: 'scripted',
        });
      response.writeHead(scripted.status, {
        'content-type': 'application/problem+json',
        ...scripted.headers,
      });
      response.end(text);
      return;
    }
    seen.push({ method, path, body, outcome: 'proxied' });
    const headers = new Headers();
    for (const [key, value] of Object.entries(request.headers)) {
      if (value === undefined || ['host', 'connection', 'content-length'].includes(key)) continue;
      headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    try {
      const answer = await fetch(`${upstream}${path}`, {
        method,
        headers,
        body: method === 'GET' || method === 'HEAD' ? undefined : new Uint8Array(body),
      });
      const bytes = Buffer.from(await answer.arrayBuffer());
      const out: Record<string, string> = {};
      answer.headers.forEach((value, key) => {
        if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(key))
          out[key] = value;
      });
      response.writeHead(answer.status, out);
      response.end(bytes);
    } catch (error) {
      response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    seen,
    script(answers, matches = () => true) {
      pending = { answers: [...answers], matches };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
