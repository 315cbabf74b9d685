/**
 * The Postgres adapter: the shared SQL storage over a `pg` pool. This file only wraps the pool
 * and says how Postgres isolates, locks and reports errors; everything else is in `../sql`.
 */
import type { Storage, StorageCapabilities } from 'billing-engine';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, type SqlBool, sql } from 'kysely';
import { type DialectHooks, driverErrorCode } from '../sql/dialect-hooks.js';
import { outboxLockKey } from '../sql/repositories/outbox.js';
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
   * The pool. The storage owns it: `close()` ends it. Give the pool an `'error'` listener, as
   * `pg` asks of every pool.
   */
  readonly pool: PostgresPoolLike;
  /**
   * The schema the engine's tables live in (default `billing`), created on first use, so that
   * they never collide with an application's own `customers` or `subscriptions` in `public`.
   * Every connection the storage takes gets `search_path` set to it. `null` leaves the
   * connection's own `search_path` alone (for a pool that sets it, e.g. with
   * `options: '-c search_path=...'`).
   */
  readonly schema?: string | null;
  /** How many times a transaction that failed with a serialization failure or deadlock is run in all (default 5). */
  readonly maxAttempts?: number;
  /**
   * Overrides of the reported capabilities, for servers that serialise sessions (PGlite over a
   * socket runs one transaction at a time, so it is not `concurrentTransactions`).
   */
  readonly capabilities?: Partial<Pick<StorageCapabilities, 'concurrentTransactions' | 'multiProcess'>>;
  /**
   * Whether each connection prepares a statement the first time it runs it and reuses it after
   * (default true): the server parses and plans the engine's few hundred statement shapes once
   * per connection instead of on every call. Needs a `pg` client (it passes `{ name, text, values }`
   * query configs); turn it off for a pool whose clients take only `(text, values)`, or behind a
   * pooler in transaction mode that does not keep prepared statements per session.
   */
  readonly preparedStatements?: boolean;
  /**
   * Whether the pool's clients pipeline (default: what the pool says, `true` for a `pg` `Pool`
   * made with `{ pipeline: true }`, which `pg` 8.23, the peer range, has). A pipelining client
   * sends the statements issued at once without waiting for each answer, and the engine then runs the independent
   * steps of a batch of due work at once in their shared transaction: on a machine where a round
   * trip costs far more than a statement, this multiplies what one worker renews. Give it for a
   * wrapper that hides the pool's options; never `true` for clients that do not pipeline.
   */
  readonly pipelining?: boolean;
}

/** Whether `pool` is a `pg` `Pool` whose clients pipeline (`new Pool({ pipeline: true })`). */
function poolPipelines(pool: PostgresPoolLike): boolean {
  return (pool as { options?: { pipeline?: unknown } }).options?.pipeline === true;
}

const RETRYABLE = new Set(['40001', '40P01']);

/**
 * Creates a storage on Postgres. Transactions run at the requested isolation (read committed by
 * default) and are run again, whole, after a serialization failure or deadlock; claims of due
 * work lock rows with `FOR UPDATE SKIP LOCKED`, so any number of workers in any number of
 * processes share one backlog without double claims. Call `migrate()` before first use.
 */
export function createPostgresStorage(options: PostgresStorageOptions): Storage {
  const pipelining = options.pipelining ?? poolPipelines(options.pool);
  const hooks: DialectHooks = {
    name: 'postgres',
    beginStatement: (txOptions) =>
      `begin isolation level ${txOptions?.isolation === 'serializable' ? 'serializable' : 'read committed'}`,
    maxAttempts: Math.max(1, options.maxAttempts ?? 5),
    isRetryable: (error) => RETRYABLE.has(driverErrorCode(error) ?? '') || (statements?.isStalePlan(error) ?? false),
    isUniqueViolation: (error) => driverErrorCode(error) === '23505',
    isForeignKeyViolation: (error) => driverErrorCode(error) === '23503',
    failedStatementAbortsTransaction: true,
    // jsonb containment; jsonb_build_array makes the value a JSON string whatever it holds.
    jsonArrayContains: (column, value) => sql<SqlBool>`${sql.ref(column)} @> jsonb_build_array(${value}::text)`,
    rowLocks: true,
    pipelining,
    async lockMigrations(db) {
      // Per schema, so that databases holding several engines (or test schemas) do not wait on each other.
      await sql`select pg_advisory_xact_lock(hashtextextended('billing-engine:migrate:' || coalesce(current_schema(), ''), 0))`.execute(
        db,
      );
    },
    async lockOutbox(db, siteIds) {
      // Shared: appenders never wait on each other, only on a paging reader (see sql/repositories/outbox.ts).
      // Sorted, so that an appender and a reader of the same sites cannot deadlock on the order.
      for (const siteId of [...siteIds].sort((a, b) => a - b)) {
        await sql`select pg_advisory_xact_lock_shared(${outboxLockKey(siteId)})`.execute(db);
      }
    },
  };

  const statements = (options.preparedStatements ?? true) ? new StatementNames() : null;
  const pool = watchClients(options.pool, schemaOf(options.schema), statements, pipelining);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return createSqlStorage({
    db,
    hooks,
    capabilities: {
      dialect: 'postgres',
      concurrentTransactions: options.capabilities?.concurrentTransactions ?? true,
      multiProcess: options.capabilities?.multiProcess ?? true,
      pipelining,
    },
    release: () => pool.end(),
  });
}

