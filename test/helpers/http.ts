import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** What a test reads of an answer, the same whether it came through app.inject or a socket. */
export interface Fetched {
  statusCode: number;
  headers: Record<string, string | undefined>;
  body: string;
  rawPayload: Buffer;
  // biome-ignore lint/suspicious/noExplicitAny: the same untyped json() as light-my-request's responses
  json<T = any>(): T;
}

/**
 * How a test reaches the service: `inject` calls Fastify's handler directly; `http` goes over a real
 * socket, through the server's request listener and so through the response cache in front of
 * Fastify (src/cache/response-cache.ts), which inject never reaches.
 */
export type Transport = 'inject' | 'http';

/** Makes the app listen on a free port (once) and answers its base URL. */
export async function listening(app: FastifyInstance): Promise<string> {
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

export async function fetchVia(
  transport: Transport,
  app: FastifyInstance,
  url: string,
  headers: Record<string, string> = {},
): Promise<Fetched> {
  if (transport === 'inject') {
    const res = await app.inject({ method: 'GET', url, headers });
    return {
      statusCode: res.statusCode,
      headers: res.headers as Record<string, string | undefined>,
      body: res.body,
      rawPayload: res.rawPayload,
      json: () => res.json(),
    };
  }
  const response = await fetch(`${await listening(app)}${url}`, { headers });
  const rawPayload = Buffer.from(await response.arrayBuffer());
  const body = rawPayload.toString('utf8');
  return {
    statusCode: response.status,
    headers: Object.fromEntries(response.headers),
    body,
    rawPayload,
    json: () => JSON.parse(body),
  };
}
