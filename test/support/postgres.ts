/**
 * Postgres test harness. With `BILLING_TEST_POSTGRES_URL` set, tests run on that server in a
 * schema per test file (`search_path` set through the pool's startup `options`), so files run in
 * parallel without seeing each other; an unreachable server fails the tests. Without it, the same
 * `pg` code path runs against PGlite served over the wire protocol by
 * `@electric-sql/pglite-socket`, one in-process instance per test file, in its `public` schema.
 * PGlite is one session that runs one transaction at a time, so storages on it declare
 * `concurrentTransactions: false`.
 *
 * The file's schema is migrated once; each test then starts from it emptied by deleting the
 * sites (every other table cascades from `sites`), which takes milliseconds where creating and
 * migrating a schema per test would take hundreds.
 */
import { randomBytes } from 'node:crypto';
import type { Storage } from 'billing-engine';
import { createPostgresStorage, type PostgresStorageOptions } from 'billing-engine/adapters/postgres';
import type { StorageHarness } from 'billing-engine/testing';
import pg from 'pg';

/** The real server's URL, when tests run on one. */
export const POSTGRES_URL: string | undefined = process.env.BILLING_TEST_POSTGRES_URL || undefined;

/** Whether the Postgres tests run on PGlite (no `BILLING_TEST_POSTGRES_URL`). */
export const ON_PGLITE = POSTGRES_URL === undefined;

/** Whether the real server's test pools pipeline (default yes; `BILLING_TEST_PG_PIPELINE=0` turns it off). */
const PIPELINE = process.env.BILLING_TEST_PG_PIPELINE !== '0';

/** Why concurrency cases skip on PGlite. */
export const PGLITE_SKIP_REASON =
  'PGlite over pglite-socket is one session running one transaction at a time; set BILLING_TEST_POSTGRES_URL to run this on a real server';

/** Prefix of the schemas tests create; the global setup drops stale ones (the number is the creation time). */
export const TEST_SCHEMA_PREFIX = 'billing_test_';

/** One Postgres to test on, shared by the tests of a file. */
export interface PostgresTestServer {
  readonly mode: 'server' | 'pglite';
  /** The file's schema, migrated, with every site (and so every row) deleted. */
  freshSchema(): Promise<string>;
  /** A brand-new, unmigrated schema (real server only); dropped when the server is closed. */
  newSchema(): Promise<string>;
  /** Pool settings whose connections use `schema`. */
  poolConfig(schema: string, extra?: pg.PoolConfig): pg.PoolConfig;
  /** Runs SQL outside any storage (schema-qualify names). */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  close(): Promise<void>;
}

let shared: Promise<PostgresTestServer> | undefined;

/** The server for this test file (started on first use, and stopped by {@link closePostgresTestServer}). */
export function postgresTestServer(): Promise<PostgresTestServer> {
  shared ??= POSTGRES_URL === undefined ? startPglite() : connectServer(POSTGRES_URL);
  return shared;
}

/** Stops this file's server (the PGlite instance, or the admin pool after dropping its schemas). */
export async function closePostgresTestServer(): Promise<void> {
  const current = shared;
  shared = undefined;
  if (current !== undefined) await (await current).close();
}

/** A new schema name: creation time first, so stale ones can be recognised and dropped. */
export function newSchemaName(): string {
  return `${TEST_SCHEMA_PREFIX}${Date.now()}_${randomBytes(4).toString('hex')}`;
}

/** Migrates `schema` through a storage of its own. */
async function migrateOnce(server: PostgresTestServer, schema: string): Promise<void> {
  const pool = testPool(server, schema, { max: 1 });
  const storage = createPostgresStorage({ pool, schema: null });
  try {
    await storage.migrate();
  } finally {
    await storage.close();
  }
}

