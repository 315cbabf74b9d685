import { BillingError, type Storage } from 'billing-engine';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { runStorageConformance } from 'billing-engine/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../adapters/sql/migrations/index.js';
import {
  closePostgresTestServer,
  newSchemaName,
  ON_PGLITE,
  PGLITE_SKIP_REASON,
  postgresHarness,
  postgresTestServer,
  schemaStorage,
  testPool,
} from '../support/postgres.js';
import { type SqlFixture, sqlAdapterCases } from '../support/sql-adapter-cases.js';

afterAll(closePostgresTestServer);

runStorageConformance({ describe, it, expect, beforeEach, afterEach, beforeAll, afterAll }, postgresHarness());

/** A storage on a fresh schema whose pool lets the test reach the client of the open transaction. */
async function openFixture(): Promise<SqlFixture> {
  const server = await postgresTestServer();
  const schema = await server.freshSchema();
  const { storage, pool } = await schemaStorage(server, schema);
  let current: pg.PoolClient | undefined;
  pool.on('acquire', (client) => {
    current = client;
  });
  const opened: Storage[] = [];
  const qualify = (sql: string) =>
    sql.replace(
      /\b(billing_migrations|payment_attempts|idempotency_keys|direct_post_claims)\b/g,
      `${pg.escapeIdentifier(schema)}.$1`,
    );
  return {
    storage,
    async reopen() {
      const other = (await schemaStorage(server, schema)).storage;
      opened.push(other);
      return other;
    },
    async raw(sql) {
      return (await server.query(qualify(sql))).rows;
    },
    async killConnection() {
      // Cut the socket under the client, as a network failure or a server restart would.
      (current as unknown as pg.Client | undefined)?.connection.stream.destroy();
    },
    async tableCounts() {
      const { rows } = await server.query<{ name: string }>(
        "select tablename as name from pg_tables where schemaname = $1 and tablename <> 'billing_migrations'",
        [schema],
      );
      const counts: Record<string, number> = {};
      for (const { name } of rows) {
        const result = await server.query<{ n: string }>(
          `select count(*) as n from ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(name)}`,
        );
        counts[name] = Number(result.rows[0]?.n);
      }
      return counts;
    },
    async dispose() {
      await storage.close().catch(() => {});
      for (const other of opened) await other.close().catch(() => {});
    },
  };
}

sqlAdapterCases({ name: ON_PGLITE ? 'postgres (PGlite)' : 'postgres', open: openFixture });

