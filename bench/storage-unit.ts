/**
 * Section 1 (issue 3): the storage port's cost on a renewal-shaped unit of work. One unit is one
 * transaction that reads a due subscription, writes its period change at its version, appends two
 * ledger lines (charge and payment) and one outbox event, through the storage port; the raw
 * baseline writes the same rows with the same statements through the plain driver (see
 * `raw-sql.ts`), including the same reads and the running-balance update the SQL adapter makes.
 * Both run on the same database, on distinct subscriptions, with their timed runs alternating.
 */
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createTestGateway, type NewTransaction, type Storage, type SubscriptionRecord } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import type pg from 'pg';
import type { BenchContext } from './bench-context.js';
import {
  comparePaired,
  formatRatio,
  formatSummary,
  type RateSummary,
  type Runner,
  timeBox,
  timeBoxConcurrent,
} from './measure.js';
import {
  BEGIN,
  COMMIT,
  POSTGRES_DIALECT,
  query,
  type RawDialect,
  type RawWork,
  runPostgres,
  runSqlite,
  SQLITE_DIALECT,
} from './raw-sql.js';
import { SEED_PRICE_IN_CENTS, type SeededSite, seedDueSubscriptions, seedSite } from './seed-subscriptions.js';

/** Issue 3's target: the engine within this factor of the raw driver on SQLite and Postgres. */
export const STORAGE_UNIT_TARGET_FACTOR = 3;

const PERIOD_MS = 30 * 86_400_000;
const SUBSCRIPTIONS_PER_WORKER = 100;

/** One measured case of the section. */
interface UnitCase {
  readonly adapter: string;
  readonly workers: number;
  readonly engine: RateSummary;
  readonly raw: RateSummary;
  /** Whether issue 3's target applies (SQLite and Postgres, not memory). */
  readonly targeted: boolean;
}

/** Runs section 1 and reports it. */
export async function runStorageUnitSection(context: BenchContext): Promise<void> {
  const { report, config } = context;
  report.section('1. Storage unit (issue 3)');
  report.note(
    'One unit = one transaction: read a due subscription; update its period at its version; append two ledger lines ' +
      '(charge, payment); append one outbox event. Engine = through the storage port; raw = the same statements with ' +
      'the plain driver (better-sqlite3 prepared statements in one db.transaction().immediate(); pg BEGIN/COMMIT on ' +
      'one client), including the subscription read, the running-balance UPDATE ... RETURNING the adapter does, and ' +
      "on Postgres the adapter's per-site outbox advisory lock. Memory's baseline is plain Map writes of the same " +
      `records. ${config.runs} alternating timed run(s) of ${config.timeBoxMs} ms per figure after ${config.warmUpMs} ms warm-up; median (min-max).`,
  );
  const cases: UnitCase[] = [];
  cases.push(await memoryCase(context));
  cases.push(await sqliteCase(context));
  if (context.postgres.available) {
    for (const workers of [1, 2, 4]) cases.push(await postgresCase(context, workers));
  } else {
    report.note(`Postgres part skipped: ${context.postgres.reason}`);
  }
  report.table(
    ['adapter', 'workers', 'engine units/s', 'raw units/s', 'raw/engine', `target <= ${STORAGE_UNIT_TARGET_FACTOR}x`],
    cases.map((c) => {
      const factor = c.raw.median / c.engine.median;
      return [
        c.adapter,
        String(c.workers),
        formatSummary(c.engine),
        formatSummary(c.raw),
        formatRatio(factor),
        c.targeted ? (factor <= STORAGE_UNIT_TARGET_FACTOR ? 'met' : 'missed') : 'n/a',
      ];
    }),
  );
  for (const c of cases) {
    report.ratio(
      `raw/engine ${c.adapter} x${c.workers}: ${formatRatio(c.raw.median / c.engine.median)} ` +
        '(throughput; how many times more units/s the raw driver does)',
    );
  }
  for (const adapter of ['sqlite', 'postgres']) {
    const mine = cases.filter((c) => c.adapter === adapter && c.targeted);
    if (mine.length === 0) {
      report.target(`issue 3: engine within ${STORAGE_UNIT_TARGET_FACTOR}x of raw on ${adapter}`, undefined, 'not run');
      continue;
    }
    const worst = Math.max(...mine.map((c) => c.raw.median / c.engine.median));
    report.target(
      `issue 3: engine within ${STORAGE_UNIT_TARGET_FACTOR}x of raw on ${adapter}`,
      worst <= STORAGE_UNIT_TARGET_FACTOR,
      `worst raw/engine ${formatRatio(worst)} over ${mine.map((c) => `x${c.workers}`).join(', ')}`,
    );
  }
}

