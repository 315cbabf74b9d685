/**
 * Section 2 (issues 6 and 11): renewals through `engine.runDue({ until })`. A backlog of due
 * subscriptions is seeded through the storage port (see `seed-subscriptions.ts`); the engine then
 * renews it on memory, SQLite (a WAL file) and Postgres (1 engine, and 2 and 4 engines sharing the
 * database at once, each claiming its own batches), with the process's RSS and heap sampled every
 * 50 ms. The raw baseline (`raw-renewal.ts`) runs the same statements in the same transactions
 * with the plain driver on a copy of the same backlog.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type BillingEngine, createBillingEngine, createTestGateway, ManualClock, type Storage } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import type pg from 'pg';
import type { BenchContext } from './bench-context.js';
import { formatMiB, formatRate, formatRatio, rate, type Throughput } from './measure.js';
import { type MemoryPeaks, sampledStorage, startMemorySampler } from './memory-sampler.js';
import { rawRenewalRun } from './raw-renewal.js';
import { POSTGRES_DIALECT, runPostgres, runSqlite, SQLITE_DIALECT } from './raw-sql.js';
import { RENEWAL_UNTIL, seedDueSubscriptions, seedSite } from './seed-subscriptions.js';

/**
 * Items per `runDue` call when a run is time-boxed: one claim batch, the same granularity at which
 * the raw baseline checks its time box, so both overshoot it by at most one batch.
 */
const TIME_BOXED_LIMIT = 100;

/**
 * Renewals per transaction of the batched raw ceiling: the engine's default in-flight count
 * (`runDue` concurrency 32), whose steps its group commit shares out over its open transactions.
 */
const RAW_BATCH = 32;

/** The engine's lease on claimed work (renewal-service.ts), which the raw claim writes too. */
const LEASE_MS = 5 * 60_000;

/** One engine run of a backlog. */
interface EngineRun {
  readonly backlog: number;
  readonly renewed: number;
  readonly problems: number;
  readonly throughput: Throughput;
  readonly memory: MemoryPeaks;
  readonly seedSeconds: number;
}

/** One row of the section's table. */
interface RunDueRow {
  readonly label: string;
  readonly engine: EngineRun;
  readonly raw: Throughput | undefined;
  /** The same statements with {@link RAW_BATCH} renewals' steps per transaction (issue 18's ceiling). */
  readonly rawBatched?: Throughput | undefined;
}

