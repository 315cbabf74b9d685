/**
 * The benchmark's parameters, read once from the environment. Every figure in the report is
 * printed next to the parameters it was measured with, so a run can be repeated exactly.
 */

/** Which sections to run (`BENCH_SECTIONS=1,3`); all by default. */
export type SectionNumber = 1 | 2 | 3 | 4 | 5 | 6;

/** Parameters of one benchmark run. */
export interface BenchConfig {
  /** `BENCH_QUICK=1`: short time boxes, small sizes, one run per figure (a smoke run, not a measurement). */
  readonly quick: boolean;
  /** Due subscriptions seeded for the runDue section on memory and SQLite (`BENCH_SUBSCRIPTIONS`). */
  readonly subscriptions: number;
  /**
   * Due subscriptions per Postgres runDue case (`BENCH_PG_SUBSCRIPTIONS`). Smaller than
   * `subscriptions` by default: a renewal is three transactions of about a dozen round trips each,
   * so one Postgres worker renews a few hundred per second here and 20,000 would take minutes.
   */
  readonly postgresSubscriptions: number;
  /** Length of one timed run of a throughput measurement, in ms (`BENCH_TIME_BOX_MS`). */
  readonly timeBoxMs: number;
  /** Warm-up before the timed runs of a measurement, in ms. */
  readonly warmUpMs: number;
  /** Timed runs per figure; the median is reported (`BENCH_RUNS`). */
  readonly runs: number;
  /** Postgres to benchmark on (`BENCH_POSTGRES_URL`); skipped, with the reason printed, when unreachable. */
  readonly postgresUrl: string;
  /**
   * Upper bound of one runDue case, in seconds (`BENCH_RUNDUE_MAX_SECONDS`; 0 = renew the whole
   * backlog). The engine is then called as `runDue({ until, limit })` until the backlog is empty or
   * the bound is reached, and the rate is over what was renewed.
   */
  readonly runDueMaxSeconds: number;
  /** Sections to run (`BENCH_SECTIONS`, comma-separated numbers). */
  readonly sections: ReadonlySet<SectionNumber>;
  /** Where the Markdown report goes (`BENCH_RESULTS_FILE`; default `bench/results/latest.md`). */
  readonly resultsFile: string;
  /** Growth section: subscriptions due in the window (`BENCH_GROWTH_DUE`). */
  readonly growthDue: number;
  /** Growth section: the large book on SQLite, the due ones included (`BENCH_GROWTH_BOOK`). */
  readonly growthBook: number;
  /** Growth section on Postgres: subscriptions due (`BENCH_GROWTH_PG_DUE`). */
  readonly growthPgDue: number;
  /** Growth section on Postgres: the large book (`BENCH_GROWTH_PG_BOOK`). */
  readonly growthPgBook: number;
  /** Why the Postgres book is smaller than the SQLite one, when it is. */
  readonly growthPgBookReason: string;
  /** Databases of the growth section (`BENCH_GROWTH_DATABASES=sqlite,postgres`, the default). */
  readonly growthDatabases: ReadonlySet<'sqlite' | 'postgres'>;
}

/** The default Postgres URL: the local test server (trust auth). */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** Reads the configuration from `env`; invalid numbers fall back to the defaults rather than failing. */
export function readBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const quick = env.BENCH_QUICK === '1' || env.BENCH_QUICK === 'true';
  const subscriptions = positiveInt(env.BENCH_SUBSCRIPTIONS, quick ? 2_000 : 20_000);
  const timeBoxMs = positiveInt(env.BENCH_TIME_BOX_MS, quick ? 400 : 2_000);
  const sections = new Set<SectionNumber>();
  for (const part of (env.BENCH_SECTIONS ?? '1,2,3,4,5,6').split(',')) {
    const n = Number(part.trim());
    if (n === 1 || n === 2 || n === 3 || n === 4 || n === 5 || n === 6) sections.add(n);
  }
  const growthDue = positiveInt(env.BENCH_GROWTH_DUE, quick ? 200 : 5_000);
  const growthBook = Math.max(growthDue, positiveInt(env.BENCH_GROWTH_BOOK, quick ? 2_000 : 1_000_000));
  const growthPgDue = positiveInt(env.BENCH_GROWTH_PG_DUE, Math.min(growthDue, quick ? 100 : 2_000));
  // Seeding a Postgres book of a million takes minutes (over three in the run of 2026-11-25), which
  // alone would take `npm run bench` past its 15-minute budget (issue 18): a quarter of a million by
  // default, the SQLite book when BENCH_GROWTH_PG_BOOK asks for more.
  const growthPgBook = Math.max(growthPgDue, positiveInt(env.BENCH_GROWTH_PG_BOOK, Math.min(growthBook, 250_000)));
  return {
    quick,
    subscriptions,
    postgresSubscriptions: positiveInt(env.BENCH_PG_SUBSCRIPTIONS, Math.min(subscriptions, quick ? 300 : 2_000)),
    timeBoxMs,
    // A quarter of the time box, at most a second: enough for V8 to optimise the hot paths and for
    // the database caches to fill, short enough not to dominate a quick run.
    warmUpMs: Math.min(1_000, Math.max(50, Math.round(timeBoxMs / 4))),
    runs: positiveInt(env.BENCH_RUNS, quick ? 1 : 3),
    runDueMaxSeconds:
      env.BENCH_RUNDUE_MAX_SECONDS === '0' ? 0 : positiveNumber(env.BENCH_RUNDUE_MAX_SECONDS, quick ? 2 : 15),
    postgresUrl: env.BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL,
    sections,
    resultsFile: env.BENCH_RESULTS_FILE || 'bench/results/latest.md',
    growthDue,
    growthBook,
    growthPgDue,
    growthPgBook,
    growthPgBookReason:
      env.BENCH_GROWTH_PG_BOOK !== undefined
        ? 'BENCH_GROWTH_PG_BOOK asks for it.'
        : growthPgBook < growthBook
          ? 'seeding a Postgres book of a million takes minutes, which would take the whole run past its 15-minute budget (set BENCH_GROWTH_PG_BOOK=1000000 for it).'
          : '',
    growthDatabases: new Set(
      (env.BENCH_GROWTH_DATABASES ?? 'sqlite,postgres')
        .split(',')
        .map((part) => part.trim())
        .filter((part): part is 'sqlite' | 'postgres' => part === 'sqlite' || part === 'postgres'),
    ),
  };
}

function positiveInt(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isSafeInteger(n) && n > 0 ? n : fallback;
}

function positiveNumber(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(n) && n > 0 ? n : fallback;
}