async function memoryCase(context: BenchContext): Promise<UnitCase> {
  const storage = createMemoryStorage();
  const { site, ids } = await seedUnitSubscriptions(storage, 1);
  const engineIds = ids[0]!;
  // The baseline's tables: the same records in plain Maps, copied on read and write as any
  // store that hands out copies must.
  const subscriptions = new Map<number, SubscriptionRecord>();
  await storage.transaction(async (tx) => {
    for (const id of engineIds) {
      const found = await tx.subscriptions.findById(site.siteId, id);
      if (found) subscriptions.set(id + 1_000_000, { ...found, id: id + 1_000_000 });
    }
  });
  const rawIds = [...subscriptions.keys()];
  const balances = new Map<number, number>();
  const ledger = new Map<number, Record<string, unknown>>();
  const outbox = new Map<number, Record<string, unknown>>();
  let nextLine = 0;
  let nextEvent = 0;
  let e = 0;
  let r = 0;
  const rawUnit = (): number => {
    const id = rawIds[r++ % rawIds.length]!;
    const current = subscriptions.get(id)!;
    const read = { ...current };
    const start = read.currentPeriodEndsAt;
    const end = new Date(start.getTime() + PERIOD_MS);
    subscriptions.set(id, {
      ...read,
      periodIndex: read.periodIndex + 1,
      currentPeriodStartedAt: start,
      currentPeriodEndsAt: end,
      nextAssessmentAt: end,
      updatedAt: start,
      version: read.version + 1,
    });
    let balance = balances.get(id) ?? 0;
    for (const line of unitLines({ ...read, id }, start)) {
      const { balanceDeltaInCents, ...fields } = line;
      const ending = balance + balanceDeltaInCents;
      ledger.set(++nextLine, {
        ...fields,
        id: nextLine,
        startingBalanceInCents: balance,
        endingBalanceInCents: ending,
      });
      balance = ending;
    }
    balances.set(id, balance);
    outbox.set(++nextEvent, { ...unitEvent(site.siteId, id, start), id: nextEvent });
    return 1;
  };
  const result = await comparePaired(
    {
      engine: (ms) => timeBox(() => engineUnit(storage, site.siteId, engineIds[e++ % engineIds.length]!), ms),
      raw: (ms) => timeBox(rawUnit, ms),
    },
    context.config,
  );
  await storage.close();
  return { adapter: 'memory', workers: 1, ...result, targeted: false };
}

async function sqliteCase(context: BenchContext): Promise<UnitCase> {
  const file = join(context.tempDir, 'storage-unit.db');
  const storage = createSqliteStorage({ database: file });
  await storage.migrate();
  const { site, ids } = await seedUnitSubscriptions(storage, 2);
  // The baseline opens the same file the way the adapter does (WAL, foreign keys, busy timeout).
  const db = new BetterSqlite3(file, { timeout: 5000 });
  db.pragma('journal_mode = wal');
  db.pragma('foreign_keys = on');
  const cache = new Map<string, BetterSqlite3.Statement>();
  const engineIds = ids[0]!;
  const rawIds = ids[1]!;
  let e = 0;
  let r = 0;
  try {
    const result = await comparePaired(
      {
        engine: (ms) => timeBox(() => engineUnit(storage, site.siteId, engineIds[e++ % engineIds.length]!), ms),
        raw: (ms) =>
          timeBox(() => {
            runSqlite(db, rawUnit(SQLITE_DIALECT, site.siteId, rawIds[r++ % rawIds.length]!), cache);
            return 1;
          }, ms),
      },
      context.config,
    );
    return { adapter: 'sqlite', workers: 1, ...result, targeted: true };
  } finally {
    db.close();
    await storage.close();
  }
}

