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
  /** The statement that opens a transaction (`begin immediate`, `begin isolation level ...`). */
  beginStatement(options: TransactionOptions | undefined): string;
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