describe('postgres adapter specifics', () => {
  const real = ON_PGLITE ? it.skip : it;
  if (ON_PGLITE) console.info(`[postgres] skipping server-only adapter cases: ${PGLITE_SKIP_REASON}`);
  let schema: string | undefined;
  const storages: Storage[] = [];
  const open = async (options: { maxAttempts?: number; max?: number } = {}) => {
    const server = await postgresTestServer();
    schema ??= await server.freshSchema();
    const { storage } = await schemaStorage(server, schema, {
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
      pool: { max: options.max ?? 10 },
    });
    storages.push(storage);
    return storage;
  };
  afterEach(async () => {
    for (const storage of storages.splice(0)) await storage.close().catch(() => {});
    schema = undefined;
  });

  real('creates its schema and migrates it once when several processes start at the same moment', async () => {
    const server = await postgresTestServer();
    const fresh = newSchemaName();
    // The pools say nothing of the schema: the storage's `schema` option puts every connection there.
    const pools = Array.from({ length: 3 }, () => testPool(server, 'public', { max: 2 }));
    const racing = pools.map((pool) => createPostgresStorage({ pool, schema: fresh }));
    try {
      await Promise.all(racing.map((storage) => storage.migrate()));
      const { rows } = await server.query<{ id: number }>(
        `select id from ${pg.escapeIdentifier(fresh)}.billing_migrations order by id`,
      );
      expect(rows.map((row) => Number(row.id))).toEqual(MIGRATIONS.map((m) => m.id));
      const site = await racing[0]!.transaction((tx) => tx.sites.insert(siteFixture('after-race')));
      expect(await racing[2]!.transaction((tx) => tx.sites.findById(site.id))).toEqual(site);
    } finally {
      for (const storage of racing) await storage.close();
      await server.query(`drop schema if exists ${pg.escapeIdentifier(fresh)} cascade`);
    }
  });

  real(
    "keeps its tables in the 'billing' schema by default, beside an application's own tables of the same names",
    async () => {
      const server = await postgresTestServer();
      const app = await server.newSchema();
      // The application's own `customers`, in the schema its connections use.
      await server.query(`create table ${pg.escapeIdentifier(app)}.customers (name text primary key)`);
      await server.query(`insert into ${pg.escapeIdentifier(app)}.customers values ('the application''s row')`);
      await server.query('drop schema if exists billing cascade');
      const storage = createPostgresStorage({ pool: testPool(server, app, { max: 2 }) });
      try {
        await storage.migrate();
        const site = await storage.transaction((tx) => tx.sites.insert(siteFixture('in-billing')));
        const tables = await server.query<{ table_schema: string; table_name: string }>(
          "select table_schema, table_name from information_schema.tables where table_name in ('customers', 'sites') and table_schema in ($1, 'billing') order by 1, 2",
          [app],
        );
        const found = tables.rows.map(
          (row) => `${row.table_schema === app ? 'app' : row.table_schema}.${row.table_name}`,
        );
        expect(found.sort()).toEqual(['app.customers', 'billing.customers', 'billing.sites']);
        const sites = await server.query<{ id: string }>('select id from billing.sites');
        expect(sites.rows.map((row) => Number(row.id))).toEqual([site.id]);
        const own = await server.query<{ name: string }>(`select name from ${pg.escapeIdentifier(app)}.customers`);
        expect(own.rows).toEqual([{ name: "the application's row" }]);
      } finally {
        await storage.close();
        await server.query('drop schema if exists billing cascade');
      }
    },
  );

  it('refuses a schema name that is not a plain identifier, before connecting', () => {
    const pool = new pg.Pool({ host: '127.0.0.1', port: 1 });
    for (const schema of ['billing"; drop table sites; --', '', '1st', 'a-b', 'x'.repeat(64)]) {
      expect(() => createPostgresStorage({ pool, schema })).toThrow(/plain identifier/);
    }
    return pool.end();
  });

  it('stores instants as timestamptz(3), money as bigint, decimals as numeric and documents as jsonb', async () => {
    const storage = await open();
    expect(storage.capabilities.dialect).toBe('postgres');
    const server = await postgresTestServer();
    const { rows } = await server.query<{
      table_name: string;
      column_name: string;
      data_type: string;
      datetime_precision: number | null;
    }>(
      `select table_name, column_name, data_type, datetime_precision from information_schema.columns
       where table_schema = $1 and (column_name in ('created_at', 'amount_in_cents', 'percentage', 'settings', 'id', 'cancel_at_end_of_period'))
       order by table_name, column_name`,
      [schema],
    );
    const byKey = new Map(rows.map((row) => [`${row.table_name}.${row.column_name}`, row]));
    expect(byKey.get('sites.created_at')).toMatchObject({
      data_type: 'timestamp with time zone',
      datetime_precision: 3,
    });
    expect(byKey.get('payment_attempts.amount_in_cents')?.data_type).toBe('bigint');
    expect(byKey.get('coupons.percentage')?.data_type).toBe('numeric');
    expect(byKey.get('sites.settings')?.data_type).toBe('jsonb');
    expect(byKey.get('sites.id')?.data_type).toBe('bigint');
    expect(byKey.get('subscriptions.cancel_at_end_of_period')?.data_type).toBe('boolean');
    const unique = await server.query<{ indexdef: string }>(
      `select indexdef from pg_indexes where schemaname = $1 and indexdef like 'CREATE UNIQUE%' and tablename <> 'sites' and tablename <> 'billing_migrations'`,
      [schema],
    );
    expect(unique.rows.length).toBeGreaterThan(10);
    // Tenancy by construction: every unique index of a tenant table leads with site_id.
    expect(unique.rows.filter((row) => !/\(site_id[,)]/.test(row.indexdef))).toEqual([]);
  });

  it('fails with a storage error when the server cannot be reached', async () => {
    const pool = new pg.Pool({ host: '127.0.0.1', port: 1, connectionTimeoutMillis: 1000 });
    pool.on('error', () => {});
    const storage = createPostgresStorage({ pool });
    await expect(storage.transaction((tx) => tx.sites.list())).rejects.toSatisfy(
      (error) => error instanceof BillingError && error.code === 'storage',
    );
    await storage.close();
  });

  real('runs serializable transactions again after a serialization failure', async () => {
    const storage = await open();
    await storage.transaction((tx) => tx.sites.insert(siteFixture('seed')));
    const meeting = twoWriters();
    let calls = 0;
    // Write skew: each reads the sites, waits until the other has read too, then inserts. One of
    // the two cannot be serialised after the other and fails with 40001; the adapter reruns it.
    // The rerun waits for the survivor to finish, so it sees its row and the outcome is fixed.
    const writer = (name: 'a' | 'b') =>
      meeting.run(name, (attempt) =>
        storage.transaction(
          async (tx) => {
            calls += 1;
            await attempt.beforeRead();
            const count = (await tx.sites.list()).length;
            await attempt.afterFirstStep();
            return tx.sites.insert(siteFixture(`${name}-${count}`));
          },
          { isolation: 'serializable' },
        ),
      );
    const created = await Promise.all([writer('a'), writer('b')]);
    expect(created).toHaveLength(2);
    expect(calls).toBe(3);
    const names = (await storage.transaction((tx) => tx.sites.list())).map((s) => s.subdomain).sort();
    expect(names.filter((n) => n.endsWith('-1'))).toHaveLength(1);
    expect(names.filter((n) => n.endsWith('-2'))).toHaveLength(1);
  });

  real('runs a transaction again after a deadlock', async () => {
    const storage = await open();
    const [a, b] = await storage.transaction(async (tx) => [
      await tx.sites.insert(siteFixture('dl-a')),
      await tx.sites.insert(siteFixture('dl-b')),
    ]);
    const meeting = twoWriters();
    let calls = 0;
    // Each locks its first row, waits until the other holds its own, then asks for the other's:
    // a deadlock, one is rolled back and rerun. The rerun waits for the survivor to commit, so its
    // version reads are current and both of its updates match.
    const writer = (name: 'x' | 'y', first: number, second: number) =>
      meeting.run(name, (attempt) =>
        storage.transaction(async (tx) => {
          calls += 1;
          await attempt.beforeRead();
          const one = await tx.sites.findById(first);
          const updatedOne = await tx.sites.updateAtVersion(first, one!.version, { name });
          await attempt.afterFirstStep();
          const two = await tx.sites.findById(second);
          const updatedTwo = await tx.sites.updateAtVersion(second, two!.version, { name });
          return updatedOne && updatedTwo;
        }),
      );
    const results = await Promise.all([writer('x', a!.id, b!.id), writer('y', b!.id, a!.id)]);
    expect(results.every((r) => r !== undefined)).toBe(true);
    expect(calls).toBe(3);
    const stored = await storage.transaction(async (tx) => [
      await tx.sites.findById(a!.id),
      await tx.sites.findById(b!.id),
    ]);
    expect(stored.map((s) => s?.version)).toEqual([3, 3]);
  });

  real('reports a serialization failure as a storage error once the attempts are used up', async () => {
    const storage = await open({ maxAttempts: 1 });
    await storage.transaction((tx) => tx.sites.insert(siteFixture('seed')));
    let arrived = 0;
    let release: () => void = () => {};
    const bothRead = new Promise<void>((resolve) => {
      release = resolve;
    });
    const writer = (name: string) =>
      storage.transaction(
        async (tx) => {
          await tx.sites.list();
          arrived += 1;
          if (arrived === 2) release();
          // No rerun here (one attempt), so both arrive exactly once: no timeout needed.
          await bothRead;
          return tx.sites.insert(siteFixture(name));
        },
        { isolation: 'serializable' },
      );
    const results = await Promise.allSettled([writer('p'), writer('q')]);
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(failed).toHaveLength(1);
    const error = failed[0]!.reason as BillingError;
    expect(error.code).toBe('storage');
    expect(JSON.stringify(causeCodes(error))).toContain('40001');
  });

  real('fails cleanly when the server ends the session mid-transaction', async () => {
    const storage = await open({ max: 1 });
    const server = await postgresTestServer();
    const error = await storage
      .transaction(async (tx) => {
        await tx.sites.insert(siteFixture('terminated'));
        await server.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where pid <> pg_backend_pid() and state = 'idle in transaction' and query like '%insert into \"sites\"%'",
        );
        await sleep(50);
        return tx.sites.list();
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BillingError);
    expect((error as BillingError).code).toBe('storage');
    expect(await storage.transaction((tx) => tx.sites.findBySubdomain('terminated'))).toBeUndefined();
  });
});