async function postgresCase(context: BenchContext, workers: number): Promise<UnitCase> {
  if (!context.postgres.available) throw new Error('Postgres is not available.');
  const server = context.postgres.server;
  const schema = await server.createSchema();
  // One storage per worker, each on a pool of one connection: separate workers, as separate
  // processes would be.
  const storages: Storage[] = [];
  for (let w = 0; w < workers; w++)
    storages.push(createPostgresStorage({ pool: server.pool(schema, 1), schema: null }));
  const rawPool = server.pool(schema, workers);
  const clients: pg.PoolClient[] = [];
  try {
    await storages[0]!.migrate();
    const { site, ids } = await seedUnitSubscriptions(storages[0]!, workers * 2);
    for (let w = 0; w < workers; w++) clients.push(await rawPool.connect());
    const engineLoops = storages.map((storage, w) => {
      const mine = ids[w]!;
      let i = 0;
      return () => engineUnit(storage, site.siteId, mine[i++ % mine.length]!);
    });
    const rawLoops = clients.map((client, w) => {
      const mine = ids[workers + w]!;
      let i = 0;
      return async () => {
        await runPostgres(client, rawUnit(POSTGRES_DIALECT, site.siteId, mine[i++ % mine.length]!));
        return 1;
      };
    });
    const engine: Runner = (ms) => timeBoxConcurrent(engineLoops, ms);
    const raw: Runner = (ms) => timeBoxConcurrent(rawLoops, ms);
    const result = await comparePaired({ engine, raw }, context.config);
    return { adapter: 'postgres', workers, ...result, targeted: true };
  } finally {
    for (const client of clients) client.release();
    await rawPool.end();
    for (const storage of storages) await storage.close();
    await server.dropSchema(schema);
  }
}

/** Seeds one site with `groups` disjoint lists of subscriptions (one list per worker, engine or raw). */
async function seedUnitSubscriptions(storage: Storage, groups: number): Promise<{ site: SeededSite; ids: number[][] }> {
  const site = await seedSite(storage, createTestGateway(), 'bench-unit');
  const seeded = await seedDueSubscriptions(storage, site, {
    count: groups * SUBSCRIPTIONS_PER_WORKER,
    withRenewalWork: false,
  });
  const ids: number[][] = [];
  for (let g = 0; g < groups; g++) {
    ids.push(seeded.slice(g * SUBSCRIPTIONS_PER_WORKER, (g + 1) * SUBSCRIPTIONS_PER_WORKER).map((s) => s.id));
  }
  return { site, ids };
}

/** The engine's unit, through the storage port. */
async function engineUnit(storage: Storage, siteId: number, id: number): Promise<number> {
  await storage.transaction(async (tx) => {
    const subscription = await tx.subscriptions.findById(siteId, id);
    if (subscription === undefined) throw new Error(`Subscription ${id} is missing.`);
    const start = subscription.currentPeriodEndsAt;
    const end = new Date(start.getTime() + PERIOD_MS);
    const advanced = await tx.subscriptions.updateAtVersion(siteId, id, subscription.version, {
      periodIndex: subscription.periodIndex + 1,
      currentPeriodStartedAt: start,
      currentPeriodEndsAt: end,
      nextAssessmentAt: end,
      updatedAt: start,
    });
    if (advanced === undefined) throw new Error(`Subscription ${id} changed under the benchmark.`);
    await tx.ledger.append(unitLines(advanced, start));
    await tx.outbox.append([unitEvent(siteId, id, start)]);
  });
  return 1;
}

