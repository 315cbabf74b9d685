/**
 * Section 5 (issue 11): does renewing the due work stay flat as the book grows? The time to renew
 * `BENCH_GROWTH_DUE` due subscriptions (10,000) is measured with a book of only those and with a
 * book of `BENCH_GROWTH_BOOK` subscriptions (1,000,000) whose other subscriptions are not due in
 * the window, on SQLite (a WAL file) and on Postgres. Due work is found through the partial index
 * on `(due_at, id)`, so the two times should be about the same; the growth ratio (large-book time
 * / small-book time) says whether they are. Each case has its raw baseline (`raw-renewal.ts`: the
 * same statements with the plain driver) on a copy of the same database, so a database that slows
 * down with size shows in both, and only what the engine adds shows in the engine alone.
 *
 * The book is seeded fast: the due subscriptions through the storage port as in section 2, the
 * rest with bulk `INSERT ... SELECT` (see `growth-seed.ts`). The claim statement's query plan on
 * the large book is printed with the figures.
 *
 * The machine is shared, so one run of each can be off by a factor of two either way. On SQLite
 * each book is seeded once into a master file and every run works on a fresh copy of it:
 * `BENCH_RUNS` rounds of (small book engine, small book raw, large book engine, large book raw),
 * the median of each reported, and the process's CPU time beside the wall time (CPU time does not
 * count the time the process waited for the cores, so it is the steadier of the two here). On
 * Postgres a book takes minutes to seed, so each case runs once.
 */
import { copyFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createBillingEngine, createTestGateway, ManualClock, type PaymentGateway, type Storage } from 'billing-engine';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import type pg from 'pg';
import type { BenchContext } from './bench-context.js';
import { type BulkDb, type GrowthSeedTimes, seedGrowthBook } from './growth-seed.js';
import { formatMiB, formatRate, formatRatio, median } from './measure.js';
import { claimStatement, ENGINE_CLAIM_KINDS, rawRenewalRun } from './raw-renewal.js';
import { numbered, POSTGRES_DIALECT, type RawRow, runPostgres, runSqlite, SQLITE_DIALECT } from './raw-sql.js';
import { RENEWAL_UNTIL, seedSite } from './seed-subscriptions.js';

/** The engine's lease on claimed work (renewal-service.ts), which the raw claim writes too. */
const LEASE_MS = 5 * 60_000;

/** One timed run: wall and process CPU time to renew everything due. */
interface Timed {
  readonly renewed: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
}

/** The runs of one contender on one book, and their medians. */
interface Measured {
  readonly runs: readonly Timed[];
  /** Renewals of one run (every run renews the same backlog). */
  readonly renewed: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly perSecond: number;
}

/** One case: a book on one database, renewed by the engine and by the raw baseline. */
interface GrowthRow {
  readonly database: 'sqlite' | 'postgres';
  readonly book: number;
  readonly due: number;
  readonly seed: GrowthSeedTimes;
  /** Database size after seeding (SQLite file; Postgres schema). */
  readonly bytes: number;
  readonly engine: Measured;
  /** Due items the engine processed without renewing them (should be 0). */
  readonly problems: number;
  readonly raw: Measured;
  /** The claim's query plan, one step a line. */
  readonly plan: readonly string[];
}

