import { randomFillSync } from 'node:crypto';

/** What a caller's X-Request-Id may be for it to be honoured (and logged) as it is. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request id of an exchange: the caller's X-Request-Id when it is a sane token, so one id follows
 * a request through proxies and logs, else a new random UUID.
 */
export function requestIdFrom(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomRequestId();
}

/**
 * Random (version 4) UUIDs, like crypto.randomUUID() and as cheap as the response cache needs them.
 * randomUUID() refills its random bytes every 128 ids and builds each id from many concatenated
 * pieces, which Node then flattens to check it as a header value. Here one fill serves BATCH ids, all
 * formatted at once into one string; an id is a slice of it, flat already.
 */
const BATCH = 512;
const HEX = Buffer.from('0123456789abcdef', 'latin1');
const random = Buffer.alloc(16 * BATCH);
const text = Buffer.alloc(36 * BATCH);
let ids = '';
let taken = BATCH;

export function randomRequestId(): string {
  if (taken === BATCH) refill();
  const start = taken * 36;
  taken++;
  return ids.slice(start, start + 36);
}

function refill(): void {
  randomFillSync(random);
  let out = 0;
  for (let id = 0; id < BATCH; id++) {
    const at = id * 16;
    // RFC 9562: version 4 in the high nibble of byte 6, variant 10xx in the high bits of byte 8.
    random[at + 6] = (random[at + 6]! & 0x0f) | 0x40;
    random[at + 8] = (random[at + 8]! & 0x3f) | 0x80;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[out++] = 0x2d;
      const byte = random[at + i]!;
      text[out++] = HEX[byte >> 4]!;
      text[out++] = HEX[byte & 15]!;
    }
  }
  ids = text.toString('latin1', 0, out);
  taken = 0;
}
