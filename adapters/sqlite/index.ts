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
import { type DialectHooks, driverErrorCode, type ReadConnection } from '../sql/dialect-hooks.js';
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
  /**
   * At most how many read connections a file database opens for read-only transactions (default
   * 4, opened as needed; `0` runs them on the writer's connection). They let reads run while a
   * write transaction is open; better-sqlite3 runs each statement synchronously, so more would
   * only help transactions that wait between their statements.
   */
  readonly readConnections?: number;
  /**
   * Called with the text of every statement the storage runs, on every connection, before it
   * runs (`begin`, `commit` included): for tracing, and for counting statements and transactions
   * in benchmarks. Absent, statements run untouched.
   */
  readonly trace?: (sql: string) => void;
}

const UNIQUE_VIOLATIONS = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);
const STATEMENT_CACHE_SIZE = 256;
const DEFAULT_READ_CONNECTIONS = 4;

/**
 * Creates a storage on SQLite. Files use WAL (readers never block the writer), foreign keys are
 * on (deleting a site cascades), and a busy timeout lets processes sharing a file wait for each
 * other. Every transaction starts with `BEGIN IMMEDIATE`, so writers are serialised from their
 * first statement: a transaction never reads, loses the race for the write lock and fails
 * halfway, which makes claims and version checks race-free without row locks. Write
 * transactions of one storage, and of all storages of one file in this process, run one at a time.
 * Read-only transactions (`{ readOnly: true }`) on a file open with a deferred `begin` on read
 * connections of their own (`pragma query_only`, so a write in one fails), outside the writers'
 * queue: WAL gives each the last committed state while a writer works. On `:memory:` they share
 * the one connection and refuse writes the same way. Call `migrate()` before first use.
 */
export function createSqliteStorage(options: SqliteStorageOptions): Storage {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const database = open(options.database, busyTimeoutMs);
  const file =
    database.memory === true || database.name === undefined || database.name === '' ? undefined : database.name;
  const writers: WriterQueue | undefined =
    file === undefined || file === ':memory:' ? undefined : joinWriterQueue(resolve(file));

  const readers =
    file === undefined || file === ':memory:'
      ? undefined
      : createReaderPool(file, busyTimeoutMs, options.readConnections ?? DEFAULT_READ_CONNECTIONS, options.trace);

  const hooks: DialectHooks = {
    name: 'sqlite',
    beginStatement: () => 'begin immediate',
    // Deferred: takes no lock until it reads, and never the write lock since it never writes.
    readOnlyBeginStatement: () => 'begin',
    ...(readers === undefined ? {} : { readConnection: () => readers.acquire() }),
    // Read-only transactions on the writer's connection (`:memory:`) refuse writes for their span.
    readOnlyGuard: { enter: 'pragma query_only = on', leave: 'pragma query_only = off' },
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

  const cached = withStatementCache(database, () => writers?.dispose(), options.trace);
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
    release: async () => {
      await readers?.close();
      cached.close();
    },
  });
}

/** The read connections of a file database, opened as needed up to `size`. */
interface ReaderPool {
  acquire(): Promise<ReadConnection>;
  close(): Promise<void>;
}

/**
 * A few read connections of `file`, each a Kysely over its own better-sqlite3 database with its
 * own statement cache. A transaction takes the least busy one (opening another while under
 * `size`); Kysely queues transactions of one connection, so more callers than connections wait
 * for their turn rather than failing. `size` 0 lends none (reads then use the writer's connection).
 */
function createReaderPool(
  file: string,
  busyTimeoutMs: number,
  size: number,
  trace: ((sql: string) => void) | undefined,
): ReaderPool | undefined {
  const limit = Math.max(0, Math.trunc(size));
  if (limit === 0) return undefined;
  const readers: { db: Kysely<Database>; busy: number; database: SqliteDatabase }[] = [];
  let closed = false;
  const open = () => {
    const database = withStatementCache(
      (() => {
        const Database = loadBetterSqlite3();
        try {
          return new Database(file, { timeout: busyTimeoutMs });
        } catch (error) {
          throw new BillingError('storage', `Cannot open SQLite database ${file}: ${(error as Error).message}`, {
            cause: error,
          });
        }
      })(),
      () => {},
      trace,
    );
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({
        database,
        async onCreateConnection(connection) {
          await connection.executeQuery(
            CompiledQuery.raw(`pragma busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`),
          );
          // A write on a read connection fails (SQLITE_READONLY) instead of taking the write lock
          // behind the writers' queue's back.
          await connection.executeQuery(CompiledQuery.raw('pragma query_only = on'));
        },
      }),
    });
    const reader = { db, busy: 0, database };
    readers.push(reader);
    return reader;
  };
  return {
    async acquire() {
      if (closed) throw new BillingError('storage', 'The storage is closed.');
      let chosen = readers[0];
      for (const reader of readers) if (chosen === undefined || reader.busy < chosen.busy) chosen = reader;
      if (chosen === undefined || (chosen.busy > 0 && readers.length < limit)) chosen = open();
      const taken = chosen;
      taken.busy += 1;
      let released = false;
      return {
        db: taken.db,
        release() {
          if (released) return;
          released = true;
          taken.busy -= 1;
        },
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const reader of readers.splice(0)) {
        await reader.db.destroy();
        reader.database.close();
      }
    },
  };
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
function withStatementCache(
  database: SqliteDatabase,
  onClose: () => void,
  trace?: (sql: string) => void,
): SqliteDatabase {
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
      const prepared = database.prepare(text);
      const statement = trace === undefined ? prepared : traced(prepared, text, trace);
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

/** A statement that reports its text to `trace` each time it runs. */
function traced(statement: SqliteStatement, text: string, trace: (sql: string) => void): SqliteStatement {
  return {
    get reader() {
      return statement.reader;
    },
    all(parameters) {
      trace(text);
      return statement.all(parameters);
    },
    run(parameters) {
      trace(text);
      return statement.run(parameters);
    },
    iterate(parameters) {
      trace(text);
      return statement.iterate(parameters);
    },
  };
}