async function connectServer(url: string): Promise<PostgresTestServer> {
  const admin = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5000 });
  admin.on('error', () => {});
  try {
    await admin.query('select 1');
  } catch (error) {
    await admin.end().catch(() => {});
    throw new Error(
      `BILLING_TEST_POSTGRES_URL is set (${url.replace(/\/\/[^@/]*@/, '//***@')}) but the server cannot be reached: ${(error as Error).message}. ` +
        'Start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) or unset the variable to test on PGlite.',
      { cause: error },
    );
  }
  const created: string[] = [];
  let fileSchema: Promise<string> | undefined;
  const server: PostgresTestServer = {
    mode: 'server',
    async freshSchema() {
      fileSchema ??= server.newSchema().then(async (schema) => {
        await migrateOnce(server, schema);
        return schema;
      });
      const schema = await fileSchema;
      await admin.query(`delete from ${pg.escapeIdentifier(schema)}.sites`);
      return schema;
    },
    async newSchema() {
      const schema = newSchemaName();
      await admin.query(`create schema ${pg.escapeIdentifier(schema)}`);
      created.push(schema);
      return schema;
    },
    poolConfig: (schema, extra = {}) =>
      ({
        connectionString: url,
        options: `-c search_path=${schema}`,
        connectionTimeoutMillis: 5000,
        // Pipelined clients, as the README advises (issue 18); BILLING_TEST_PG_PIPELINE=0 for
        // clients that run one statement at a time (also covered: see exactly-once.postgres.test.ts).
        pipeline: PIPELINE,
        ...extra,
      }) as pg.PoolConfig,
    query: (text, values) => admin.query(text, values),
    async close() {
      for (const schema of created) await admin.query(`drop schema if exists ${pg.escapeIdentifier(schema)} cascade`);
      await admin.end();
    },
  };
  return server;
}

async function startPglite(): Promise<PostgresTestServer> {
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-socket'),
  ]);
  const db = await PGlite.create();
  // Several connections may attach; the server runs their transactions one at a time.
  const socketServer = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 32 });
  await socketServer.start();
  const [host, port] = socketServer.getServerConn().split(':');
  let migrated: Promise<void> | undefined;
  const server: PostgresTestServer = {
    mode: 'pglite',
    async freshSchema() {
      migrated ??= migrateOnce(server, 'public');
      await migrated;
      await db.exec('delete from public.sites');
      return 'public';
    },
    async newSchema() {
      throw new Error('PGlite serves one session: a schema of its own would need a search_path that leaks across it.');
    },
    poolConfig: (_schema, extra = {}) => ({
      host,
      port: Number(port),
      user: 'postgres',
      database: 'postgres',
      ...extra,
    }),
    async query<R extends pg.QueryResultRow>(text: string, values?: unknown[]) {
      const result = await db.query<R>(text, values);
      return { rows: result.rows, rowCount: result.affectedRows ?? 0 } as unknown as pg.QueryResult<R>;
    },
    async close() {
      await socketServer.stop();
      await db.close();
    },
  };
  return server;
}

/** A pool on `schema` whose idle-client errors are ignored (tests kill connections on purpose). */
export function testPool(server: PostgresTestServer, schema: string, extra: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool(server.poolConfig(schema, extra));
  pool.on('error', () => {});
  return pool;
}

/** Capabilities to declare for a pool of this mode. */
export function modeCapabilities(): PostgresStorageOptions['capabilities'] {
  return ON_PGLITE ? { concurrentTransactions: false, multiProcess: false } : undefined;
}

/** A storage on `schema` with its own pool, migrated (a no-op on the file's schema). */
export async function schemaStorage(
  server: PostgresTestServer,
  schema: string,
  options: { pool?: pg.PoolConfig; maxAttempts?: number } = {},
): Promise<{ storage: Storage; pool: pg.Pool }> {
  const pool = testPool(server, schema, { max: 10, ...options.pool });
  const capabilities = modeCapabilities();
  const storage = createPostgresStorage({
    pool,
    // The pool's startup options point it at the test's schema.
    schema: null,
    ...(capabilities === undefined ? {} : { capabilities }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
  });
  await storage.migrate();
  return { storage, pool };
}

/**
 * The conformance harness: each test gets a new storage (and pool) on the file's schema, emptied
 * of every row; `destroy` closes the storage.
 */
export function postgresHarness(): StorageHarness {
  return {
    name: ON_PGLITE ? 'postgres (PGlite)' : 'postgres',
    capabilities: {
      dialect: 'postgres',
      concurrentTransactions: !ON_PGLITE,
      multiProcess: !ON_PGLITE,
    },
    async create() {
      const server = await postgresTestServer();
      const schema = await server.freshSchema();
      return (await schemaStorage(server, schema)).storage;
    },
  };
}