/** Runs section 2 and reports it. */
export async function runRunDueSection(context: BenchContext): Promise<void> {
  const { report, config } = context;
  report.section('2. runDue renewals (issues 6 and 11)');
  const box =
    config.runDueMaxSeconds === 0
      ? 'each engine renews its whole backlog with one runDue({ until })'
      : `each case renews until its backlog is empty or ${config.runDueMaxSeconds} s have passed ` +
        `(runDue({ until, limit: ${TIME_BOXED_LIMIT} }) in a loop; BENCH_RUNDUE_MAX_SECONDS=0 renews everything)`;
  report.note(
    `Backlog: active monthly subscriptions with a card (test gateway), one renewal due-work row each, all due before ` +
      `${RENEWAL_UNTIL.toISOString()}; ${box}. One renewal here = claim (per 100) + 2 steps (charge, invoice and pending ` +
      'attempt with the payment-profile read; gateway call outside any transaction; payment, next renewal + notice, ' +
      "completion, outbox events), each committed in a transaction shared with other renewals' steps (group commit, " +
      'issue 18). Raw baseline: the statements of a renewal before invoices, in 3 transactions per renewal, with the ' +
      'plain driver, without the gateway call (see bench/raw-renewal.ts for the exact list); raw batched: the same ' +
      `statements with ${RAW_BATCH} renewals' steps per transaction, the ceiling batched the way the engine batches. ` +
      'Rates are renewals/s; raw/engine = how many times ' +
      'more renewals/s the raw driver does. Memory is the process RSS and V8 heap in use, sampled every 50 ms (by a timer, and ' +
      'before each transaction, since on memory and SQLite a run never yields to timers) (peak; ' +
      'the heap figure in brackets is the peak minus the heap in use before the run, after a forced GC).',
  );
  const rows: RunDueRow[] = [];

  // Memory: no driver underneath, so no raw baseline. Its unique-key checks scan its tables, so
  // seeding a large backlog is quadratic: BENCH_RUNDUE_SKIP_MEMORY=1 leaves it out (e.g. at 100,000).
  const withMemory = process.env.BENCH_RUNDUE_SKIP_MEMORY !== '1';
  if (withMemory) {
    const storage = createMemoryStorage();
    const run = await engineRun(context, [storage], config.subscriptions);
    rows.push({ label: 'memory x1', engine: run, raw: undefined });
    await storage.close();
  }

  // SQLite at two sizes 4x apart, to see whether peak memory follows the backlog.
  const small = Math.max(1, Math.floor(config.subscriptions / 4));
  const sqliteSmall = await sqliteRuns(context, small, false);
  rows.push({ label: 'sqlite x1', engine: sqliteSmall.engine, raw: undefined });
  const sqliteLarge = await sqliteRuns(context, config.subscriptions, true);
  rows.push({
    label: 'sqlite x1',
    engine: sqliteLarge.engine,
    raw: sqliteLarge.raw,
    rawBatched: sqliteLarge.rawBatched,
  });

  if (context.postgres.available) {
    for (const workers of [1, 2, 4]) rows.push(await postgresRuns(context, workers));
  } else {
    report.note(`Postgres part skipped: ${context.postgres.reason}`);
  }

  report.table(
    [
      'case',
      'backlog',
      'seeded in',
      'renewed',
      'seconds',
      'engine renewals/s',
      'raw renewals/s',
      'raw/engine',
      `raw batched (${RAW_BATCH}/tx) renewals/s`,
      'batched raw/engine',
      'peak RSS',
      'peak heap used (run added)',
      'peak live heap (run added)',
      'samples',
    ],
    rows.map((row) => [
      row.label,
      row.engine.backlog.toLocaleString('en-US'),
      `${row.engine.seedSeconds.toFixed(1)} s`,
      `${row.engine.renewed.toLocaleString('en-US')}${row.engine.problems > 0 ? ` (${row.engine.problems} not renewed)` : ''}`,
      row.engine.throughput.seconds.toFixed(1),
      formatRate(row.engine.throughput.perSecond),
      row.raw === undefined
        ? 'n/a'
        : `${formatRate(row.raw.perSecond)} (${row.raw.ops.toLocaleString('en-US')} in ${row.raw.seconds.toFixed(1)} s)`,
      row.raw === undefined ? 'n/a' : formatRatio(row.raw.perSecond / row.engine.throughput.perSecond),
      row.rawBatched === undefined ? 'n/a' : formatRate(row.rawBatched.perSecond),
      row.rawBatched === undefined ? 'n/a' : formatRatio(row.rawBatched.perSecond / row.engine.throughput.perSecond),
      formatMiB(row.engine.memory.peakRss),
      `${formatMiB(row.engine.memory.peakHeapUsed)} (+${formatMiB(Math.max(0, row.engine.memory.peakHeapUsed - row.engine.memory.baselineHeapUsed))})`,
      row.engine.memory.peakLiveHeap === undefined
        ? 'n/a'
        : `${formatMiB(row.engine.memory.peakLiveHeap)} (+${formatMiB(Math.max(0, row.engine.memory.peakLiveHeap - row.engine.memory.baselineHeapUsed))}, ${row.engine.memory.liveSamples} GCs)`,
      String(row.engine.memory.samples),
    ]),
  );
  for (const row of rows) {
    if (row.raw === undefined) continue;
    report.ratio(
      `raw/engine runDue ${row.label} (backlog ${row.engine.backlog}): ${formatRatio(row.raw.perSecond / row.engine.throughput.perSecond)} ` +
        '(throughput; how many times more renewals/s the raw driver does)',
    );
    if (row.rawBatched !== undefined) {
      report.ratio(
        `batched raw/engine runDue ${row.label} (backlog ${row.engine.backlog}): ${formatRatio(row.rawBatched.perSecond / row.engine.throughput.perSecond)} ` +
          `(the raw ceiling: the same statements, ${RAW_BATCH} renewals' steps per transaction; issue 18 asks for <= 1.5)`,
      );
    }
  }
  const memoryRow = rows.find((row) => row.label === 'memory x1');
  if (memoryRow) {
    report.ratio(
      `memory x1 has no raw baseline (no driver underneath): ${formatRate(memoryRow.engine.throughput.perSecond)} renewals/s, ` +
        `${formatRatio(sqliteLarge.engine.throughput.perSecond > 0 ? memoryRow.engine.throughput.perSecond / sqliteLarge.engine.throughput.perSecond : Number.NaN)} the SQLite engine rate`,
    );
  }
  const extra = (run: EngineRun) => Math.max(0, run.memory.peakHeapUsed - run.memory.baselineHeapUsed);
  // What the run retains: the heap right after forced full GCs. Without a forced GC, the peak heap
  // in use is the only figure, and it moves with when V8 happens to collect.
  const live = (run: EngineRun) =>
    run.memory.peakLiveHeap === undefined
      ? undefined
      : Math.max(0, run.memory.peakLiveHeap - run.memory.baselineHeapUsed);
  const smallExtra = extra(sqliteSmall.engine);
  const largeExtra = extra(sqliteLarge.engine);
  const smallLive = live(sqliteSmall.engine);
  const largeLive = live(sqliteLarge.engine);
  const within = (a: number, b: number) => b <= a * 1.5 + 16 * 1024 * 1024;
  const bounded =
    smallLive !== undefined && largeLive !== undefined ? within(smallLive, largeLive) : within(smallExtra, largeExtra);
  report.note(
    `SQLite peak memory at backlog ${small.toLocaleString('en-US')} vs ${config.subscriptions.toLocaleString('en-US')}: ` +
      `heap added by the run ${formatMiB(smallExtra)} vs ${formatMiB(largeExtra)}; live heap added (after forced GCs) ` +
      `${smallLive === undefined ? 'n/a' : formatMiB(smallLive)} vs ${largeLive === undefined ? 'n/a' : formatMiB(largeLive)}; ` +
      `peak RSS ${formatMiB(sqliteSmall.engine.memory.peakRss)} ` +
      `vs ${formatMiB(sqliteLarge.engine.memory.peakRss)} (RSS is the whole process's, so it also carries what earlier cases left).`,
  );
  report.target(
    'issue 6: runDue peak memory does not grow with the backlog (SQLite, 4x backlog)',
    bounded,
    smallLive !== undefined && largeLive !== undefined
      ? `live heap added ${formatMiB(smallLive)} -> ${formatMiB(largeLive)} (bounded = at most 1.5x + 16 MiB; peak heap in use, garbage included: ${formatMiB(smallExtra)} -> ${formatMiB(largeExtra)})`
      : `heap added ${formatMiB(smallExtra)} -> ${formatMiB(largeExtra)} (bounded = at most 1.5x + 16 MiB)`,
  );
}