/** Runs section 5 and reports it. */
export async function runGrowthSection(context: BenchContext): Promise<void> {
  const { report, config } = context;
  report.section('5. Growth: runDue with a large book (issue 11)');
  const due = config.growthDue;
  report.note(
    `Time to renew ${due.toLocaleString('en-US')} due subscriptions when the book holds only those versus ` +
      `${config.growthBook.toLocaleString('en-US')} subscriptions (BENCH_GROWTH_DUE, BENCH_GROWTH_BOOK). The due ones are ` +
      'seeded through the storage port as in section 2 (active, monthly, a card, one renewal due before ' +
      `${RENEWAL_UNTIL.toISOString()}); the rest of the book is bulk-inserted with raw INSERT ... SELECT in transactions of 50,000 ` +
      '(customer, payment profile, active monthly subscription, and its pending renewal and renewal notice, due Feb 2-28, after the ' +
      "window), copied from the first due rows so every column is the engine's. Due and not-due rows are interleaved in 10 slices. " +
      'The engine renews everything with one runDue({ until }); the raw baseline runs the same statements with the plain driver ' +
      'on a copy of the same database (Postgres: a second schema seeded the same way). Growth = time with the large book / ' +
      'time with the small book; flat is about 1.00x.',
  );
  report.note(
    `SQLite: each book is seeded once into a file; each of ${config.runs} round(s) renews a fresh copy of it with the engine, then ` +
      'another with the raw baseline, small book first; figures are medians (min-max over the rounds). "CPU s" is the process\'s ' +
      'user + system CPU time, which does not count waiting for a core: on a shared machine it is the steadier figure, and ' +
      'on SQLite it includes all of the database work (the library runs in the process).',
  );
  const rows: GrowthRow[] = [];
  const books = [...new Set([due, config.growthBook])].sort((a, b) => a - b);
  if (config.growthDatabases.has('sqlite')) rows.push(...(await sqliteCases(context, books, due)));
  else report.note('SQLite part not selected (BENCH_GROWTH_DATABASES).');

  if (!config.growthDatabases.has('postgres')) {
    report.note('Postgres part not selected (BENCH_GROWTH_DATABASES).');
  } else if (context.postgres.available) {
    const pgDue = config.growthPgDue;
    const pgBooks = [...new Set([pgDue, config.growthPgBook])].sort((a, b) => a - b);
    report.note(
      `Postgres: ${pgDue.toLocaleString('en-US')} due against books of ${pgBooks.map((b) => b.toLocaleString('en-US')).join(' and ')} ` +
        '(BENCH_GROWTH_PG_DUE, BENCH_GROWTH_PG_BOOK), one run each (a book of a million takes minutes to seed, twice). ' +
        (pgDue < due
          ? 'Fewer due than on SQLite because one Postgres worker renews a few hundred a second at best here and the due ones ' +
            'are seeded through the port one by one; the claim reads the same index whatever is due, so the growth ratio answers ' +
            'the same question. '
          : '') +
        (config.growthPgBook < config.growthBook
          ? `A smaller book than on SQLite: ${config.growthPgBookReason} `
          : '') +
        'Both schemas are ANALYZEd after seeding (autovacuum would do it soon after a real bulk load). CPU s is the client ' +
        "process's only (the server's work is not in it).",
    );
    for (const book of pgBooks) rows.push(await postgresCase(context, book, pgDue));
  } else {
    report.note(`Postgres part skipped: ${context.postgres.reason}`);
  }

  const smallest = (database: GrowthRow['database']) => rows.find((r) => r.database === database)!;
  const spread = (m: Measured, pick: (t: Timed) => number) => {
    const values = m.runs.map(pick);
    const median = pick(m);
    return values.length <= 1
      ? median.toFixed(2)
      : `${median.toFixed(2)} (${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)})`;
  };
  report.table(
    [
      'case',
      'book',
      'due',
      'seeded in (port + bulk)',
      'db size',
      'engine s',
      'engine CPU s',
      'engine renewals/s',
      'raw s',
      'raw CPU s',
      'raw renewals/s',
      'raw/engine',
      'engine growth (CPU)',
      'raw growth (CPU)',
    ],
    rows.map((row) => {
      const base = smallest(row.database);
      return [
        row.database,
        row.book.toLocaleString('en-US'),
        `${row.engine.renewed.toLocaleString('en-US')}${row.problems > 0 ? ` (+${row.problems} not renewed)` : ''}`,
        `${(row.seed.dueSeconds + row.seed.bulkSeconds).toFixed(1)} s (${row.seed.dueSeconds.toFixed(1)} + ${row.seed.bulkSeconds.toFixed(1)})`,
        formatMiB(row.bytes),
        spread(row.engine, (t) => t.seconds),
        spread(row.engine, (t) => t.cpuSeconds),
        formatRate(row.engine.perSecond),
        spread(row.raw, (t) => t.seconds),
        spread(row.raw, (t) => t.cpuSeconds),
        formatRate(row.raw.perSecond),
        formatRatio(row.raw.perSecond / row.engine.perSecond),
        `${formatRatio(row.engine.seconds / base.engine.seconds)} (${formatRatio(row.engine.cpuSeconds / base.engine.cpuSeconds)})`,
        `${formatRatio(row.raw.seconds / base.raw.seconds)} (${formatRatio(row.raw.cpuSeconds / base.raw.cpuSeconds)})`,
      ];
    }),
  );
  for (const row of rows) {
    report.ratio(
      `raw/engine growth ${row.database} book ${row.book} (${row.due} due): ${formatRatio(row.raw.perSecond / row.engine.perSecond)} ` +
        '(throughput, medians; how many times more renewals/s the raw driver does)',
    );
  }
  for (const database of ['sqlite', 'postgres'] as const) {
    const cases = rows.filter((r) => r.database === database);
    const small = cases[0];
    const large = cases.at(-1);
    if (small === undefined || large === undefined || large === small) continue;
    const engineGrowth = large.engine.seconds / small.engine.seconds;
    const engineCpuGrowth = large.engine.cpuSeconds / small.engine.cpuSeconds;
    const rawGrowth = large.raw.seconds / small.raw.seconds;
    const rawCpuGrowth = large.raw.cpuSeconds / small.raw.cpuSeconds;
    report.note(
      `Claim plan on ${database} with the book of ${large.book.toLocaleString('en-US')}: ${large.plan.join(' | ')}`,
    );
    report.ratio(
      `growth ${database} engine (book ${large.book} / book ${small.book}, ${large.due} due): ${formatRatio(engineGrowth)} wall, ` +
        `${formatRatio(engineCpuGrowth)} CPU; raw baseline: ${formatRatio(rawGrowth)} wall, ${formatRatio(rawCpuGrowth)} CPU ` +
        '(time with the large book / time with the small book; flat = 1.00x)',
    );
    // SQLite's CPU time holds all of its work; a Postgres client's does not, so there the wall time decides.
    const decisive = database === 'sqlite' ? engineCpuGrowth : engineGrowth;
    report.target(
      `issue 11: renewing ${large.due.toLocaleString('en-US')} due stays flat from a book of ${small.book.toLocaleString('en-US')} to ${large.book.toLocaleString('en-US')} (${database})`,
      decisive <= 1.3,
      `engine ${small.engine.seconds.toFixed(2)} s -> ${large.engine.seconds.toFixed(2)} s = ${formatRatio(engineGrowth)} wall, ` +
        `CPU ${small.engine.cpuSeconds.toFixed(2)} s -> ${large.engine.cpuSeconds.toFixed(2)} s = ${formatRatio(engineCpuGrowth)} ` +
        `(raw ${formatRatio(rawGrowth)} wall, ${formatRatio(rawCpuGrowth)} CPU); flat = ${database === 'sqlite' ? 'CPU' : 'wall'} growth at most 1.30x`,
    );
  }
}