/** The default schema of the engine's tables. */
export const DEFAULT_POSTGRES_SCHEMA = 'billing';

/** A plain identifier (quoted anyway), so that a schema name can never smuggle SQL. */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

function schemaOf(schema: string | null | undefined): string | null {
  if (schema === null) return null;
  const name = schema ?? DEFAULT_POSTGRES_SCHEMA;
  if (!SCHEMA_NAME.test(name)) {
    throw new TypeError(
      `The Postgres schema must be a plain identifier (letters, digits and underscores, at most 63, not starting with a digit); got ${JSON.stringify(name)}.`,
    );
  }
  return name;
}

/** Schema already there (`42P06`), or created at the same moment by another process (`23505`). */
const SCHEMA_RACE = new Set(['42P06', '23505']);

/**
 * `pg` emits `'error'` on a checked-out client whose connection dies, and an `'error'` event
 * without a listener crashes the process. The query in flight already rejects with that error
 * (and the transaction fails with `BillingError('storage')`), so the listener only has to exist;
 * `pg-pool` then drops the broken client when it is released.
 *
 * With a `schema`, each new connection is pointed at it (`search_path`) before first use, and the
 * schema is created once per storage.
 */
function watchClients(
  pool: PostgresPoolLike,
  schema: string | null,
  statements: StatementNames | null,
  pipelining: boolean,
): PostgresPool {
  const watched = new WeakSet<object>();
  let ended: Promise<void> | undefined;
  let created: Promise<void> | undefined;
  const quoted = schema === null ? null : `"${schema}"`;
  return {
    async connect() {
      const client = await pool.connect();
      if (!watched.has(client)) {
        if (quoted !== null) {
          try {
            created ??= client
              .query(`create schema if not exists ${quoted}`, [])
              .then(
                () => undefined,
                (error: unknown) => {
                  if (!SCHEMA_RACE.has(driverErrorCode(error) ?? '')) throw error;
                },
              )
              .catch((error: unknown) => {
                created = undefined;
                throw error;
              });
            await created;
            await client.query(`set search_path to ${quoted}`, []);
          } catch (error) {
            client.release();
            throw error;
          }
        }
        watched.add(client);
        if (typeof client.on === 'function') client.on('error', () => {});
        if (statements !== null) prepareOnFirstUse(client, statements);
        if (pipelining) coalesceWrites(client);
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

/**
 * Names for the statements a storage prepares, one per SQL text (the same text always gets the
 * same name on a connection, as `pg` requires). Statements without parameters (`begin`, `commit`,
 * DDL) go through the simple protocol unnamed; so do texts past {@link MAX_PREPARED_SHAPES}, since
 * a query with a variable-length `in (...)` list makes a new text per length and each prepared one
 * holds memory on the server for the life of the connection.
 *
 * Each connection's names carry its own number: a server that runs every connection in one
 * session (PGlite over a socket) then never sees two connections prepare the same name.
 *
 * A schema change made elsewhere (a migration run by another process) can leave a connection's
 * prepared `select *` returning other columns, and the server then refuses it ("cached plan must
 * not change result type"). Such an error starts a new generation, so every statement gets a new
 * name (and a fresh plan) from then on, and the transaction is run again.
 */
class StatementNames {
  readonly #names = new Map<string, string>();
  #generation = 0;

  /** The suffix naming this text, or undefined to run it unprepared. */
  suffixOf(text: string): string | undefined {
    const known = this.#names.get(text);
    if (known !== undefined) return known;
    if (this.#names.size >= MAX_PREPARED_SHAPES) return undefined;
    const suffix = `${this.#generation}_${this.#names.size}`;
    this.#names.set(text, suffix);
    return suffix;
  }

  isStalePlan(error: unknown): boolean {
    if (driverErrorCode(error) !== '0A000' || !/cached plan must not change result type/i.test(String(error)))
      return false;
    this.#generation += 1;
    this.#names.clear();
    return true;
  }
}

/** At most this many statement texts are prepared per storage (see {@link StatementNames}). */
const MAX_PREPARED_SHAPES = 2000;

/** Numbers the connections of every storage in the process, for their statement names. */
let connectionsPrepared = 0;

/** Makes the client run each parameterised statement as a named (prepared) one. */
function prepareOnFirstUse(client: PostgresPoolClientLike, statements: StatementNames): void {
  connectionsPrepared += 1;
  const prefix = `billing_${connectionsPrepared}_`;
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (args.length === 2 && typeof text === 'string' && Array.isArray(values) && values.length > 0) {
      const suffix = statements.suffixOf(text);
      if (suffix !== undefined) return query({ name: prefix + suffix, text, values });
    }
    return query(...args);
  };
}

/**
 * Makes a pipelining client send the statements issued together in one write. `pg` writes each
 * statement's messages as soon as it is issued (one `writev` each), and on a virtual machine a
 * system call costs about as much as the statement's own work; the commands of a batch resume on
 * the answers of one socket read and issue their next statements in the same run of microtasks,
 * so holding the socket until that run ends (`cork`, and `uncork` in `process.nextTick`) sends
 * them all at once, and a lone statement waits for nothing.
 */
function coalesceWrites(client: PostgresPoolClientLike): void {
  const stream = (client as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection
    ?.stream;
  if (typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return;
  const socket = stream as { cork(): void; uncork(): void };
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      // After the microtasks now queued (the batch's commands resuming on the answers of one
      // read issue their next statements there), without waiting for another turn of the loop.
      process.nextTick(uncork);
    }
    return query(...args);
  };
}