/** Seeds a SQLite file, copies it for the raw baseline when asked, and runs both on it. */
async function sqliteRuns(
  context: BenchContext,
  backlog: number,
  withRaw: boolean,
): Promise<{ engine: EngineRun; raw: Throughput | undefined; rawBatched?: Throughput }> {
  const file = join(context.tempDir, `run-due-${backlog}.db`);
  const rawFile = join(context.tempDir, `run-due-${backlog}-raw.db`);
  const rawBatchedFile = join(context.tempDir, `run-due-${backlog}-raw-batched.db`);
  const gateway = createTestGateway();
  const seeding = createSqliteStorage({ database: file });
  await seeding.migrate();
  const seedStart = performance.now();
  const site = await seedSite(seeding, gateway, 'bench-renewals');
  await seedDueSubscriptions(seeding, site, { count: backlog, withRenewalWork: true });
  const seedSeconds = (performance.now() - seedStart) / 1000;
  // Closing the last connection checkpoints the WAL into the file, so a plain copy is complete.
  await seeding.close();
  if (withRaw) {
    copyFileSync(file, rawFile);
    copyFileSync(file, rawBatchedFile);
  }
  const storage = createSqliteStorage({ database: file });
  const engine = await engineRun(context, [storage], backlog, { gateway, seedSeconds });
  await storage.close();
  if (!withRaw) return { engine, raw: undefined };
  const raw = sqliteRaw(context, rawFile, 1);
  const rawBatched = sqliteRaw(context, rawBatchedFile, RAW_BATCH);
  return { engine, raw, rawBatched };
}

