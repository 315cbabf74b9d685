/**
 * Vitest global setup. Says where the Postgres tests run, and on a real server drops the schemas
 * that earlier runs left behind when they were killed (test schemas carry their creation time).
 * It never fails the run: when the server is unreachable, the Postgres test files fail themselves.
 */
import pg from 'pg';

const PREFIX = 'billing_test_';
const STALE_AFTER_MS = 60 * 60 * 1000;

/** Prints where the Postgres tests run and drops stale test schemas; never throws. */
export default async function setup(): Promise<void> {
  const url = process.env.BILLING_TEST_POSTGRES_URL;
  if (!url) {
    console.info(
      '[postgres tests] BILLING_TEST_POSTGRES_URL is not set: running the Postgres SQL on PGlite over the wire protocol (pglite-socket); cases that need concurrent transactions skip.',
    );
    return;
  }
  const masked = url.replace(/\/\/[^@/]*@/, '//***@');
  console.info(`[postgres tests] running on ${masked}`);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string }>(
      `select nspname as name from pg_namespace where nspname like '${PREFIX}%'`,
    );
    const cutoff = Date.now() - STALE_AFTER_MS;
    for (const { name } of rows) {
      const created = Number(name.slice(PREFIX.length).split('_')[0]);
      if (Number.isFinite(created) && created < cutoff) {
        await client.query(`drop schema if exists ${pg.escapeIdentifier(name)} cascade`);
      }
    }
  } catch (error) {
    console.warn(`[postgres tests] cannot reach ${masked}: ${(error as Error).message}; the Postgres tests will fail.`);
  } finally {
    await client.end().catch(() => {});
  }
}