function siteFixture(subdomain: string) {
  const at = new Date('2026-03-01T10:00:00.123Z');
  return {
    subdomain,
    name: subdomain,
    currency: 'USD',
    timeZone: 'UTC',
    dateFormat: 'YYYY-MM-DD',
    timeFormat: 'HH:mm',
    mode: 'test' as const,
    sharedKey: 'k',
    settings: {
      periodRule: 'anchor' as const,
      referralsEnabled: false,
      dunning: { retryCount: 3, retryIntervalHours: 24, finalAction: 'canceled' as const },
      webhooksEnabled: true,
      portal: { allowPlanChange: true, allowCancel: true, allowCardUpdate: true, allowComponentChange: true },
    },
    createdAt: at,
    updatedAt: at,
  };
}

function causeCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

/**
 * Two concurrent writers meeting in the middle of their first attempts, without timeouts: a timeout
 * on a loaded machine let one writer run past the other, and no conflict happened. A writer's
 * rerun (after the storage rolled it back) first waits for the other writer to finish.
 */
function twoWriters<Name extends string>() {
  const finished = new Map<Name, Promise<unknown>>();
  let arrived = 0;
  let release: () => void = () => {};
  const bothThere = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    run<T>(
      name: Name,
      work: (attempt: { beforeRead(): Promise<void>; afterFirstStep(): Promise<void> }) => Promise<T>,
    ): Promise<T> {
      let attempts = 0;
      let rerun = false;
      const others = () => [...finished.entries()].filter(([other]) => other !== name).map(([, done]) => done);
      const promise = work({
        async beforeRead() {
          attempts += 1;
          rerun = attempts > 1;
          if (rerun) await Promise.allSettled(others());
        },
        async afterFirstStep() {
          if (rerun) return;
          arrived += 1;
          if (arrived === 2) release();
          await bothThere;
        },
      });
      finished.set(name, promise);
      return promise;
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