/** The raw baseline on a copy of the backlog, `perTransaction` renewals' steps per transaction. */
function sqliteRaw(context: BenchContext, file: string, perTransaction: number): Throughput {
  const db = new BetterSqlite3(file, { timeout: 5000 });
  db.pragma('journal_mode = wal');
  db.pragma('foreign_keys = on');
  try {
    const start = performance.now();
    const deadline = context.config.runDueMaxSeconds === 0 ? undefined : start + context.config.runDueMaxSeconds * 1000;
    const renewed = runSqlite(
      db,
      rawRenewalRun(SQLITE_DIALECT, {
        until: RENEWAL_UNTIL,
        owner: 'raw-worker',
        batchSize: 100,
        leaseMs: LEASE_MS,
        perTransaction,
        ...(deadline === undefined ? {} : { deadline }),
      }),
      new Map(),
    );
    return rate(renewed, performance.now() - start);
  } finally {
    db.close();
  }
}

/**
 * Postgres with `workers` engines, then `workers` raw clients, each on a schema of its own holding
 * the same backlog (both seeded at once, on two connections, to halve the wait).
 */
async function postgresRuns(context: BenchContext, workers: number): Promise<RunDueRow> {
  if (!context.postgres.available) throw new Error('Postgres is not available.');
  const server = context.postgres.server;
  const backlog = context.config.postgresSubscriptions;
  const schema = await server.createSchema();
  const rawSchema = await server.createSchema();
  const rawBatchedSchema = await server.createSchema();
  const storages: Storage[] = [];
  const rawSeeding = createPostgresStorage({ pool: server.pool(rawSchema, 1), schema: null });
  const rawBatchedSeeding = createPostgresStorage({ pool: server.pool(rawBatchedSchema, 1), schema: null });
  try {
    // A pool of 6 each: the claim, the lease heartbeat and the group commit's open transactions.
    for (let w = 0; w < workers; w++)
      storages.push(createPostgresStorage({ pool: server.pool(schema, 6), schema: null }));
    const gateway = createTestGateway();
    const seedStart = performance.now();
    await Promise.all(
      [
        { storage: storages[0]!, gateway },
        { storage: rawSeeding, gateway: createTestGateway() },
        { storage: rawBatchedSeeding, gateway: createTestGateway() },
      ].map(async ({ storage, gateway: cardGateway }) => {
        await storage.migrate();
        const site = await seedSite(storage, cardGateway, 'bench-renewals');
        await seedDueSubscriptions(storage, site, { count: backlog, withRenewalWork: true });
      }),
    );
    const seedSeconds = (performance.now() - seedStart) / 1000;

    // Engine: `workers` engines, a pool each, renewing the backlog at once.
    const engine = await engineRun(context, storages, backlog, { gateway, seedSeconds });

    const raw = await postgresRaw(context, rawSchema, workers, 1);
    const rawBatched = await postgresRaw(context, rawBatchedSchema, workers, RAW_BATCH);
    return { label: `postgres x${workers}`, engine, raw, rawBatched };
  } finally {
    await rawSeeding.close();
    await rawBatchedSeeding.close();
    for (const storage of storages) await storage.close();
    await server.dropSchema(schema);
    await server.dropSchema(rawSchema);
    await server.dropSchema(rawBatchedSchema);
  }
}

