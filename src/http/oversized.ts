import type { IncomingMessage } from 'node:http';

/**
 * A body over the limit is refused before it has all arrived. Answering and closing at once makes the
 * client's remaining writes meet a closed socket: the reset can reach it before the answer, so it
 * sees "connection reset" instead of the 413. So the rest of the body is read and thrown away first,
 * up to a bound in bytes and in time (a huge or endless body is cut off there), and the answer closes
 * the connection.
 */

/** Bytes of an oversized body read and discarded before the answer (beyond that, the socket closes). */
export const DISCARD_BYTES = 64 * 1024 * 1024;
/** How long discarding may take. */
export const DISCARD_MS = 10_000;

export async function discardRestOfBody(raw: IncomingMessage): Promise<void> {
  const declared = Number(raw.headers['content-length']);
  if (raw.complete || raw.destroyed) return;
  // A declared length past the bound is not worth reading: answer now.
  if (Number.isFinite(declared) && declared > DISCARD_BYTES) return;
  await new Promise<void>((resolve) => {
    let discarded = 0;
    const finish = () => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', finish);
      raw.off('error', finish);
      raw.off('close', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > DISCARD_BYTES) finish();
    };
    const timer = setTimeout(finish, DISCARD_MS);
    raw.on('data', onData);
    raw.once('end', finish);
    raw.once('error', finish);
    raw.once('close', finish);
    raw.resume();
  });
}
