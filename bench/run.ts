/**
 * `npm run bench`: the benchmarks of the engine against raw baselines measured in the same run.
 * Benchmarks are not tests: they print figures and ratios and assert nothing about time. The
 * report is printed as it goes and written to `bench/results/latest.md` with the machine, the
 * Node version, the date and the parameters.
 *
 * Environment: `BENCH_QUICK=1` (a smoke run: short time boxes, small sizes), `BENCH_SUBSCRIPTIONS`
 * (size of the renewal backlog; 100000 for the issue's full figure, with `BENCH_RUNDUE_MAX_SECONDS=0`
 * to renew all of it), `BENCH_PG_SUBSCRIPTIONS`, `BENCH_TIME_BOX_MS`, `BENCH_RUNS`,
 * `BENCH_RUNDUE_MAX_SECONDS`, `BENCH_GROWTH_DUE` and `BENCH_GROWTH_BOOK` (section 5: renewing 10,000
 * due with a book of 10,000 and of 1,000,000), `BENCH_GROWTH_PG_DUE` and `BENCH_GROWTH_PG_BOOK` (the
 * same on Postgres), `BENCH_GROWTH_DATABASES` (default `sqlite,postgres`), `BENCH_SECTIONS` (e.g. `1,3`), `BENCH_POSTGRES_URL` (default the
 * local test server; when it cannot be reached the Postgres parts are skipped and the reason printed),
 * `BENCH_RESULTS_FILE`; `--million` (or `BENCH_MILLION=1`, sized by `BENCH_MILLION_COUNT`) adds section 7,
 * a million due renewals on SQLite and on Postgres with 4 workers (opt-in: it takes far longer).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { type BenchConfig, readBenchConfig, type SectionNumber } from './bench-config.js';
import type { PostgresAvailability } from './bench-context.js';
import { BenchReport } from './bench-report.js';
import { runGrowthSection } from './growth.js';
import { runHttpSection } from './http-endpoints.js';
import { runLatentGatewaySection } from './latent-gateway.js';
import { formatMiB } from './measure.js';
import { millionRequested, runMillionSection } from './million.js';
import { type BenchPostgres, maskUrl, openBenchPostgres, probePostgres } from './postgres-bench-db.js';
import { runRunDueSection } from './run-due.js';
import { runSignatureSection } from './signature-verify.js';
import { runStorageUnitSection } from './storage-unit.js';

const config = readBenchConfig();
const report = new BenchReport();
const started = new Date();
const startedAt = performance.now();
const tempDir = mkdtempSync(join(tmpdir(), 'billing-bench-'));
let server: BenchPostgres | undefined;
let cleaned = false;

/** Drops the benchmark's schemas and removes its temp files; safe to call twice. */
async function cleanUp(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  const current = server;
  server = undefined;
  await current?.close().catch((error: unknown) => console.error('could not drop the benchmark schemas:', error));
  rmSync(tempDir, { recursive: true, force: true });
}

// Ctrl-C or a CI timeout must not leave schemas or database files behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void cleanUp().finally(() => process.exit(130));
  });
}

const header = machineHeader(config);
for (const line of header) console.log(line);

let failed = false;
try {
  const postgres = await connectPostgres(config);
  if (!postgres.available) console.log(`Postgres part skipped: ${postgres.reason}`);
  const context = { config, report, postgres, tempDir };
  const sections: [number, () => Promise<void>][] = [
    [1, () => runStorageUnitSection(context)],
    [2, () => runRunDueSection(context)],
    [3, () => runSignatureSection(context)],
    [4, () => runHttpSection(context)],
    [5, () => runGrowthSection(context)],
    [6, () => runLatentGatewaySection(context)],
    // Opt-in only (`--million` or BENCH_MILLION=1): it seeds and renews a million due renewals per database.
    ...(millionRequested() ? ([[7, () => runMillionSection(context)]] as [number, () => Promise<void>][]) : []),
  ];
  for (const [n, run] of sections) {
    if (n !== 7 && !config.sections.has(n as SectionNumber)) continue;
    try {
      await run();
    } catch (error) {
      failed = true;
      report.note(`Section ${n} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }
  report.section('Summary');
  report.table(
    ['section', 'target', 'verdict', 'detail'],
    report.targets.map((t) => [
      t.section,
      t.target,
      t.met === undefined ? 'not measured' : t.met ? 'MET' : 'MISSED',
      t.detail,
    ]),
  );
  const totalSeconds = (performance.now() - startedAt) / 1000;
  const fullRun = !config.quick && config.sections.size === 6;
  report.note(
    `Total time ${totalSeconds.toFixed(1)} s` +
      (fullRun
        ? `: ${totalSeconds <= 15 * 60 ? 'within' : 'OVER'} the 15-minute budget of a default \`npm run bench\` (issue 18).`
        : '.'),
  );
} finally {
  await cleanUp();
}

mkdirSync(dirname(config.resultsFile), { recursive: true });
writeFileSync(
  config.resultsFile,
  `${['# Benchmark results', '', ...header.map((l) => `${l}  `)].join('\n')}\n${report.markdownBody()}\n`,
);
console.log(`\nResults written to ${config.resultsFile}`);
process.exitCode = failed ? 1 : 0;

function machineHeader(c: BenchConfig): string[] {
  const cpu = cpus();
  return [
    `billing-engine benchmarks, ${started.toISOString()}${c.quick ? ' (QUICK: a smoke run, not a measurement)' : ''}`,
    `Machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}), ${formatMiB(totalmem())} memory (${formatMiB(freemem())} free), load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at start`,
    `Node ${process.version} on ${process.platform}/${process.arch}`,
    `Parameters: subscriptions=${c.subscriptions}, postgresSubscriptions=${c.postgresSubscriptions}, timeBoxMs=${c.timeBoxMs}, ` +
      `warmUpMs=${c.warmUpMs}, runs=${c.runs}, runDueMaxSeconds=${c.runDueMaxSeconds === 0 ? 'none' : c.runDueMaxSeconds}, ` +
      `growthDue=${c.growthDue}, growthBook=${c.growthBook}, growthPgDue=${c.growthPgDue}, growthPgBook=${c.growthPgBook}, ` +
      `growthDatabases=${[...c.growthDatabases].join(',')}, ` +
      `sections=${[...c.sections].join(',')}, postgres=${maskUrl(c.postgresUrl)}`,
    "Load generator, client and server share the machine: figures are this machine's, not production figures.",
  ];
}

async function connectPostgres(c: BenchConfig): Promise<PostgresAvailability> {
  if (
    !c.sections.has(1) &&
    !c.sections.has(2) &&
    !c.sections.has(6) &&
    !millionRequested() &&
    !(c.sections.has(5) && c.growthDatabases.has('postgres'))
  )
    return { available: false, reason: 'no section that uses it was selected' };
  const probe = await probePostgres(c.postgresUrl);
  if (!probe.ok) return { available: false, reason: `${maskUrl(c.postgresUrl)} cannot be reached (${probe.reason})` };
  server = await openBenchPostgres(c.postgresUrl, probe.version);
  return { available: true, server };
}
