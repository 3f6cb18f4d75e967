import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { createTestDatabase, type TestDatabase } from '../helpers/context.js';

/**
 * Bundles are stored as bytea: whichever driver the run uses (PGlite's own hex conversion is replaced
 * in src/db/client.ts), bytes go in and come back exactly, as plain Uint8Arrays.
 */
describe('bytea through the database driver', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = await testDatabase.open();
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  const roundTrip = async (bytes: Uint8Array): Promise<Uint8Array> => {
    const result = await database.db.execute(
      sql`select ${bytes}::bytea as bytes, length(${bytes}::bytea) as n`,
    );
    const row = (result as unknown as { rows: { bytes: Uint8Array; n: number }[] }).rows[0]!;
    expect(Number(row.n)).toBe(bytes.byteLength);
    return row.bytes;
  };

  it('keeps every byte value, an empty value and a megabyte of random bytes', async () => {
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    const random = new Uint8Array(randomBytes(1 << 20));
    for (const bytes of [every, new Uint8Array(0), random]) {
      const back = await roundTrip(bytes);
      expect(back).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(back).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('stores a view into a larger buffer as the view only', async () => {
    const whole = Uint8Array.from({ length: 64 }, (_, i) => i);
    const back = await roundTrip(whole.subarray(10, 20));
    expect([...back]).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  });
});
