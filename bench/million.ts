/**
 * Section 7 (issue 18, opt-in: `npm run bench -- --million` or `BENCH_MILLION=1`): 1,000,000 due
 * renewals (`BENCH_MILLION_COUNT` to size it) renewed by one `runDue` on SQLite, and by 4 workers
 * (4 engines, each with its own pool, sharing one database) on Postgres, with the instant test
 * gateway. Seeding takes longer than the runs; only the runs are timed. Never part of the default
 * run, which must stay short.
 */
import { join } from 'node:path';
import { createBillingEngine, createTestGateway, ManualClock, type Storage } from 'billing-engine';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import type { BenchContext } from './bench-context.js';
import { formatMiB, formatRate, rate, type Throughput } from './measure.js';
import { startMemorySampler } from './memory-sampler.js';
import { RENEWAL_UNTIL, seedDueSubscriptions, seedSite } from './seed-subscriptions.js';

/** Whether the large run was asked for. */
export function millionRequested(argv: readonly string[] = process.argv, env = process.env): boolean {
  return argv.includes('--million') || env.BENCH_MILLION === '1' || env.BENCH_MILLION === 'true';
}

/** How many due renewals the large run seeds. */
function millionCount(env = process.env): number {
  const n = Number(env.BENCH_MILLION_COUNT);
  return Number.isSafeInteger(n) && n > 0 ? n : 1_000_000;
}

/** The limits: SQLite under 4 minutes, Postgres with 4 workers under 10. */
const LIMIT_SECONDS = { sqlite: 240, postgres: 600 } as const;

const POSTGRES_WORKERS = 4;

interface MillionRow {
  readonly database: 'sqlite' | 'postgres';
  readonly workers: number;
  readonly due: number;
  readonly renewed: number;
  readonly seedSeconds: number;
  readonly throughput: Throughput;
  readonly peakRss: number;
}

async function runMillion(
  storages: readonly Storage[],
  database: 'sqlite' | 'postgres',
  due: number,
): Promise<MillionRow> {
  const gateway = createTestGateway();
  await storages[0]!.migrate();
  const seedStart = performance.now();
  const site = await seedSite(storages[0]!, gateway, 'bench-million');
  await seedDueSubscriptions(storages[0]!, site, { count: due, withRenewalWork: true, chunk: 5_000 });
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const sampler = startMemorySampler(200);
  const start = performance.now();
  const summaries = await Promise.all(
    storages.map((storage) =>
      createBillingEngine({ storage, gateway, clock: new ManualClock(RENEWAL_UNTIL) }).runDue({ until: RENEWAL_UNTIL }),
    ),
  );
  const throughput = rate(
    summaries.reduce((sum, s) => sum + s.renewed, 0),
    performance.now() - start,
  );
  const memory = sampler.stop();
  return {
    database,
    workers: storages.length,
    due,
    renewed: throughput.ops,
    seedSeconds,
    throughput,
    peakRss: memory.peakRss,
  };
}

/** Runs section 7 and reports it. */
export async function runMillionSection(context: BenchContext): Promise<void> {
  const { report } = context;
  const due = millionCount();
  report.section(`7. ${due.toLocaleString('en-US')} due renewals (issue 18, opt-in)`);
  report.note(
    'Seeded through the storage port, then renewed with the instant test gateway and default runDue options: one engine ' +
      `on SQLite, ${POSTGRES_WORKERS} engines (a pool of 6 each) sharing one Postgres database. Only the runs are timed.`,
  );
  const rows: MillionRow[] = [];
  const sqlite = createSqliteStorage({ database: join(context.tempDir, 'million.db') });
  try {
    rows.push(await runMillion([sqlite], 'sqlite', due));
  } finally {
    await sqlite.close();
  }
  if (context.postgres.available) {
    const server = context.postgres.server;
    const schema = await server.createSchema();
    const storages = Array.from({ length: POSTGRES_WORKERS }, () =>
      createPostgresStorage({ pool: server.pool(schema, 6), schema: null }),
    );
    try {
      rows.push(await runMillion(storages, 'postgres', due));
    } finally {
      for (const storage of storages) await storage.close();
      await server.dropSchema(schema);
    }
  } else {
    report.note(`Postgres part skipped: ${context.postgres.reason}`);
  }
  report.table(
    ['database', 'workers', 'due', 'renewed', 'seeded in', 'run seconds', 'renewals/s', 'peak RSS'],
    rows.map((row) => [
      row.database,
      String(row.workers),
      row.due.toLocaleString('en-US'),
      row.renewed.toLocaleString('en-US'),
      `${row.seedSeconds.toFixed(0)} s`,
      row.throughput.seconds.toFixed(0),
      formatRate(row.throughput.perSecond),
      formatMiB(row.peakRss),
    ]),
  );
  for (const row of rows) {
    const limit = LIMIT_SECONDS[row.database];
    report.target(
      `issue 18: ${due.toLocaleString('en-US')} due renewals on ${row.database} (${row.workers} worker${row.workers > 1 ? 's' : ''}) in under ${limit / 60} minutes`,
      due === 1_000_000 ? row.renewed === due && row.throughput.seconds < limit : undefined,
      `${row.renewed.toLocaleString('en-US')} renewed in ${row.throughput.seconds.toFixed(0)} s`,
    );
  }
}
