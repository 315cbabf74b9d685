/**
 * What the shared SQL storage needs to know about a dialect beyond what Kysely already abstracts:
 * how to open a transaction, which driver errors mean what, and how each dialect makes the
 * race-sensitive primitives safe (row locks on Postgres, one writer at a time on SQLite).
 */
import { BillingError, type TransactionOptions } from 'billing-engine';
import type { Kysely, RawBuilder, SqlBool } from 'kysely';
import type { SqlDialectName } from './codecs.js';
import type { Database } from './schema.js';

/** Dialect-specific behaviour of the shared SQL storage; built by `adapters/sqlite` and `adapters/postgres`. */
export interface DialectHooks {
  readonly name: SqlDialectName;
  /**
   * The statement that opens a transaction (`begin immediate`, `begin isolation level ...`). A
   * read-only transaction (`options.readOnly`) opens with {@link readOnlyBeginStatement} when the
   * dialect gives one, else with this one.
   */
  beginStatement(options: TransactionOptions | undefined): string;
  /**
   * The statement that opens a read-only transaction: one that takes no write lock (SQLite's
   * deferred `begin`) and that the database refuses writes in (Postgres `... read only`). When
   * absent, {@link defaultReadOnlyBegin} of the dialect is used.
   */
  readOnlyBeginStatement?(options: TransactionOptions | undefined): string;
  /**
   * Where read-only transactions run: a connection of their own beside the writer's (SQLite files
   * in WAL mode), taken for the transaction and handed back with `release`. Absent: on the
   * storage's own connections (Postgres pools, SQLite in memory).
   */
  readConnection?(): Promise<ReadConnection>;
  /**
   * Statements that make a read-only transaction refuse writes when it runs on a connection that
   * also writes (SQLite in memory: `pragma query_only`): `enter` after the begin, `leave` after
   * the commit or rollback.
   */
  readonly readOnlyGuard?: { readonly enter: string; readonly leave: string };
  /** How many times a whole transaction is tried when `isRetryable` says its failure was transient. */
  readonly maxAttempts: number;
  /** True for failures after which running the whole transaction again may succeed (serialization, deadlock). */
  isRetryable(error: unknown): boolean;
  /** True when the driver error is a unique-key (or primary-key) violation. */
  isUniqueViolation(error: unknown): boolean;
  /** True when the driver error is a foreign-key violation (a row still referenced, or a missing parent). */
  isForeignKeyViolation(error: unknown): boolean;
  /** A condition true when the JSON array in column `column` contains the string `value`. */
  jsonArrayContains(column: string, value: string): RawBuilder<SqlBool>;
  /**
   * Whether a failed statement aborts the whole transaction (Postgres) rather than only itself
   * (SQLite); statements that may fail on purpose then run inside a savepoint.
   */
  readonly failedStatementAbortsTransaction: boolean;
  /**
   * Whether the dialect has row locks (`FOR UPDATE`, `SKIP LOCKED`). Without them (SQLite) the
   * transaction already holds the database's only write lock, so reads are as good as locked.
   */
  readonly rowLocks: boolean;
  /**
   * Whether the connection sends statements issued at once without waiting for each other's
   * answers (a `pg` pool in pipeline mode). A write transaction's statements then go straight to
   * the connection instead of one at a time (Kysely's single-connection queue), so that the
   * independent commands of one batch share round trips (see `StorageCapabilities.pipelining`).
   */
  readonly pipelining?: boolean;
  /**
   * Waits until this transaction may write; the returned function lets the next writer in.
   * SQLite uses it to queue the storages of one file inside one process, whose `begin immediate`
   * would otherwise wait on each other inside the synchronous busy handler and block the event loop.
   */
  acquireWriter?(): Promise<() => void>;
  /** Serialises concurrent `migrate()` calls on one database (called first in the migration transaction). */
  lockMigrations(db: Kysely<Database>): Promise<void>;
  /**
   * Serialises outbox appends per site until commit, so that a site's event ids become visible in
   * increasing order and a reader paging with `listAfter` never skips an id committed late.
   */
  lockOutbox(db: Kysely<Database>, siteIds: readonly number[]): Promise<void>;
}

/** A connection lent to one read-only transaction (see {@link DialectHooks.readConnection}). */
export interface ReadConnection {
  readonly db: Kysely<Database>;
  release(): void;
}

/**
 * The begin statement of a read-only transaction when the dialect's hooks give none. Postgres
 * stays at read committed (or the serializable asked for) rather than taking one snapshot for the
 * whole transaction, because the outbox's paging reader waits on an advisory lock and then needs
 * a statement snapshot taken after the wait (sql/repositories/outbox.ts).
 */
export function defaultReadOnlyBegin(name: SqlDialectName, options: TransactionOptions | undefined): string {
  if (name === 'sqlite') return 'begin';
  return `begin isolation level ${options?.isolation === 'serializable' ? 'serializable' : 'read committed'} read only`;
}

/** Driver codes of a write refused because the transaction or connection is read-only. */
const READ_ONLY_VIOLATIONS = new Set(['25006', 'SQLITE_READONLY']);

/** True when the driver refused a write because the transaction (or connection) is read-only. */
export function isReadOnlyViolation(error: unknown): boolean {
  return READ_ONLY_VIOLATIONS.has(driverErrorCode(error) ?? '');
}

/**
 * The driver's error code (`23505`, `SQLITE_CONSTRAINT_UNIQUE`) of an error, looking through the
 * `cause` chain because our own `BillingError('storage')` keeps the driver error there.
 */
export function driverErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    if (!(current instanceof BillingError)) {
      const code = (current as { code?: unknown }).code;
      if (typeof code === 'string' && code !== '') return code;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
