/**
 * The SQLite adapter: the shared SQL storage over better-sqlite3. This file only opens the
 * database, sets its pragmas and says how SQLite takes locks; everything else is in `../sql`.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { BillingError, type Storage } from 'billing-engine';
import {
  CompiledQuery,
  Kysely,
  type SqlBool,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteStatement,
  sql,
} from 'kysely';
import { type DialectHooks, driverErrorCode } from '../sql/dialect-hooks.js';
import type { Database } from '../sql/schema.js';
import { createSqlStorage } from '../sql/sql-storage.js';
import { joinWriterQueue, type WriterQueue } from './writer-queue.js';

/**
 * An open SQLite database, typed structurally the way Kysely types it (a better-sqlite3
 * `Database` fits). `name` and `memory`, when present, tell a file apart from an in-memory database.
 */
export interface SqliteDatabaseLike extends SqliteDatabase {
  readonly name?: string;
  readonly memory?: boolean;
}

/** Options of {@link createSqliteStorage}. */
export interface SqliteStorageOptions {
  /**
   * A file path, `':memory:'`, or an open database. The storage owns it either way: `close()`
   * closes it.
   */
  readonly database: string | SqliteDatabaseLike;
  /** How long a writer waits for another process's write lock before failing, in ms (default 5000). */
  readonly busyTimeoutMs?: number;
}

const UNIQUE_VIOLATIONS = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);
const STATEMENT_CACHE_SIZE = 256;

/**
 * Creates a storage on SQLite. Files use WAL (readers never block the writer), foreign keys are
 * on (deleting a site cascades), and a busy timeout lets processes sharing a file wait for each
 * other. Every transaction starts with `BEGIN IMMEDIATE`, so writers are serialised from their
 * first statement: a transaction never reads, loses the race for the write lock and fails
 * halfway, which makes claims and version checks race-free without row locks. Transactions of
 * one storage, and of all storages of one file in this process, run one at a time.
 * Call `migrate()` before first use.
 */
export function createSqliteStorage(options: SqliteStorageOptions): Storage {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const database = open(options.database, busyTimeoutMs);
  const file =
    database.memory === true || database.name === undefined || database.name === '' ? undefined : database.name;
  const writers: WriterQueue | undefined =
    file === undefined || file === ':memory:' ? undefined : joinWriterQueue(resolve(file));

  const hooks: DialectHooks = {
    name: 'sqlite',
    beginStatement: () => 'begin immediate',
    maxAttempts: 1,
    // BEGIN IMMEDIATE already waited `busyTimeoutMs` for the lock; waiting again would only hide overload.
    isRetryable: () => false,
    isUniqueViolation: (error) => UNIQUE_VIOLATIONS.has(driverErrorCode(error) ?? ''),
    isForeignKeyViolation: (error) => driverErrorCode(error) === 'SQLITE_CONSTRAINT_FOREIGNKEY',
    failedStatementAbortsTransaction: false,
    jsonArrayContains: (column, value) =>
      sql<SqlBool>`exists (select 1 from json_each(${sql.ref(column)}) where json_each.value = ${value})`,
    rowLocks: false,
    ...(writers === undefined ? {} : { acquireWriter: () => writers.acquire() }),
    // The migration transaction holds the file's write lock from its BEGIN IMMEDIATE.
    lockMigrations: async () => {},
    lockOutbox: async () => {},
  };

  const cached = withStatementCache(database, () => writers?.dispose());
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({
      database: cached,
      async onCreateConnection(connection) {
        // busy_timeout first, so that switching to WAL waits for another process holding the file.
        await connection.executeQuery(
          CompiledQuery.raw(`pragma busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`),
        );
        if (file !== undefined && file !== ':memory:') {
          await connection.executeQuery(CompiledQuery.raw('pragma journal_mode = wal'));
        }
        await connection.executeQuery(CompiledQuery.raw('pragma foreign_keys = on'));
      },
    }),
  });

  return createSqlStorage({
    db,
    hooks,
    capabilities: {
      dialect: 'sqlite',
      concurrentTransactions: false,
      multiProcess: file !== undefined && file !== ':memory:',
    },
    release: () => cached.close(),
  });
}

/**
 * better-sqlite3 is an optional peer, loaded when a database is opened by name (not when the
 * module is imported), so that a missing install fails with a message saying what to install.
 */
function loadBetterSqlite3(): typeof BetterSqlite3 {
  try {
    return createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'MODULE_NOT_FOUND' && /'better-sqlite3'/.test((error as Error).message)) {
      throw new BillingError(
        'storage',
        'billing-engine/adapters/sqlite needs the package better-sqlite3, which is not installed: install better-sqlite3 (npm install better-sqlite3).',
        { cause: error },
      );
    }
    throw error;
  }
}

function open(database: string | SqliteDatabaseLike, busyTimeoutMs: number): SqliteDatabaseLike {
  if (typeof database !== 'string') return database;
  const Database = loadBetterSqlite3();
  try {
    return new Database(database, { timeout: busyTimeoutMs });
  } catch (error) {
    throw new BillingError('storage', `Cannot open SQLite database ${database}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * Kysely prepares every statement anew; better-sqlite3 statements are reusable, and the engine
 * runs the same few statements over and over, so a small LRU of prepared statements saves the
 * parse and plan on each call.
 */
function withStatementCache(database: SqliteDatabase, onClose: () => void): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  let closed = false;
  return {
    prepare(text) {
      const cached = cache.get(text);
      if (cached !== undefined) {
        cache.delete(text);
        cache.set(text, cached);
        return cached;
      }
      const statement = database.prepare(text);
      cache.set(text, statement);
      if (cache.size > STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next();
        if (oldest.done !== true) cache.delete(oldest.value);
      }
      return statement;
    },
    close() {
      // Idempotent: Kysely closes a database it used, and the storage closes it again in any case.
      if (closed) return;
      closed = true;
      cache.clear();
      onClose();
      database.close();
    },
  };
}
