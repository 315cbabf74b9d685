/**
 * Postgres for the benchmarks: a reachability probe, and throwaway schemas (`bench_<ms>_<hex>`)
 * that pools select through their startup `search_path`, the same way the test harness isolates
 * test files. Every schema made here is dropped by {@link BenchPostgres.close}; schemas that a
 * killed run left behind are dropped by the next run once they are an hour old.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Prefix of benchmark schemas. */
export const BENCH_SCHEMA_PREFIX = 'bench_';

/** Whether the bench's pools pipeline (default yes; `BENCH_PG_PIPELINE=0` for the one-at-a-time clients). */
export const BENCH_PG_PIPELINE = process.env.BENCH_PG_PIPELINE !== '0';

const STALE_AFTER_MS = 60 * 60 * 1000;

/** Whether Postgres can be used, and why not. */
export type PostgresProbe =
  | { readonly ok: true; readonly version: string }
  | { readonly ok: false; readonly reason: string };

/** A connection to the benchmark server that creates and drops schemas. */
export interface BenchPostgres {
  /** The server's `server_version`. */
  readonly version: string;
  /** Creates a new empty schema and returns its name. */
  createSchema(): Promise<string>;
  /** A pool whose connections use `schema`; its idle-client errors are ignored. */
  pool(schema: string, max: number): pg.Pool;
  /** Runs SQL as the admin connection. */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  /** Drops one schema made here (cascade). */
  dropSchema(schema: string): Promise<void>;
  /** Drops every schema made here and ends the admin pool. */
  close(): Promise<void>;
}

/** The URL with any password masked, for printing. */
export function maskUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/** Tries to reach the server within a few seconds. */
export async function probePostgres(url: string): Promise<PostgresProbe> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>('show server_version');
    return { ok: true, version: rows[0]?.server_version ?? 'unknown' };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message || error.name : String(error) };
  } finally {
    await client.end().catch(() => {});
  }
}

/** Connects the admin pool and drops stale benchmark schemas. */
export async function openBenchPostgres(url: string, version: string): Promise<BenchPostgres> {
  const admin = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5000 });
  admin.on('error', () => {});
  const created = new Set<string>();
  const { rows } = await admin.query<{ name: string }>(
    `select nspname as name from pg_namespace where nspname like '${BENCH_SCHEMA_PREFIX}%'`,
  );
  for (const { name } of rows) {
    const made = Number(name.slice(BENCH_SCHEMA_PREFIX.length).split('_')[0]);
    if (Number.isFinite(made) && made < Date.now() - STALE_AFTER_MS) {
      await admin.query(`drop schema if exists ${pg.escapeIdentifier(name)} cascade`);
    }
  }
  const drop = async (schema: string) => {
    await admin.query(`drop schema if exists ${pg.escapeIdentifier(schema)} cascade`);
    created.delete(schema);
  };
  return {
    version,
    async createSchema() {
      const schema = `${BENCH_SCHEMA_PREFIX}${Date.now()}_${randomBytes(4).toString('hex')}`;
      await admin.query(`create schema ${pg.escapeIdentifier(schema)}`);
      created.add(schema);
      return schema;
    },
    pool(schema, max) {
      const pool = new pg.Pool({
        connectionString: url,
        options: `-c search_path=${schema}`,
        max,
        connectionTimeoutMillis: 5000,
        // Pipelined clients (issue 18): the engine's batches run their steps at once. BENCH_PG_PIPELINE=0 for an A/B.
        pipeline: BENCH_PG_PIPELINE,
      } as pg.PoolConfig);
      pool.on('error', () => {});
      return pool;
    },
    query: (text, values) => admin.query(text, values),
    dropSchema: drop,
    async close() {
      for (const schema of [...created]) await drop(schema);
      await admin.end();
    },
  };
}