/** The unit's two ledger lines: the period's charge and its payment. */
function unitLines(subscription: SubscriptionRecord, at: Date): NewTransaction[] {
  const common = {
    siteId: subscription.siteId,
    subscriptionId: subscription.id,
    customerId: subscription.customerId,
    productId: subscription.productId,
    componentId: null,
    paymentId: null,
    createdAt: at,
  };
  return [
    {
      ...common,
      type: 'charge',
      kind: 'baseline',
      amountInCents: SEED_PRICE_IN_CENTS,
      memo: 'Bench monthly',
      success: null,
      periodIndex: subscription.periodIndex,
      gatewayTransactionId: null,
      balanceDeltaInCents: SEED_PRICE_IN_CENTS,
    },
    {
      ...common,
      type: 'payment',
      kind: null,
      amountInCents: SEED_PRICE_IN_CENTS,
      memo: 'Payment for renewal',
      success: true,
      periodIndex: null,
      gatewayTransactionId: 'bench',
      balanceDeltaInCents: -SEED_PRICE_IN_CENTS,
    },
  ];
}

function unitEvent(siteId: number, subscriptionId: number, at: Date) {
  return {
    siteId,
    key: 'renewal_success',
    subjectType: 'subscription',
    subjectId: subscriptionId,
    payload: { subscription: { id: subscriptionId, state: 'active' } },
    occurredAt: at,
  };
}

const UNIT_LEDGER_INSERT =
  'insert into ledger_transactions (site_id, subscription_id, customer_id, type, kind, amount_in_cents, memo, success, ' +
  'starting_balance_in_cents, ending_balance_in_cents, payment_id, product_id, component_id, period_index, ' +
  'gateway_transaction_id, refunded_amount_in_cents, created_at) values ' +
  '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning *';

/** The raw unit: the statements the SQL adapter runs for the engine's unit, in one transaction. */
function* rawUnit(dialect: RawDialect, siteId: number, id: number): RawWork<void> {
  yield BEGIN;
  const [subscription] = yield query('select * from subscriptions where site_id = ? and id = ?', [siteId, id]);
  if (subscription === undefined) throw new Error(`Subscription ${id} is missing.`);
  const start = dialect.ms(subscription.current_period_ends_at);
  const end = start + PERIOD_MS;
  const periodIndex = dialect.int(subscription.period_index);
  const [advanced] = yield query(
    'update subscriptions set period_index = ?, current_period_started_at = ?, current_period_ends_at = ?, ' +
      'next_assessment_at = ?, updated_at = ?, version = version + 1 where site_id = ? and id = ? and version = ? returning *',
    [
      periodIndex + 1,
      dialect.instant(start),
      dialect.instant(end),
      dialect.instant(end),
      dialect.instant(start),
      siteId,
      id,
      subscription.version,
    ],
  );
  if (advanced === undefined) throw new Error(`Subscription ${id} changed under the benchmark.`);
  // The two lines move the balance by +price and -price: one UPDATE with their sum, as the adapter does.
  const [balanceRow] = yield query(
    'update subscriptions set balance_in_cents = balance_in_cents + ? where site_id = ? and id = ? returning balance_in_cents',
    [0, siteId, id],
  );
  const balance = dialect.int(balanceRow?.balance_in_cents);
  const customerId = subscription.customer_id;
  const productId = subscription.product_id;
  const at = dialect.instant(start);
  yield query(UNIT_LEDGER_INSERT, [
    siteId,
    id,
    customerId,
    'charge',
    'baseline',
    SEED_PRICE_IN_CENTS,
    'Bench monthly',
    null,
    balance,
    balance + SEED_PRICE_IN_CENTS,
    null,
    productId,
    null,
    periodIndex + 1,
    null,
    0,
    at,
    siteId,
    id,
    customerId,
    'payment',
    null,
    SEED_PRICE_IN_CENTS,
    'Payment for renewal',
    dialect.bool(true),
    balance + SEED_PRICE_IN_CENTS,
    balance,
    null,
    productId,
    null,
    null,
    'bench',
    0,
    at,
  ]);
  if (dialect.name === 'postgres') {
    yield query("select pg_advisory_xact_lock(hashtextextended(? || coalesce(current_schema(), ''), 0))", [
      `billing-engine:outbox:${siteId}:`,
    ]);
  }
  yield query(
    'insert into outbox_events (site_id, key, subject_type, subject_id, payload, occurred_at) values (?, ?, ?, ?, ?, ?) returning *',
    [siteId, 'renewal_success', 'subscription', id, JSON.stringify({ subscription: { id, state: 'active' } }), at],
  );
  yield COMMIT;
}
