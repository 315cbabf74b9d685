/**
 * The Postgres adapter: the shared SQL storage over a `pg` pool. This file only wraps the pool
 * and says how Postgres isolates, locks and reports errors; everything else is in `../sql`.
 */
import type { Storage, StorageCapabilities } from 'billing-engine';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, type SqlBool, sql } from 'kysely';
import { type DialectHooks, driverErrorCode } from '../sql/dialect-hooks.js';
import type { Database } from '../sql/schema.js';
import { createSqlStorage } from '../sql/sql-storage.js';

/** A pooled client, typed structurally like Kysely's (a `pg` `PoolClient` fits). */
export interface PostgresPoolClientLike extends PostgresPoolClient {
  on?(event: 'error', listener: (error: Error) => void): unknown;
}

/** A connection pool, typed structurally like Kysely's `PostgresPool` (a `pg` `Pool` fits). */
export interface PostgresPoolLike {
  connect(): Promise<PostgresPoolClientLike>;
  end(): Promise<void>;
}

/** Options of {@link createPostgresStorage}. */
export interface PostgresStorageOptions {
  /**
   * The pool. The storage owns it: `close()` ends it. Tables are created in the connection's
   * `search_path` schema, so a pool with `options: '-c search_path=billing'` keeps the engine in
   * its own schema. Give the pool an `'error'` listener, as `pg` asks of every pool.
   */
  readonly pool: PostgresPoolLike;
  /** How many times a transaction that failed with a serialization failure or deadlock is run in all (default 5). */
  readonly maxAttempts?: number;
  /**
   * Overrides of the reported capabilities, for servers that serialise sessions (PGlite over a
   * socket runs one transaction at a time, so it is not `concurrentTransactions`).
   */
  readonly capabilities?: Partial<Pick<StorageCapabilities, 'concurrentTransactions' | 'multiProcess'>>;
}

const RETRYABLE = new Set(['40001', '40P01']);

/**
 * Creates a storage on Postgres. Transactions run at the requested isolation (read committed by
 * default) and are run again, whole, after a serialization failure or deadlock; claims of due
 * work lock rows with `FOR UPDATE SKIP LOCKED`, so any number of workers in any number of
 * processes share one backlog without double claims. Call `migrate()` before first use.
 */
export function createPostgresStorage(options: PostgresStorageOptions): Storage {
  const hooks: DialectHooks = {
    name: 'postgres',
    beginStatement: (txOptions) =>
      `begin isolation level ${txOptions?.isolation === 'serializable' ? 'serializable' : 'read committed'}`,
    maxAttempts: Math.max(1, options.maxAttempts ?? 5),
    isRetryable: (error) => RETRYABLE.has(driverErrorCode(error) ?? ''),
    isUniqueViolation: (error) => driverErrorCode(error) === '23505',
    isForeignKeyViolation: (error) => driverErrorCode(error) === '23503',
    failedStatementAbortsTransaction: true,
    // jsonb containment; jsonb_build_array makes the value a JSON string whatever it holds.
    jsonArrayContains: (column, value) => sql<SqlBool>`${sql.ref(column)} @> jsonb_build_array(${value}::text)`,
    rowLocks: true,
    async lockMigrations(db) {
      // Per schema, so that databases holding several engines (or test schemas) do not wait on each other.
      await sql`select pg_advisory_xact_lock(hashtextextended('billing-engine:migrate:' || coalesce(current_schema(), ''), 0))`.execute(
        db,
      );
    },
    async lockOutbox(db, siteIds) {
      // Sorted, so that two transactions appending for the same sites cannot deadlock on the order.
      for (const siteId of [...siteIds].sort((a, b) => a - b)) {
        await sql`select pg_advisory_xact_lock(hashtextextended(${`billing-engine:outbox:${siteId}:`} || coalesce(current_schema(), ''), 0))`.execute(
          db,
        );
      }
    },
  };

  const pool = watchClients(options.pool);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return createSqlStorage({
    db,
    hooks,
    capabilities: {
      dialect: 'postgres',
      concurrentTransactions: options.capabilities?.concurrentTransactions ?? true,
      multiProcess: options.capabilities?.multiProcess ?? true,
    },
    release: () => pool.end(),
  });
}

/**
 * `pg` emits `'error'` on a checked-out client whose connection dies, and an `'error'` event
 * without a listener crashes the process. The query in flight already rejects with that error
 * (and the transaction fails with `BillingError('storage')`), so the listener only has to exist;
 * `pg-pool` then drops the broken client when it is released.
 */
function watchClients(pool: PostgresPoolLike): PostgresPool {
  const watched = new WeakSet<object>();
  let ended: Promise<void> | undefined;
  return {
    async connect() {
      const client = await pool.connect();
      if (!watched.has(client) && typeof client.on === 'function') {
        watched.add(client);
        client.on('error', () => {});
      }
      return client;
    },
    // Once only: `pg` throws on a second end(), and both Kysely and the storage may call it.
    end: () => {
      ended ??= pool.end();
      return ended;
    },
  };
}