/** A seeded SQLite book, kept as a master file that each run copies. */
interface SqliteMaster {
  readonly book: number;
  readonly file: string;
  readonly seed: GrowthSeedTimes;
  readonly bytes: number;
  readonly plan: readonly string[];
}

/**
 * Seeds one master file per book, then runs `config.runs` rounds; each round renews a fresh copy
 * of every master with the engine and another with the raw baseline.
 */
async function sqliteCases(context: BenchContext, books: readonly number[], due: number): Promise<GrowthRow[]> {
  const masters: SqliteMaster[] = [];
  const work = join(context.tempDir, 'growth-run.db');
  const removeDb = (file: string) => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  };
  try {
    for (const book of books) {
      const master = await seedSqliteMaster(context, book, due);
      masters.push(master);
      progress(
        `sqlite book ${book.toLocaleString('en-US')} seeded in ${(master.seed.dueSeconds + master.seed.bulkSeconds).toFixed(1)} s ` +
          `(${formatMiB(master.bytes)})`,
      );
    }
    const engineRuns = new Map<number, Timed[]>(books.map((b) => [b, []]));
    const rawRuns = new Map<number, Timed[]>(books.map((b) => [b, []]));
    const problems = new Map<number, number>(books.map((b) => [b, 0]));
    for (let round = 0; round < context.config.runs; round++) {
      for (const master of masters) {
        copyFileSync(master.file, work);
        const storage = createSqliteStorage({ database: work });
        try {
          const run = await engineRun(storage, createTestGateway(), due);
          engineRuns.get(master.book)!.push(run.timed);
          problems.set(master.book, Math.max(problems.get(master.book)!, run.problems));
        } finally {
          await storage.close();
          removeDb(work);
        }
        const engineTimed = engineRuns.get(master.book)!.at(-1)!;
        copyFileSync(master.file, work);
        const db = new BetterSqlite3(work, { timeout: 5000 });
        try {
          db.pragma('journal_mode = wal');
          db.pragma('foreign_keys = on');
          rawRuns.get(master.book)!.push(
            timed(() =>
              runSqlite(
                db,
                rawRenewalRun(SQLITE_DIALECT, {
                  until: RENEWAL_UNTIL,
                  owner: 'raw-worker',
                  batchSize: 100,
                  leaseMs: LEASE_MS,
                }),
                new Map(),
              ),
            ),
          );
        } finally {
          db.close();
          removeDb(work);
        }
        const rawTimed = rawRuns.get(master.book)!.at(-1)!;
        progress(
          `round ${round + 1}/${context.config.runs}: sqlite book ${master.book.toLocaleString('en-US')}: engine ` +
            `${engineTimed.seconds.toFixed(2)} s (CPU ${engineTimed.cpuSeconds.toFixed(2)} s), raw ${rawTimed.seconds.toFixed(2)} s ` +
            `(CPU ${rawTimed.cpuSeconds.toFixed(2)} s)`,
        );
      }
    }
    return masters.map((master) => ({
      database: 'sqlite',
      book: master.book,
      due,
      seed: master.seed,
      bytes: master.bytes,
      engine: measured(engineRuns.get(master.book)!),
      problems: problems.get(master.book)!,
      raw: measured(rawRuns.get(master.book)!),
      plan: master.plan,
    }));
  } finally {
    // A book of a million is about a gigabyte per copy: none is kept past the section.
    for (const master of masters) removeDb(master.file);
    removeDb(work);
  }
}

