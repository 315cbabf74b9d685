/**
 * Section 6 (issue 18): renewals through `runDue` against a gateway that takes 0, 100 or 400 ms to
 * answer each charge, with the default options (32 charges in flight), on SQLite and on Postgres
 * (one worker). With a latent gateway the bound is `concurrency / latency` renewals a second, and
 * the figure to read is how close the engine comes to it; at 0 ms the storage path is the limit.
 * Each backlog is sized so that a case at its bound takes a few seconds.
 */
import { join } from 'node:path';
import {
  type ChargeRequest,
  type ChargeResult,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type PaymentGateway,
  type Storage,
} from 'billing-engine';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import type { BenchContext } from './bench-context.js';
import { formatRate, rate, type Throughput } from './measure.js';
import { RENEWAL_UNTIL, seedDueSubscriptions, seedSite } from './seed-subscriptions.js';

/** `runDue`'s default number of charges in flight (renewal-service.ts). */
const DEFAULT_CONCURRENCY = 32;

/** Gateway latencies measured, in ms. */
const LATENCIES = [0, 100, 400] as const;

/** Connections of the Postgres worker's pool (`pg`'s default). */
const POSTGRES_POOL = 10;

/** The target: at 100 ms, one worker with default options reaches this share of the bound. */
const TARGET_SHARE = 0.8;

interface LatentRow {
  readonly database: 'sqlite' | 'postgres';
  readonly latencyMs: number;
  readonly backlog: number;
  readonly renewed: number;
  readonly throughput: Throughput;
  readonly maxInFlight: number;
}

/** A gateway that answers every charge after `latencyMs` (real time), counting the calls in flight. */
function latentGateway(latencyMs: number): PaymentGateway & { readonly maxInFlight: number } {
  const inner = createTestGateway();
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    name: inner.name,
    supportsRefunds: inner.supportsRefunds,
    get maxInFlight() {
      return maxInFlight;
    },
    tokenize: (card) => inner.tokenize(card),
    refund: (request) => inner.refund(request),
    lookup: (key) => inner.lookup(key),
    async charge(request: ChargeRequest): Promise<ChargeResult> {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
        return await inner.charge(request);
      } finally {
        inFlight -= 1;
      }
    },
  };
}

/** How many subscriptions a case renews: about `seconds` at the bound, within the configured sizes. */
function backlogFor(context: BenchContext, database: 'sqlite' | 'postgres', latencyMs: number): number {
  const { config } = context;
  const seconds = config.quick ? 1 : 4;
  // At 0 ms storage is the limit, which section 2 measures at size; a small backlog keeps this short.
  if (latencyMs === 0) return Math.min(database === 'sqlite' ? 2_000 : 1_000, config.postgresSubscriptions);
  return Math.max(DEFAULT_CONCURRENCY * 2, Math.round(((DEFAULT_CONCURRENCY * 1000) / latencyMs) * seconds));
}

async function runCase(context: BenchContext, database: 'sqlite' | 'postgres', latencyMs: number): Promise<LatentRow> {
  const backlog = Math.floor(backlogFor(context, database, latencyMs));
  let storage: Storage;
  let dropSchema: (() => Promise<void>) | undefined;
  if (database === 'sqlite') {
    storage = createSqliteStorage({ database: join(context.tempDir, `latent-${latencyMs}.db`) });
  } else {
    if (!context.postgres.available) throw new Error('Postgres is not available.');
    const server = context.postgres.server;
    const schema = await server.createSchema();
    storage = createPostgresStorage({ pool: server.pool(schema, POSTGRES_POOL), schema: null });
    dropSchema = () => server.dropSchema(schema);
  }
  try {
    await storage.migrate();
    const gateway = latentGateway(latencyMs);
    const site = await seedSite(storage, gateway, `bench-latent-${latencyMs}`);
    await seedDueSubscriptions(storage, site, { count: backlog, withRenewalWork: true });
    const engine = createBillingEngine({ storage, gateway, clock: new ManualClock(RENEWAL_UNTIL) });
    const start = performance.now();
    const summary = await engine.runDue({ until: RENEWAL_UNTIL });
    const throughput = rate(summary.renewed, performance.now() - start);
    return { database, latencyMs, backlog, renewed: summary.renewed, throughput, maxInFlight: gateway.maxInFlight };
  } finally {
    await storage.close();
    await dropSchema?.();
  }
}

/** Runs section 6 and reports it. */
export async function runLatentGatewaySection(context: BenchContext): Promise<void> {
  const { report } = context;
  report.section('6. runDue against a latent gateway (issue 18)');
  report.note(
    `One runDue({ until }) with default options (${DEFAULT_CONCURRENCY} charges in flight) renews a backlog of due ` +
      'subscriptions; each charge answers after the given latency (real time). Bound = concurrency / latency: the ' +
      'most renewals/s any engine could do with that many calls in flight. Postgres: one worker, a pool of ' +
      `${POSTGRES_POOL} connections. At 0 ms the gateway is instant and storage is the limit (compare section 2).`,
  );
  const rows: LatentRow[] = [];
  const databases: ('sqlite' | 'postgres')[] = ['sqlite'];
  if (context.postgres.available) databases.push('postgres');
  else report.note(`Postgres part skipped: ${context.postgres.reason}`);
  for (const database of databases) {
    for (const latencyMs of LATENCIES) rows.push(await runCase(context, database, latencyMs));
  }
  const bound = (row: LatentRow) =>
    row.latencyMs === 0 ? Number.POSITIVE_INFINITY : (DEFAULT_CONCURRENCY * 1000) / row.latencyMs;
  report.table(
    ['database', 'latency', 'backlog', 'renewed', 'seconds', 'renewals/s', 'bound', 'share of bound', 'most in flight'],
    rows.map((row) => [
      row.database,
      `${row.latencyMs} ms`,
      row.backlog.toLocaleString('en-US'),
      row.renewed.toLocaleString('en-US'),
      row.throughput.seconds.toFixed(1),
      formatRate(row.throughput.perSecond),
      row.latencyMs === 0 ? 'n/a' : formatRate(bound(row)),
      row.latencyMs === 0 ? 'n/a' : `${Math.round((100 * row.throughput.perSecond) / bound(row))}%`,
      String(row.maxInFlight),
    ]),
  );
  for (const row of rows) {
    if (row.latencyMs === 0) continue;
    report.ratio(
      `runDue ${row.database} at ${row.latencyMs} ms: ${formatRate(row.throughput.perSecond)} renewals/s of a bound of ` +
        `${formatRate(bound(row))} (${((100 * row.throughput.perSecond) / bound(row)).toFixed(0)}%)`,
    );
  }
  for (const database of ['sqlite', 'postgres'] as const) {
    const row = rows.find((r) => r.database === database && r.latencyMs === 100);
    report.target(
      `issue 18: 100 ms gateway, default options, one worker on ${database}: >= ${TARGET_SHARE * 100}% of the in-flight bound`,
      row === undefined ? undefined : row.throughput.perSecond >= TARGET_SHARE * bound(row),
      row === undefined
        ? 'not measured'
        : `${formatRate(row.throughput.perSecond)} renewals/s of ${formatRate(bound(row))} (${row.renewed} of ${row.backlog} renewed)`,
    );
  }
}
