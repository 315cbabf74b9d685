import Database from 'better-sqlite3';
import { BillingError } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { runStorageConformance } from 'billing-engine/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SqlFixture, sqlAdapterCases } from '../support/sql-adapter-cases.js';
import { fileStorage, sqliteHarness, tempDir } from '../support/sqlite.js';

runStorageConformance({ describe, it, expect, beforeEach, afterEach, beforeAll, afterAll }, sqliteHarness);

/** A storage on a temp file over a Database we hold, so tests can close it under the storage. */
async function openFixture(): Promise<SqlFixture> {
  const dir = tempDir();
  const file = dir.file('billing.sqlite');
  const database = new Database(file);
  const storage = createSqliteStorage({ database });
  await storage.migrate();
  const side = new Database(file);
  const opened: { close(): Promise<void> }[] = [];
  return {
    storage,
    async reopen() {
      const other = await fileStorage(file);
      opened.push(other);
      return other;
    },
    async raw(sql) {
      const statement = side.prepare(sql);
      if (statement.reader) return statement.all() as Record<string, unknown>[];
      statement.run();
      return [];
    },
    async killConnection() {
      database.close();
    },
    async tableCounts() {
      const tables = side
        .prepare(
          "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name <> 'billing_migrations'",
        )
        .all() as { name: string }[];
      return Object.fromEntries(
        tables.map(({ name }) => [
          name,
          (side.prepare(`select count(*) as n from "${name}"`).get() as { n: number }).n,
        ]),
      );
    },
    async dispose() {
      await storage.close().catch(() => {});
      for (const other of opened) await other.close().catch(() => {});
      side.close();
      dir.dispose();
    },
  };
}

sqlAdapterCases({ name: 'sqlite', open: openFixture });

describe('sqlite adapter specifics', () => {
  const dir = tempDir();
  afterAll(() => dir.dispose());

  it('opens files in WAL mode with foreign keys on and a busy timeout', async () => {
    const database = new Database(dir.file('pragmas.sqlite'));
    const storage = createSqliteStorage({ database, busyTimeoutMs: 1234 });
    await storage.migrate();
    expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(database.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(database.pragma('busy_timeout', { simple: true })).toBe(1234);
    expect(storage.capabilities).toEqual({ dialect: 'sqlite', concurrentTransactions: false, multiProcess: true });
    await storage.close();
    expect(database.open).toBe(false);
  });

  it('declares an in-memory database single-process', () => {
    const storage = createSqliteStorage({ database: ':memory:' });
    expect(storage.capabilities.multiProcess).toBe(false);
    return storage.close();
  });

  it('creates STRICT tables, so a float can never be stored as money', async () => {
    const file = dir.file('strict.sqlite');
    const storage = await fileStorage(file);
    const side = new Database(file);
    try {
      const tables = side
        .prepare("select name, strict from pragma_table_list where schema = 'main' and name not like 'sqlite_%'")
        .all() as {
        name: string;
        strict: number;
      }[];
      expect(tables.length).toBeGreaterThan(10);
      expect(tables.filter((t) => t.strict !== 1)).toEqual([]);
      expect(() =>
        side
          .prepare(
            'insert into sites (subdomain, name, currency, time_zone, date_format, time_format, mode, shared_key, settings, version, created_at, updated_at) values (?,?,?,?,?,?,?,?,?,?,?,?)',
          )
          .run('x', 'x', 'USD', 'UTC', 'd', 't', 'test', 'k', '{}', 1, 1.5, 1),
      ).toThrow(/cannot store REAL value in INTEGER column/);
    } finally {
      side.close();
      await storage.close();
    }
  });

  it('fails cleanly when the file cannot be opened', () => {
    expect(() => createSqliteStorage({ database: dir.file('missing/dir/db.sqlite') })).toThrow(BillingError);
  });
});
