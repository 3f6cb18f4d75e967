/**
 * The baseline of the benchmark: a bare Fastify process (default options, no logger, no hooks) that
 * serves, for each URL, exactly the bytes and headers the registry answered, from memory, with the same
 * ETag and an If-None-Match check. The registry's read path is measured against this.
 *
 *   node --import tsx bench/baseline.ts <fixtures.json> <port>
 *
 * fixtures.json: [{url, status, headers: {etag, cache-control, content-type}, body (base64)}]
 *
 * Like the service, it keeps one tick object alive from its start (src/process/tick-shapes.ts): without
 * it either side's CPU per request depended on whether a full collection had landed while it was idle.
 */
import '../src/process/tick-shapes.js';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

interface Fixture {
  url: string;
  headers: Record<string, string>;
  body: string;
}

const [fixturesFile, portArgument] = process.argv.slice(2);
if (!fixturesFile || !portArgument) {
  process.stderr.write('usage: baseline.ts <fixtures.json> <port>\n');
  process.exit(2);
}

const fixtures = new Map<string, { headers: Record<string, string>; body: Buffer }>();
for (const fixture of JSON.parse(readFileSync(fixturesFile, 'utf8')) as Fixture[]) {
  fixtures.set(fixture.url, { headers: fixture.headers, body: Buffer.from(fixture.body, 'base64') });
}

const app = Fastify();
app.get('/*', (request, reply) => {
  const fixture = fixtures.get(request.url);
  if (!fixture) return reply.code(404).send();
  const etag = fixture.headers.etag!;
  reply.header('etag', etag).header('cache-control', fixture.headers['cache-control']!);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.type(fixture.headers['content-type']!).send(fixture.body);
});
await app.listen({ port: Number(portArgument), host: '127.0.0.1' });
process.stdout.write('ready\n');
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
