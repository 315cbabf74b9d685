/**
 * The Postgres adapter prepares each parameterised statement once per connection (issue 18): the
 * statements reach `pg` as named query configs, the same text always under the same name, and a
 * schema change made behind a connection's back (a migration run by another process) costs one
 * retried transaction, not a failure.
 */
import { createBillingEngine, createTestGateway, ManualClock, type Storage } from 'billing-engine';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { closePostgresTestServer, modeCapabilities, postgresTestServer, testPool } from '../support/postgres.js';

afterAll(closePostgresTestServer);

/** What reached the driver: the name of each statement run as a named config, or null. */
function recordingPool(pool: pg.Pool, seen: { name: string | null; text: string }[]) {
  const wrapped = new WeakSet<object>();
  return {
    async connect() {
      const client = await pool.connect();
      if (!wrapped.has(client)) {
        wrapped.add(client);
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
        (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
          const [first] = args;
          if (typeof first === 'string') seen.push({ name: null, text: first });
          else {
            const config = first as { name?: string; text: string };
            seen.push({ name: config.name ?? null, text: config.text });
          }
          return query(...args);
        };
      }
      return client;
    },
    end: () => pool.end(),
  };
}

async function openStorage(preparedStatements: boolean) {
  const server = await postgresTestServer();
  const schema = await server.freshSchema();
  const seen: { name: string | null; text: string }[] = [];
  // One connection, so that every transaction reuses the statements the last one prepared.
  const pool = testPool(server, schema, { max: 1 });
  const capabilities = modeCapabilities();
  const storage: Storage = createPostgresStorage({
    pool: recordingPool(pool, seen),
    schema: null,
    preparedStatements,
    ...(capabilities === undefined ? {} : { capabilities }),
  });
  await storage.migrate();
  const engine = createBillingEngine({
    storage,
    gateway: createTestGateway(),
    clock: new ManualClock('2026-03-01T00:00:00Z'),
  });
  return { server, schema, storage, engine, seen };
}

describe('Postgres prepared statements', () => {
  it('runs each parameterised statement under one name per text, and the rest unnamed', async () => {
    const { storage, engine, seen } = await openStorage(true);
    try {
      await engine.sites.create({ subdomain: 'prepared-a', currency: 'USD' });
      seen.length = 0;
      const read = () => storage.transaction((tx) => tx.sites.findBySubdomain('prepared-a'));
      expect((await read())?.subdomain).toBe('prepared-a');
      expect((await read())?.subdomain).toBe('prepared-a');
      const named = seen.filter((s) => s.name !== null);
      expect(named.length).toBeGreaterThanOrEqual(2);
      const namesByText = new Map<string, Set<string>>();
      for (const s of named) namesByText.set(s.text, (namesByText.get(s.text) ?? new Set()).add(s.name!));
      for (const names of namesByText.values()) expect(names.size).toBe(1);
      // The same lookup twice: the second ran under the first one's name.
      expect(named[named.length - 1]!.name).toBe(named[0]!.name);
      // begin and commit carry no parameters: simple protocol, unnamed.
      expect(seen.some((s) => s.name === null && /^begin/i.test(s.text))).toBe(true);
      expect(seen.some((s) => s.name !== null && /^(begin|commit)/i.test(s.text))).toBe(false);
    } finally {
      await storage.close();
    }
  });

  it('sends plain (text, values) queries when turned off', async () => {
    const { storage, engine, seen } = await openStorage(false);
    try {
      await engine.sites.create({ subdomain: 'prepared-b', currency: 'USD' });
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((s) => s.name === null)).toBe(true);
    } finally {
      await storage.close();
    }
  });

  it('runs the transaction again when a column was added behind a prepared select', async () => {
    const { server, schema, storage, engine } = await openStorage(true);
    const sites = `${pg.escapeIdentifier(schema)}.sites`;
    try {
      await engine.sites.create({ subdomain: 'prepared-c', currency: 'EUR' });
      const read = () => storage.transaction((tx) => tx.sites.findBySubdomain('prepared-c'));
      expect((await read())?.currency).toBe('EUR');
      // Another process migrates: the prepared `select *` would now return one more column.
      await server.query(`alter table ${sites} add column prepared_test_extra text`);
      try {
        const after = await read();
        expect(after?.subdomain).toBe('prepared-c');
        expect(after?.currency).toBe('EUR');
        // And later transactions keep working on the new names.
        expect((await read())?.currency).toBe('EUR');
      } finally {
        await server.query(`alter table ${sites} drop column prepared_test_extra`);
      }
    } finally {
      await storage.close();
    }
  });
});