/** Seeds a book into a SQLite file (WAL), checkpoints it, and reads the claim's plan on it. */
async function seedSqliteMaster(context: BenchContext, book: number, due: number): Promise<SqliteMaster> {
  const file = join(context.tempDir, `growth-${book}.db`);
  const seeding = createSqliteStorage({ database: file });
  const bulkDb = new BetterSqlite3(file, { timeout: 5000 });
  let seed: GrowthSeedTimes;
  try {
    await seeding.migrate();
    const site = await seedSite(seeding, createTestGateway(), 'bench-growth');
    bulkDb.pragma('journal_mode = wal');
    bulkDb.pragma('foreign_keys = on');
    // Seeding only: no fsync per commit and a large cache for the index builds. The engine and
    // the raw baseline run on connections of their own with the defaults.
    bulkDb.pragma('synchronous = off');
    bulkDb.pragma('cache_size = -262144');
    seed = await seedGrowthBook(seeding, sqliteBulk(bulkDb), site, { book, due });
  } finally {
    bulkDb.close();
    // Closing the last connection checkpoints the WAL into the file, so a plain copy is complete.
    await seeding.close();
  }
  return { book, file, seed, bytes: statSync(file).size, plan: await sqliteClaimPlan(file) };
}

/** A book on Postgres: two schemas seeded the same way, one renewed by the engine, one by the raw baseline. */
async function postgresCase(context: BenchContext, book: number, due: number): Promise<GrowthRow> {
  if (!context.postgres.available) throw new Error('Postgres is not available.');
  const server = context.postgres.server;
  const schemas = [await server.createSchema(), await server.createSchema()] as const;
  const storages: Storage[] = [];
  const pools: pg.Pool[] = [];
  try {
    const seeds: GrowthSeedTimes[] = [];
    for (const schema of schemas) {
      const storage = createPostgresStorage({ pool: server.pool(schema, 2), schema: null });
      storages.push(storage);
      await storage.migrate();
      const site = await seedSite(storage, createTestGateway(), 'bench-growth');
      const pool = server.pool(schema, 1);
      pools.push(pool);
      const client = await pool.connect();
      try {
        seeds.push(await seedGrowthBook(storage, postgresBulk(client), site, { book, due }));
        await client.query('analyze');
      } finally {
        client.release();
      }
    }
    const { rows: sizeRows } = await server.query<{ bytes: string }>(
      'select coalesce(sum(pg_total_relation_size(c.oid)), 0) as bytes from pg_class c join pg_namespace n on n.oid = c.relnamespace ' +
        "where n.nspname = $1 and c.relkind = 'r'",
      [schemas[0]],
    );
    const bytes = Number(sizeRows[0]?.bytes ?? 0);
    const plan = await postgresClaimPlan(pools[0]!);

    progress(`postgres book ${book.toLocaleString('en-US')} seeded twice (${formatMiB(bytes)} each)`);
    const engine = await engineRun(storages[0]!, createTestGateway(), due);

    const client = await pools[1]!.connect();
    let raw: Timed;
    try {
      const cpu = process.cpuUsage();
      const start = performance.now();
      const renewed = await runPostgres(
        client,
        rawRenewalRun(POSTGRES_DIALECT, {
          until: RENEWAL_UNTIL,
          owner: 'raw-worker',
          batchSize: 100,
          leaseMs: LEASE_MS,
        }),
      );
      raw = finish(renewed, start, cpu);
    } finally {
      client.release();
    }
    // The seeding of the engine's schema (the raw one's took about as long).
    return {
      database: 'postgres',
      book,
      due,
      seed: seeds[0]!,
      bytes,
      engine: measured([engine.timed]),
      problems: engine.problems,
      raw: measured([raw]),
      plan,
    };
  } finally {
    for (const pool of pools) await pool.end();
    for (const storage of storages) await storage.close();
    for (const schema of schemas) await server.dropSchema(schema);
  }
}

