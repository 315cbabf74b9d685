/**
 * Where a renewal's time goes on Postgres (issue 18): seeds N due subscriptions, runs one
 * `runDue` with the instant test gateway, and counts what reached the server per renewal:
 * statements, transactions, and the time spent waiting for each kind of statement (a statement's
 * time includes any lock wait on the server). Not part of `npm run bench`; run it by hand:
 *
 *   npx tsx bench/profile-renewals.ts [count] [concurrency]
 *
 * `BENCH_POSTGRES_URL` picks the server (default the local test server); `BENCH_PG_PREPARED=0`
 * turns the adapter's prepared statements off, for an A/B; `BENCH_PROFILE_TEXT=1` lists each
 * statement text instead of its kind.
 */
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createPostgresStorage, type PostgresPoolLike } from 'billing-engine/adapters/postgres';
import { DEFAULT_POSTGRES_URL } from './bench-config.js';
import { BENCH_PG_PIPELINE, openBenchPostgres, probePostgres } from './postgres-bench-db.js';
import { RENEWAL_UNTIL, seedDueSubscriptions, seedSite } from './seed-subscriptions.js';

/** Statement counts and server time per statement shape, gathered while `active`. */
export class StatementProfile {
  active = false;
  statements = 0;
  transactions = 0;
  readonly byShape = new Map<string, { count: number; ms: number }>();

  record(text: string, ms: number): void {
    if (!this.active) return;
    this.statements += 1;
    const shape = shapeOf(text);
    if (shape === 'begin') this.transactions += 1;
    const entry = this.byShape.get(shape) ?? { count: 0, ms: 0 };
    entry.count += 1;
    entry.ms += ms;
    this.byShape.set(shape, entry);
  }

  /** The shapes by total time, with counts and time per renewal. */
  table(renewals: number): string[] {
    const rows = [...this.byShape.entries()].sort(([, a], [, b]) => b.ms - a.ms);
    return rows.map(
      ([shape, { count, ms }]) =>
        `${(count / renewals).toFixed(2).padStart(6)} /renewal  ${(ms / count).toFixed(2).padStart(7)} ms each  ${ms.toFixed(0).padStart(7)} ms total  ${shape}`,
    );
  }
}

/** The first words of a statement and the table it names: enough to tell statements apart. */
function shapeOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim().toLowerCase();
  // BENCH_PROFILE_TEXT=1: every distinct statement text on its own line (first 220 characters).
  if (process.env.BENCH_PROFILE_TEXT === '1') return flat.slice(0, 220);
  if (flat.startsWith('begin')) return 'begin';
  if (flat === 'commit' || flat === 'rollback') return flat;
  if (flat.includes('pg_advisory_xact_lock')) return 'advisory lock';
  const table = /(?:from|into|update) "?([a-z_]+)"?/.exec(flat)?.[1] ?? '?';
  const verb = flat.startsWith('with') ? 'with' : flat.split(' ')[0];
  return `${verb} ${table}`;
}

/** Wraps a pool so that every query its clients run is timed into `profile`. */
export function profiledPool(pool: PostgresPoolLike, profile: StatementProfile): PostgresPoolLike {
  const wrapped = new WeakSet<object>();
  return {
    async connect() {
      const client = await pool.connect();
      if (!wrapped.has(client)) {
        wrapped.add(client);
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
        (client as { query: unknown }).query = async (...args: unknown[]) => {
          const first = args[0];
          const text = typeof first === 'string' ? first : ((first as { text?: string })?.text ?? '');
          const start = performance.now();
          try {
            return await query(...args);
          } finally {
            profile.record(text, performance.now() - start);
          }
        };
      }
      return client;
    },
    end: () => pool.end(),
  };
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 1000);
  const concurrency = Number(process.argv[3] ?? 32);
  const url = process.env.BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL;
  const probe = await probePostgres(url);
  if (!probe.ok) throw new Error(`Postgres cannot be reached: ${probe.reason}`);
  const server = await openBenchPostgres(url, probe.version);
  const profile = new StatementProfile();
  try {
    const schema = await server.createSchema();
    const storage = createPostgresStorage({
      pool: profiledPool(server.pool(schema, 10), profile),
      schema: null,
      preparedStatements: process.env.BENCH_PG_PREPARED !== '0',
      // The wrapper hides the pool's options, so say what they are.
      pipelining: BENCH_PG_PIPELINE,
    });
    try {
      await storage.migrate();
      const gateway = createTestGateway();
      const site = await seedSite(storage, gateway, 'profile');
      await seedDueSubscriptions(storage, site, { count, withRenewalWork: true });
      const engine = createBillingEngine({ storage, gateway, clock: new ManualClock(RENEWAL_UNTIL) });
      profile.active = true;
      const start = performance.now();
      const summary = await engine.runDue({ until: RENEWAL_UNTIL, concurrency });
      const ms = performance.now() - start;
      profile.active = false;
      const renewed = Math.max(1, summary.renewed);
      console.log(
        `${summary.renewed} renewed of ${count} in ${(ms / 1000).toFixed(2)} s: ${((summary.renewed * 1000) / ms).toFixed(0)}/s ` +
          `(concurrency ${concurrency}, pool 10)`,
      );
      console.log(
        `${(profile.statements / renewed).toFixed(1)} statements and ${(profile.transactions / renewed).toFixed(2)} transactions per renewal`,
      );
      for (const line of profile.table(renewed)) console.log(line);
    } finally {
      await storage.close();
    }
  } finally {
    await server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