/** `workers` raw clients claiming with SKIP LOCKED, as the engines' claims do, `perTransaction` renewals' steps per transaction. */
async function postgresRaw(
  context: BenchContext,
  schema: string,
  workers: number,
  perTransaction: number,
): Promise<Throughput> {
  if (!context.postgres.available) throw new Error('Postgres is not available.');
  const pool = context.postgres.server.pool(schema, workers);
  const clients: pg.PoolClient[] = [];
  try {
    for (let w = 0; w < workers; w++) clients.push(await pool.connect());
    const start = performance.now();
    const deadline = context.config.runDueMaxSeconds === 0 ? undefined : start + context.config.runDueMaxSeconds * 1000;
    const counts = await Promise.all(
      clients.map((client, w) =>
        runPostgres(
          client,
          rawRenewalRun(POSTGRES_DIALECT, {
            until: RENEWAL_UNTIL,
            owner: `raw-worker-${w}`,
            batchSize: 100,
            leaseMs: LEASE_MS,
            perTransaction,
            ...(deadline === undefined ? {} : { deadline }),
          }),
        ),
      ),
    );
    return rate(
      counts.reduce((a, b) => a + b, 0),
      performance.now() - start,
    );
  } finally {
    for (const client of clients) client.release();
    await pool.end();
  }
}

/**
 * Seeds the backlog through the first storage (unless already seeded), then has one engine per
 * storage renew it at once, sampling memory meanwhile. The engines share one test gateway: the
 * instance that tokenized the card.
 */
async function engineRun(
  context: BenchContext,
  storages: readonly Storage[],
  backlog: number,
  seeded?: { gateway: ReturnType<typeof createTestGateway>; seedSeconds: number },
): Promise<EngineRun> {
  const gateway = seeded?.gateway ?? createTestGateway();
  let seedSeconds = seeded?.seedSeconds ?? 0;
  if (seeded === undefined) {
    const start = performance.now();
    const site = await seedSite(storages[0]!, gateway, 'bench-renewals');
    await seedDueSubscriptions(storages[0]!, site, { count: backlog, withRenewalWork: true });
    seedSeconds = (performance.now() - start) / 1000;
  }
  const sampler = startMemorySampler(50);
  const engines: BillingEngine[] = storages.map((storage) =>
    createBillingEngine({ storage: sampledStorage(storage, sampler), gateway, clock: new ManualClock(RENEWAL_UNTIL) }),
  );
  const maxMs = context.config.runDueMaxSeconds * 1000;
  const start = performance.now();
  const totals = await Promise.all(
    engines.map(async (engine) => {
      if (maxMs === 0) {
        const summary = await engine.runDue({ until: RENEWAL_UNTIL });
        return { renewed: summary.renewed, problems: summary.processed - summary.renewed };
      }
      let renewed = 0;
      let problems = 0;
      for (;;) {
        const summary = await engine.runDue({ until: RENEWAL_UNTIL, limit: TIME_BOXED_LIMIT });
        renewed += summary.renewed;
        problems += summary.processed - summary.renewed;
        if (summary.processed === 0 || performance.now() - start >= maxMs) break;
      }
      return { renewed, problems };
    }),
  );
  const elapsed = performance.now() - start;
  const memory = sampler.stop();
  const renewed = totals.reduce((sum, t) => sum + t.renewed, 0);
  return {
    backlog,
    renewed,
    problems: totals.reduce((sum, t) => sum + t.problems, 0),
    throughput: rate(renewed, elapsed),
    memory,
    seedSeconds,
  };
}