/**
 * One engine renews everything due with one `runDue({ until })`. The test gateway charges the
 * seeded vault token successfully whichever instance tokenized it.
 */
async function engineRun(
  storage: Storage,
  gateway: PaymentGateway,
  due: number,
): Promise<{ timed: Timed; problems: number }> {
  const engine = createBillingEngine({ storage, gateway, clock: new ManualClock(RENEWAL_UNTIL) });
  const cpu = process.cpuUsage();
  const start = performance.now();
  const summary = await engine.runDue({ until: RENEWAL_UNTIL });
  const timedRun = finish(summary.renewed, start, cpu);
  if (summary.processed !== due)
    throw new Error(`Growth: the engine processed ${summary.processed} items where ${due} were due.`);
  return { timed: timedRun, problems: summary.processed - summary.renewed };
}

/** A line on the console only (not in the results file), so a long run shows where it is. */
function progress(text: string): void {
  console.log(`  ... ${text}`);
}

/** Times a synchronous run (the raw baseline on better-sqlite3). */
function timed(run: () => number): Timed {
  const cpu = process.cpuUsage();
  const start = performance.now();
  return finish(run(), start, cpu);
}

function finish(renewed: number, start: number, cpu: NodeJS.CpuUsage): Timed {
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { renewed, seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

/** Medians of the runs (each median on its own). */
function measured(runs: readonly Timed[]): Measured {
  const seconds = median(runs.map((r) => r.seconds));
  const renewed = runs[0]?.renewed ?? 0;
  return {
    runs,
    renewed,
    seconds,
    cpuSeconds: median(runs.map((r) => r.cpuSeconds)),
    perSecond: seconds > 0 ? renewed / seconds : 0,
  };
}

/** better-sqlite3 as a {@link BulkDb}. */
function sqliteBulk(db: BetterSqlite3.Database): BulkDb {
  return {
    dialect: 'sqlite',
    all: async (text) => db.prepare(text).all() as RawRow[],
    run: async (text) => {
      db.prepare(text).run();
    },
    async transaction(work) {
      db.exec('begin immediate');
      try {
        await work();
        db.exec('commit');
      } catch (error) {
        db.exec('rollback');
        throw error;
      }
    },
  };
}

/** A `pg` client as a {@link BulkDb}. */
function postgresBulk(client: pg.PoolClient): BulkDb {
  return {
    dialect: 'postgres',
    all: async (text) => (await client.query(text)).rows as RawRow[],
    run: async (text) => {
      await client.query(text);
    },
    async transaction(work) {
      await client.query('begin');
      try {
        await work();
        await client.query('commit');
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      }
    },
  };
}

/** Rolls back the claim made to capture its SQL. */
class CaptureDone extends Error {}

/**
 * The plan SQLite picks for the adapter's own claim statement: the statement is captured (with
 * its values) from a claim through the storage port in a transaction that is rolled back, then
 * explained on the same file.
 */
async function sqliteClaimPlan(file: string): Promise<string[]> {
  let claim: string | undefined;
  const traced = new BetterSqlite3(file, {
    timeout: 5000,
    verbose: (text) => {
      if (typeof text === 'string' && text.includes('"picked"')) claim = text;
    },
  });
  const storage = createSqliteStorage({ database: traced });
  try {
    await storage.transaction(async (tx) => {
      await tx.dueWork.claim({
        until: RENEWAL_UNTIL,
        limit: 100,
        owner: 'plan',
        leaseUntil: new Date(RENEWAL_UNTIL.getTime() + LEASE_MS),
        now: RENEWAL_UNTIL,
        kinds: ENGINE_CLAIM_KINDS,
      });
      throw new CaptureDone();
    });
  } catch (error) {
    if (!(error instanceof CaptureDone)) throw error;
  } finally {
    await storage.close();
  }
  if (claim === undefined) return ['(the claim statement was not captured)'];
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return (db.prepare(`explain query plan ${claim}`).all() as { detail: string }[]).map((r) => r.detail);
  } finally {
    db.close();
  }
}

/** The plan Postgres picks for the claim (the raw baseline's statement, the adapter's shape), not executed. */
async function postgresClaimPlan(pool: pg.Pool): Promise<string[]> {
  const now = RENEWAL_UNTIL;
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`explain ${numbered(claimStatement(POSTGRES_DIALECT))}`, [
    now,
    RENEWAL_UNTIL,
    100,
    'plan',
    new Date(now.getTime() + LEASE_MS),
    now,
  ]);
  return rows.map((r) => r['QUERY PLAN'].trim());
}
