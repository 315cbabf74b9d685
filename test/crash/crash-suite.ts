/**
 * Crash safety (issue 11 §3): a billing run in a child process is killed with SIGKILL again and
 * again, at random instants and at the two instants that matter most for money (after a payment
 * attempt is committed but before the gateway sees it, and after the gateway took the money but
 * before its answer arrives), then restarted. After the last restart the database must equal that
 * of the same book billed once without a crash (ledger, payment attempts, subscriptions, due work,
 * outbox), and hold on its own: every period billed exactly once, no payment taken twice, every
 * ledger chain balanced, no attempt left unresolved, every event delivered to the receiver.
 *
 * Each incarnation runs several workers at once (each its own storage and engine, each with several
 * charges in flight), and between renewals the book's merchant commands: seats raised mid-period
 * (a prorated charge collected at once) and prorated migrations (credit, new product, payment).
 * Some kills are aimed at those commands' charges. A command whose process died after its first
 * commit is settled by the engine's reconciliation (an allocation's payment looked up by key; a
 * migration's uncommitted charge refunded, then the migration is run again later), so its
 * subscription can rightly differ from the uncrashed run's: those subscriptions are left out of the
 * comparison (and counted), and must hold the invariants like every other.
 *
 * The payment gateway and the webhook receiver live in the test process: a real gateway keeps the
 * money it took when the merchant's process dies. With `{ gateway: 'stripe' }` each billing process
 * charges through the Stripe gateway and the real `stripe` client, against the fake Stripe served
 * by the test process, whose records (PaymentIntents, idempotency keys) outlive the kills as
 * Stripe's would; the checks then read the money taken from those records, and add that each key
 * made one PaymentIntent at most.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import {
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type PaymentGateway,
  type Storage,
  SUBSCRIPTION_WORK_KINDS,
} from 'billing-engine';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStripeGateway } from '../../gateways/stripe/index.js';
import { balanceDelta } from '../../src/domain/ledger/balance-delta.js';
import type { TransactionType } from '../../src/ports/billing-records.js';
import { mulberry32 } from '../../src/test-gateway.js';
import { startFakeStripe } from '../support/fake-stripe/fake-stripe.js';
import { ok, Receiver } from '../support/loopback-receiver.js';
import { BILL_UNTIL, BOOK_START, type BookShape, bookCommands, type CrashCommand, seedBook } from './crash-book.js';
import type { CrashChildArgs, CrashChildSummary } from './crash-child.js';
import { type ChargeFate, serveGateway } from './remote-gateway.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A database the crash test bills, seen from the test process. */
export interface CrashDatabase {
  /** Where the child processes find it. */
  readonly location: Pick<CrashChildArgs & { dialect: 'sqlite' }, 'dialect' | 'file'> | PostgresLocation;
  /** A migrated storage on it, for seeding the book. */
  open(): Promise<Storage>;
  /** Rows of a read-only query (no parameters). */
  rows(sql: string): Promise<Record<string, unknown>[]>;
  dispose(): Promise<void>;
}

type PostgresLocation = Pick<CrashChildArgs & { dialect: 'postgres' }, 'dialect' | 'url' | 'schema'>;

/** How a dialect's crash test gets its databases. */
export interface CrashHarness {
  readonly name: string;
  /** Set when this machine cannot run the test; printed. */
  readonly skipReason?: string;
  create(label: string): Promise<CrashDatabase>;
  close?(): Promise<void>;
}

/** Which payment gateway the billing processes charge. */
export type CrashGatewayKind = 'test' | 'stripe';

/** Options of {@link crashSuite}. */
export interface CrashSuiteOptions {
  /**
   * `test` (default): the test gateway, served by the test process. `stripe`: the Stripe gateway in
   * each billing process, over a fake Stripe served by the test process (its records outlive kills).
   */
  readonly gateway?: CrashGatewayKind;
  /** Workers per billing process (default 3), each with its own storage and engine. */
  readonly workers?: number;
  /** Gateway calls each worker keeps in flight (default 8). */
  readonly concurrency?: number;
}

/** Money the gateway took, by the engine's idempotency key. */
type Charges = ReadonlyMap<string, { readonly amountInCents: number; readonly transactionId: string }>;

/** The gateway side of one crash run: lives in the test process, outside the processes that are killed. */
interface GatewayWorld {
  /** The gateway the test process seeds the book with. */
  readonly seedGateway: PaymentGateway;
  /** How the billing processes reach the gateway. */
  readonly child: CrashChildArgs['gateway'];
  /** Charge calls received, including repeats of a key after a restart. */
  readonly chargeCalls: number;
  /** Money taken by key; keys that took money more than once are in `takenTwice`. */
  charges(): Charges;
  /** Money given back, by the charge's transaction id. */
  refunds(): ReadonlyMap<string, number>;
  /** Keys under which the gateway took money (or, at Stripe, made a PaymentIntent) more than once: must stay empty. */
  takenTwice(): string[];
  /** Gateway records that differ from the gateway's published shapes (must stay empty). */
  drift(): readonly string[];
  close(): Promise<void>;
}

/** Decides a charge's fate as it reaches the gateway, from the engine's idempotency key. */
type OnCharge = (key: string) => { fate: ChargeFate; kill?: () => Promise<void> };

const STRIPE_TEST_KEY = 'sk_test_crashSuite';
/** The engine's key behind a PaymentIntent's metadata (the gateway prefixes its namespace). */
const STRIPE_KEY = /^billing-engine:(.*)$/;

async function gatewayWorld(kind: CrashGatewayKind, onCharge: OnCharge): Promise<GatewayWorld> {
  if (kind === 'test') {
    const gateway = createTestGateway();
    const server = await serveGateway(gateway, (request) => onCharge(request.idempotencyKey));
    return {
      seedGateway: gateway,
      child: { kind: 'remote', url: server.url },
      get chargeCalls() {
        return server.chargeCalls;
      },
      charges: () => gateway.charges,
      refunds: () => gateway.refunds,
      // The test gateway answers a repeat of a charged key with the first charge: it cannot take twice.
      takenTwice: () => [],
      drift: () => [],
      close: () => server.close(),
    };
  }
  const fake = await startFakeStripe();
  let chargeCalls = 0;
  fake.intercept((request) => {
    if (request.route !== 'POST /v1/payment_intents') return undefined;
    chargeCalls += 1;
    const { fate, kill } = onCharge(STRIPE_KEY.exec(request.idempotencyKey ?? '')?.[1] ?? '?');
    if (fate === 'answer') return undefined;
    return { drop: fate === 'kill-before-charge' ? 'before' : 'after', ...(kill ? { beforeDrop: kill } : {}) };
  });
  const succeeded = () =>
    [...fake.paymentIntents.values()]
      .filter((intent) => intent.status === 'succeeded')
      .map((intent) => ({ key: STRIPE_KEY.exec(intent.metadata.billing_engine_key ?? '')?.[1] ?? '?', intent }));
  return {
    seedGateway: createStripeGateway({
      apiKey: STRIPE_TEST_KEY,
      stripeConfig: { ...fake.stripeConfig, timeout: 120_000 },
      // The book is seeded with Stripe's test card numbers (test mode only).
      allowRawCardsInTestMode: true,
    }),
    child: { kind: 'stripe', apiKey: STRIPE_TEST_KEY, host: '127.0.0.1', port: fake.port },
    get chargeCalls() {
      return chargeCalls;
    },
    charges: () =>
      new Map(
        succeeded().map(({ key, intent }) => [
          key,
          { amountInCents: intent.amount_received, transactionId: intent.id },
        ]),
      ),
    refunds: () => {
      const byIntent = new Map<string, number>();
      for (const refund of fake.refunds.values()) {
        const intent = typeof refund.payment_intent === 'string' ? refund.payment_intent : refund.payment_intent?.id;
        if (refund.status === 'succeeded' && intent) byIntent.set(intent, (byIntent.get(intent) ?? 0) + refund.amount);
      }
      return byIntent;
    },
    // One Idempotency-Key, one PaymentIntent: a key behind two (whatever their status) was sent twice as new.
    takenTwice: () => {
      const seen = new Map<string, number>();
      for (const intent of fake.paymentIntents.values()) {
        const key = intent.metadata.billing_engine_key ?? '?';
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      return [...seen].filter(([, n]) => n > 1).map(([key]) => key);
    },
    drift: () => fake.drift,
    close: () => fake.close(),
  };
}

/** How many kills the run must survive, and of which kinds at least. */
const KILLS = 24;
const MIN_PAYMENT_KILLS = 6;
/**
 * The first kills are aimed at the commands' charges (the n-th charge of that kind the incarnation
 * sends): after the gateway took an allocation's money, before it saw a migration's, and so on.
 */
const COMMAND_KILLS: readonly KillPlan[] = [
  { kind: 'kill-after-charge', atCharge: 1, keyPrefix: 'allocation:' },
  { kind: 'kill-before-charge', atCharge: 2, keyPrefix: 'allocation:' },
  { kind: 'kill-after-charge', atCharge: 1, keyPrefix: 'migration:' },
  { kind: 'kill-before-charge', atCharge: 1, keyPrefix: 'migration:' },
];
/** The clock moves on this much per incarnation, past the 5-minute leases of a killed one. */
const RESTART_STEP_MS = 6 * 60_000;

/** Bundles the child once per test file: a bundled child starts in a fraction of tsx's time. */
async function bundleChild(): Promise<string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const outfile = join(ROOT, 'node_modules', '.cache', 'billing-engine-crash', `crash-child-${process.pid}.mjs`);
  mkdirSync(dirname(outfile), { recursive: true });
  await build({
    entryPoints: [join(ROOT, 'test', 'crash', 'crash-child.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    tsconfig: join(ROOT, 'tsconfig.json'),
    external: [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})],
    logLevel: 'error',
  });
  return outfile;
}

/** How one incarnation is to die (or not). */
type KillPlan =
  | { readonly kind: 'none' }
  | { readonly kind: 'timer'; readonly afterMs: number }
  | {
      readonly kind: 'kill-before-charge' | 'kill-after-charge';
      /** The how-many-th charge of the incarnation (among those whose key starts with `keyPrefix`). */
      readonly atCharge: number;
      readonly keyPrefix?: string;
    };

type Incarnation =
  | { readonly outcome: 'killed'; readonly plan: KillPlan }
  | { readonly outcome: 'finished'; readonly summary: CrashChildSummary };

/** Runs billing processes on one database, each under a kill plan, against one gateway and receiver. */
class BillingProcesses {
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #plan: KillPlan = { kind: 'none' };
  #chargesSeen = 0;
  #killedByUs = false;
  #incarnation = 0;

  /** Set once the book is seeded: what every incarnation's workers run. */
  work: Pick<CrashChildArgs, 'workers' | 'concurrency' | 'commands'> = { workers: 1, concurrency: 8, commands: [] };

  private constructor(
    private readonly bundle: string,
    private readonly database: CrashDatabase,
    readonly gateway: GatewayWorld,
  ) {}

  /** The gateway is up before the processes (the book is seeded through it); charges reach the processes' kill plans. */
  static async start(bundle: string, database: CrashDatabase, kind: CrashGatewayKind): Promise<BillingProcesses> {
    let self: BillingProcesses | undefined;
    const gateway = await gatewayWorld(kind, (key) => (self ? self.#onCharge(key) : { fate: 'answer' }));
    self = new BillingProcesses(bundle, database, gateway);
    return self;
  }

  #onCharge(key: string): { fate: ChargeFate; kill?: () => Promise<void> } {
    const plan = this.#plan;
    if (plan.kind !== 'kill-before-charge' && plan.kind !== 'kill-after-charge') return { fate: 'answer' };
    if (plan.keyPrefix !== undefined && !key.startsWith(plan.keyPrefix)) return { fate: 'answer' };
    this.#chargesSeen += 1;
    if (this.#chargesSeen === plan.atCharge) return { fate: plan.kind, kill: () => this.#kill() };
    return { fate: 'answer' };
  }

  async #kill(): Promise<void> {
    if (!this.#child || this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    this.#killedByUs = true;
    this.#child.kill('SIGKILL');
    await this.#exited;
  }

  /** Starts the next incarnation under `plan` and waits until it is killed or finishes. */
  async run(plan: KillPlan): Promise<Incarnation> {
    this.#incarnation += 1;
    this.#plan = plan;
    this.#chargesSeen = 0;
    this.#killedByUs = false;
    const args: CrashChildArgs = {
      ...this.database.location,
      gateway: this.gateway.child,
      now: new Date(Date.parse(BILL_UNTIL) + this.#incarnation * RESTART_STEP_MS).toISOString(),
      until: BILL_UNTIL,
      ...this.work,
    } as CrashChildArgs;
    const started = performance.now();
    const child = spawn(process.execPath, [this.bundle, JSON.stringify(args)], { cwd: ROOT, env: process.env });
    this.#child = child;
    let stdout = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      if (plan.kind === 'timer' && timer === undefined && stdout.includes('ready\n')) {
        timer = setTimeout(() => void this.#kill(), plan.afterMs);
      }
    });
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    this.#exited = exited.then(() => undefined);
    const { code, signal } = await exited;
    clearTimeout(timer);
    // CRASH_VERBOSE=1 prints each incarnation (to see where a slow run spends its time).
    if (process.env.CRASH_VERBOSE)
      console.info(
        `[crash tests] incarnation ${this.#incarnation} (${JSON.stringify(plan)}): ${signal ?? code} after ${Math.round(performance.now() - started)} ms`,
      );
    if (this.#killedByUs && signal === 'SIGKILL') return { outcome: 'killed', plan };
    const line = stdout
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.startsWith('{'));
    if (code !== 0 || line === undefined) {
      throw new Error(`billing process ${this.#incarnation} exited with ${code ?? signal}; stderr:\n${stderr}`);
    }
    return { outcome: 'finished', summary: JSON.parse(line) as CrashChildSummary };
  }

  /** Runs clean incarnations until one finds nothing left to do. */
  async settle(): Promise<CrashChildSummary[]> {
    const runs: CrashChildSummary[] = [];
    for (let i = 0; i < 6; i++) {
      const run = await this.run({ kind: 'none' });
      if (run.outcome !== 'finished') throw new Error('a clean incarnation was killed');
      runs.push(run.summary);
      const { processed, delivered, commands, deferred } = run.summary;
      if (processed === 0 && delivered === 0 && commands === 0 && deferred === 0) return runs;
    }
    throw new Error(`billing did not settle after 6 clean runs: ${JSON.stringify(runs)}`);
  }

  get chargeCalls(): number {
    return this.gateway.chargeCalls;
  }

  close(): Promise<void> {
    return this.gateway.close();
  }
}

/** The database's billing state, without row ids (Postgres sequences keep numbers rolled-back inserts took). */
async function billingState(db: CrashDatabase): Promise<Record<string, unknown[]>> {
  const strip = (rows: Record<string, unknown>[]) => rows.map((row) => normalise(row));
  return {
    subscriptions: strip(
      await db.rows(
        `select id, state, period_index, current_period_started_at, current_period_ends_at, next_assessment_at,
                canceled_at, balance_in_cents, version, data, coupon_codes, updated_at
           from subscriptions order by id`,
      ),
    ),
    ledger: strip(
      await db.rows(
        `select subscription_id, type, kind, amount_in_cents, memo, success, starting_balance_in_cents,
                ending_balance_in_cents, component_id, period_index, gateway_transaction_id, created_at
           from ledger_transactions order by subscription_id, id`,
      ),
    ),
    payments: strip(
      await db.rows(
        `select idempotency_key, subscription_id, amount_in_cents, purpose, status, gateway_transaction_id, message,
                created_at, updated_at
           from payment_attempts order by created_at, subscription_id, idempotency_key`,
      ),
    ),
    dueWork: sortedByValue(
      (
        await db.rows(
          `select kind, subject_id, due_at, unique_key,
                status, payload
           from due_work where kind <> 'webhook_delivery' order by unique_key`,
        )
      ).map(withoutRunInstants),
    ),
    outbox: outboxState(
      await db.rows(
        `select key, subject_type, subject_id, occurred_at, payload
           from outbox_events order by subject_type, subject_id, id`,
      ),
    ),
  };
}

/**
 * The outbox, each subscription's events in their order. Events about documents numbered as they
 * are issued (invoices) are compared by value without their id, number and uid: `runDue` bills
 * many subscriptions at once, so which invoice is issued first across subscriptions is not fixed.
 */
function outboxState(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const ordered = rows.filter((row) => row.subject_type !== 'invoice').map((row) => normalise(row));
  const documents = sortedByValue(
    rows
      .filter((row) => row.subject_type === 'invoice')
      .map((row) => {
        const { subject_id: _id, ...rest } = normalise(row);
        const payload = rest.payload as Record<string, unknown>;
        const { uid: _uid, number: _number, ...stable } = payload;
        return { ...rest, payload: stable };
      }),
  );
  return [...ordered, ...documents];
}

/**
 * A due item's payment attempt is committed with its reconciliation row (settled with the attempt,
 * which cancels it), due an hour after the later of the worker's now and its run's `until`: each
 * incarnation runs at a later now, so that instant differs between the runs, and its subject is
 * the attempt's id, which concurrent workers take in no fixed order. The row is compared by its
 * key (the attempt's), status and payload. An allocation's plan is compared without the uid of
 * the invoice it pays (uids are random).
 */
function withoutRunInstants(row: Record<string, unknown>): Record<string, unknown> {
  const payload = typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload;
  if (row.kind !== 'reconcile_payment') return row;
  // An allocation payment's plan names the invoice its lines issued, by uid: uids are random.
  if (payload !== null && typeof payload === 'object' && 'invoiceUid' in payload) {
    const { invoiceUid: _uid, ...stable } = payload as Record<string, unknown>;
    return { ...row, payload: stable };
  }
  if ((payload as { type?: unknown } | null)?.type !== 'due_payment') return row;
  const { subject_id: _attempt, due_at: _due, ...rest } = row;
  return rest;
}

/** Rows normalised and sorted by their whole value (some keys hold random ids, so no column orders them). */
function sortedByValue(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows
    .map((row) => normalise(row))
    .map((row) => [JSON.stringify(row), row] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, row]) => row);
}

/** JSON columns as values, numbers as numbers, and ids of ledger rows inside payloads blanked. */
function normalise(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    let v = value;
    if (typeof v === 'string' && (key === 'payload' || key === 'data' || key === 'coupon_codes')) v = JSON.parse(v);
    if (typeof v === 'bigint') v = Number(v);
    if (v instanceof Date) v = v.toISOString();
    if (typeof v === 'string' && /^-?\d+$/.test(v) && /_in_cents$|_id$|^version$|^period_index$/.test(key))
      v = Number(v);
    // Signup attempts are keyed by a random id (the subscription does not exist yet), and so are
    // their reconciliation rows.
    if (typeof v === 'string') v = stableText(v);
    out[key] = key === 'payload' ? blankLedgerIds(v) : v;
  }
  return out;
}

const SIGNUP_KEY = /signup:[0-9a-f-]{36}/g;
/** Allocation and migration keys end in a random id too. */
const COMMAND_KEY = /\b((?:allocation|migration):[0-9+:]+)[0-9a-f]{8}-[0-9a-f-]{27}/g;

const stableText = (text: string) =>
  text.replace(SIGNUP_KEY, 'signup:*').replace(COMMAND_KEY, '$1*').replace(GATEWAY_ID, '$1_*');
/**
 * The test gateway numbers its charges in the order they arrive. Subscriptions are independent, so
 * the order in which a batch interleaves them depends on where batches start, which a restart
 * moves; each payment is matched to its gateway charge by key in `expectSound` instead.
 */
const GATEWAY_ID = /\b(ch|rf|pi|re)_(?:\d{6}|fake\d{14})\b/g;

/** Ledger row ids inside event payloads: numbered by the sequence, which a rolled-back insert advances on Postgres. */
function blankLedgerIds(value: unknown, parent = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => blankLedgerIds(v, parent));
  if (typeof value === 'string') return stableText(value);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const ledgerId = (parent === 'transaction' && key === 'id') || key === 'transaction_id' || key === 'event_id';
    out[key] = ledgerId ? '#' : blankLedgerIds(v, key);
  }
  return out;
}

const num = (value: unknown) => Number(value);

/**
 * The command subscriptions whose rows differ between the runs: a kill landed after the command's
 * first commit (its payment then settled by reconciliation, at another instant, or the migration
 * refunded and run again later).
 */
function disturbedBy(
  commands: readonly CrashCommand[],
  expected: Record<string, unknown[]>,
  actual: Record<string, unknown[]>,
): Set<number> {
  const disturbed = new Set<number>();
  for (const { subscriptionId } of commands) {
    const only = new Set([subscriptionId]);
    const mine = (state: Record<string, unknown[]>) =>
      Object.fromEntries(
        Object.entries(state).map(([table, rows]) => [table, rows.filter((row) => mentions(row, only))]),
      );
    if (!isDeepStrictEqual(mine(actual), mine(expected))) disturbed.add(subscriptionId);
  }
  return disturbed;
}

/** The state without the rows about `subscriptions`. */
function withoutSubscriptions(state: Record<string, unknown[]>, subscriptions: ReadonlySet<number>) {
  return Object.fromEntries(
    Object.entries(state).map(([table, rows]) => [table, rows.filter((row) => !mentions(row, subscriptions))]),
  );
}

/** Kinds of due work whose subject is a subscription (others name an attempt, an endpoint...). */
const SUBSCRIPTION_WORK: ReadonlySet<string> = new Set(SUBSCRIPTION_WORK_KINDS);
const KEY_OF = /^(?:renewal|dunning|allocation|migration|charge):(\d+):/;

/** Whether a row (of any table of {@link billingState}) is about one of `subscriptions`. */
function mentions(row: unknown, subscriptions: ReadonlySet<number>, parent = ''): boolean {
  if (typeof row === 'string') {
    const key = KEY_OF.exec(row);
    return key !== null && subscriptions.has(Number(key[1]));
  }
  if (Array.isArray(row)) return row.some((v) => mentions(v, subscriptions, parent));
  if (row === null || typeof row !== 'object') return false;
  const record = row as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    const id = typeof value === 'number' || typeof value === 'string' ? Number(value) : Number.NaN;
    if (/^subscription_?id$/i.test(key) && subscriptions.has(id)) return true;
    if (key === 'id' && parent === 'subscription' && subscriptions.has(id)) return true;
    if (mentions(value, subscriptions, key)) return true;
  }
  if (record.subject_type === 'subscription' && subscriptions.has(Number(record.subject_id))) return true;
  if (typeof record.kind === 'string' && SUBSCRIPTION_WORK.has(record.kind) && 'due_at' in record)
    return subscriptions.has(Number(record.subject_id));
  // A row of the subscriptions table.
  if ('period_index' in record && 'state' in record && 'balance_in_cents' in record)
    return subscriptions.has(Number(record.id));
  return false;
}

/** The crash test for one storage. */
export function crashSuite(
  harness: CrashHarness,
  shape: BookShape = { subscriptions: 48 },
  options: CrashSuiteOptions = {},
): void {
  const kind = options.gateway ?? 'test';
  const workers = options.workers ?? 3;
  const concurrency = options.concurrency ?? 8;
  const name = `${kind === 'test' ? harness.name : `${harness.name} with the ${kind} gateway`}, ${workers} workers × concurrency ${concurrency}`;
  const title = `crash safety on ${name}: SIGKILL during a billing run`;
  if (harness.skipReason !== undefined) {
    describe(title, () => {
      it.skip(`skipped: ${harness.skipReason}`, () => {});
    });
    console.info(`[crash tests] ${harness.name} skipped: ${harness.skipReason}`);
    return;
  }

  describe(title, () => {
    let bundle = '';
    beforeAll(async () => {
      bundle = await bundleChild();
    });
    afterAll(async () => {
      if (bundle !== '') rmSync(bundle, { force: true });
      await harness.close?.();
    });

    it(`survives ${KILLS} kills (${MIN_PAYMENT_KILLS}+ around payments): the result equals an uncrashed run, and every period is billed once`, async () => {
      const seed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
      const random = mulberry32(seed);
      const context = `kill schedule seed ${seed} (CRASH_SEED=${seed} replays it)`;

      const book = async (label: string) => {
        const db = await harness.create(label);
        const processes = await BillingProcesses.start(bundle, db, kind);
        const gateway = processes.gateway;
        const receiver = await new Receiver(ok).start();
        const clock = new ManualClock(BOOK_START);
        const storage = await db.open();
        const engine = createBillingEngine({
          storage,
          clock,
          gateway: gateway.seedGateway,
          webhooks: { allowLocalReceivers: true },
        });
        const seeded = await seedBook(engine, clock, shape, receiver.url);
        await storage.close();
        const commands = bookCommands(seeded);
        processes.work = { workers, concurrency, commands };
        return { db, gateway, receiver, processes, commands };
      };

      // The control: the same book billed by one process that is never killed.
      const control = await book('control');
      const controlRuns = await control.processes.settle();
      const expected = await billingState(control.db);

      // The crashed run.
      const crashed = await book('crashed');
      const kills: KillPlan[] = [];
      while (kills.length < KILLS) {
        const pick = kills.length % 3;
        const plan: KillPlan =
          kills.length < COMMAND_KILLS.length
            ? COMMAND_KILLS[kills.length]!
            : pick === 0
              ? { kind: 'kill-after-charge', atCharge: 1 + Math.floor(random() * 8) }
              : pick === 1
                ? { kind: 'kill-before-charge', atCharge: 1 + Math.floor(random() * 8) }
                : { kind: 'timer', afterMs: 20 + Math.floor(random() * 180) };
        const run = await crashed.processes.run(plan);
        if (run.outcome === 'finished') {
          throw new Error(
            `the billing run finished after ${kills.length} kills, before ${KILLS}: make the book bigger (${context})`,
          );
        }
        kills.push(run.plan);
      }
      const settleRuns = await crashed.processes.settle();
      const actual = await billingState(crashed.db);

      const after = kills.filter((k) => k.kind === 'kill-after-charge').length;
      const before = kills.filter((k) => k.kind === 'kill-before-charge').length;
      const aimed = kills.filter((k) => k.kind !== 'timer' && k.kind !== 'none' && k.keyPrefix !== undefined).length;
      // Subscriptions whose command a kill interrupted after its first commit: settled by
      // reconciliation, so rightly unlike the uncrashed run's; compared by the invariants only.
      const disturbed = disturbedBy(crashed.commands, expected, actual);
      console.info(
        `[crash tests] ${name}: ${kills.length} kills (${after} after the gateway took a charge, ${before} before it saw one, ${aimed} of them aimed at allocations and migrations, ${kills.length - after - before} at random instants); ` +
          `${crashed.commands.length} commands, ${disturbed.size} of them interrupted after their first commit (subscriptions ${[...disturbed].join(', ') || 'none'}); ` +
          `${crashed.processes.chargeCalls} charge calls against ${control.processes.chargeCalls} uncrashed; ` +
          `${actual.ledger!.length} ledger lines and ${actual.outbox!.length} events (uncrashed: ${expected.ledger!.length} and ${expected.outbox!.length}); ${context}`,
      );
      expect(after).toBeGreaterThanOrEqual(MIN_PAYMENT_KILLS);
      expect(before).toBeGreaterThanOrEqual(MIN_PAYMENT_KILLS);
      expect(controlRuns[0]!.renewed).toBeGreaterThan(200);
      // The uncrashed run ran every command once, on its first try.
      expect(controlRuns[0]).toMatchObject({ commands: control.commands.length, deferred: 0 });
      expect(settleRuns.at(-1)).toMatchObject({ processed: 0, delivered: 0, commands: 0, deferred: 0 });
      // In the uncrashed run every command was charged at once through the gateway, prorated:
      // seats raised mid-period cost less than a full period of them, and a migration costs the
      // new product less the credit for the old one's unused time.
      const controlCharges = [...control.gateway.charges()];
      for (const command of control.commands) {
        const charged = controlCharges.filter(([key]) => key.startsWith(`${command.kind}:${command.subscriptionId}:`));
        expect(charged, `${command.kind} of ${command.subscriptionId} charged once`).toHaveLength(1);
        const amount = charged[0]![1].amountInCents;
        expect(amount).toBeGreaterThan(0);
        expect(amount).toBeLessThan(command.kind === 'migration' ? 9900 : 3 * 400);
      }
      // Most commands ran undisturbed, so the comparison below still covers them.
      expect(disturbed.size).toBeLessThan(crashed.commands.length / 2);

      // Equal to the uncrashed run, table by table (the disturbed subscriptions left out of both).
      const [left, right] = [withoutSubscriptions(actual, disturbed), withoutSubscriptions(expected, disturbed)];
      // Leaving them out leaves the comparison nearly whole.
      for (const table of ['subscriptions', 'ledger', 'payments', 'dueWork', 'outbox']) {
        expect(right[table]!.length, `${table} rows compared`).toBeGreaterThan(0.75 * expected[table]!.length);
      }
      const differing = Object.keys(right).filter((table) => !isDeepStrictEqual(left[table], right[table]));
      for (const table of differing) {
        expect(left[table], `${table} differs from the uncrashed run; ${context}`).toEqual(right[table]);
      }

      // And sound on its own terms.
      await expectSound(crashed.db, crashed.gateway, crashed.receiver, crashed.commands, context);
      await expectSound(control.db, control.gateway, control.receiver, control.commands, context);

      for (const run of [control, crashed]) {
        await run.processes.close();
        await run.receiver.stop();
        await run.db.dispose();
      }
    }, 1_200_000);
  });
}

/** Invariants that hold for any correct billing run, crashed or not. */
async function expectSound(
  db: CrashDatabase,
  gateway: GatewayWorld,
  receiver: Receiver,
  commands: readonly CrashCommand[],
  context: string,
): Promise<void> {
  expect(gateway.takenTwice(), `keys that took money twice; ${context}`).toEqual([]);
  expect(gateway.drift(), `gateway records unlike the real gateway's; ${context}`).toEqual([]);
  const received = new Map<string, string[]>();
  for (const hit of receiver.hits) received.set(hit.id ?? '?', [...(received.get(hit.id ?? '?') ?? []), hit.body]);
  const ledger = await db.rows(
    `select id, subscription_id, type, kind, amount_in_cents, period_index, gateway_transaction_id,
            starting_balance_in_cents, ending_balance_in_cents
       from ledger_transactions order by subscription_id, id`,
  );
  // Every period billed exactly once.
  const baseline = new Map<string, number>();
  for (const line of ledger) {
    if (line.type === 'charge' && line.kind === 'baseline') {
      const key = `${num(line.subscription_id)}:${num(line.period_index)}`;
      baseline.set(key, (baseline.get(key) ?? 0) + 1);
    }
  }
  const doubled = [...baseline].filter(([, n]) => n !== 1);
  expect(doubled, `periods billed more than once; ${context}`).toEqual([]);

  // No payment taken twice: each gateway charge is one ledger payment of the same amount, and
  // each (subscription, period) had money taken under one key at most. The one exception is a
  // migration whose process died between its charge and its commit: never written, the charge
  // is refunded in full by its reconciliation, and the ledger rightly has no line for it.
  const payments = ledger.filter((l) => l.type === 'payment' && l.gateway_transaction_id !== null);
  const byGatewayId = new Map<string, number[]>();
  for (const p of payments) {
    const id = String(p.gateway_transaction_id);
    byGatewayId.set(id, [...(byGatewayId.get(id) ?? []), num(p.amount_in_cents)]);
  }
  const refunds = gateway.refunds();
  const all = [...gateway.charges()];
  const givenBack = all.filter(
    ([key, charge]) => !byGatewayId.has(charge.transactionId) && key.startsWith('migration:'),
  );
  for (const [key, charge] of givenBack) {
    expect(refunds.get(charge.transactionId), `uncommitted migration charge ${key} refunded in full; ${context}`).toBe(
      charge.amountInCents,
    );
  }
  const taken = all.filter((entry) => !givenBack.includes(entry));
  expect(byGatewayId.size, `ledger payments vs gateway charges; ${context}`).toBe(taken.length);
  for (const [key, charge] of taken) {
    expect(byGatewayId.get(charge.transactionId), `gateway charge ${key}; ${context}`).toEqual([charge.amountInCents]);
    // Nothing the ledger records as paid was given back behind its back.
    expect(refunds.get(charge.transactionId), `refund of recorded charge ${key}; ${context}`).toBeUndefined();
  }

  // Every command done exactly once, its money kept at most once: one migration payment per
  // migrated subscription (kept by one key), one allocation of each memo, each allocation key
  // charged at most once (above) and recorded as one payment when it took money.
  const rows = (sql: string) => db.rows(sql);
  const subscriptions = new Map(
    (await rows('select s.id, p.handle from subscriptions s join products p on p.id = s.product_id')).map((r) => [
      num(r.id),
      String(r.handle),
    ]),
  );
  const memos = (await rows('select subscription_id, memo from allocations')).map(
    (r) => `${num(r.subscription_id)}|${String(r.memo)}`,
  );
  for (const command of commands) {
    const label = `${command.kind} of subscription ${command.subscriptionId}; ${context}`;
    if (command.kind === 'migration') {
      expect(subscriptions.get(command.subscriptionId), label).toBe(command.productHandle);
      const kept = taken.filter(([key]) => key.startsWith(`migration:${command.subscriptionId}:`));
      expect(kept, `money kept for the ${label}`).toHaveLength(1);
      const lines = ledger.filter((l) => num(l.subscription_id) === command.subscriptionId && l.type === 'payment');
      expect(
        lines.some((l) => l.gateway_transaction_id === kept[0]![1].transactionId),
        `payment line of the ${label}`,
      ).toBe(true);
    } else {
      expect(
        memos.filter((m) => m === `${command.subscriptionId}|${command.memo}`),
        label,
      ).toHaveLength(1);
    }
  }
  const perPeriod = new Map<string, string[]>();
  for (const [key] of taken) {
    const match = /^(renewal|dunning):(\d+):(\d+)/.exec(key);
    if (match) perPeriod.set(`${match[2]}:${match[3]}`, [...(perPeriod.get(`${match[2]}:${match[3]}`) ?? []), key]);
  }
  expect(
    [...perPeriod].filter(([, keys]) => keys.length > 1),
    `periods paid twice; ${context}`,
  ).toEqual([]);

  // Every ledger chain balances and ends at the subscription's balance.
  const balances = new Map(
    (await db.rows('select id, balance_in_cents from subscriptions')).map((r) => [num(r.id), num(r.balance_in_cents)]),
  );
  const last = new Map<number, number>();
  for (const line of ledger) {
    const subscription = num(line.subscription_id);
    const start = num(line.starting_balance_in_cents);
    if (last.has(subscription))
      expect(start, `ledger chain of ${subscription}; ${context}`).toBe(last.get(subscription));
    expect(num(line.ending_balance_in_cents)).toBe(
      start + balanceDelta(line.type as TransactionType, num(line.amount_in_cents)),
    );
    last.set(subscription, num(line.ending_balance_in_cents));
  }
  for (const [subscription, ending] of last) expect(balances.get(subscription)).toBe(ending);

  // Nothing left unresolved.
  const open = await db.rows(
    `select idempotency_key, status from payment_attempts where status in ('pending', 'unknown')`,
  );
  expect(open, `unresolved payment attempts; ${context}`).toEqual([]);
  const left = await db.rows(
    `select unique_key from due_work where status in ('pending', 'claimed') and (kind = 'webhook_delivery' or due_at <= ${
      db.location.dialect === 'sqlite' ? Date.parse(BILL_UNTIL) : `'${BILL_UNTIL}'::timestamptz`
    })`,
  );
  expect(left, `due work left behind; ${context}`).toEqual([]);

  // No event lost: every webhook was delivered, and the receiver got each one, by its stable id.
  const webhooks = await db.rows('select id, status, body from webhooks order by id');
  expect(webhooks.length).toBeGreaterThan(0);
  expect(webhooks.filter((w) => w.status !== 'successful').map((w) => num(w.id))).toEqual([]);
  expect([...received.keys()].sort()).toEqual(webhooks.map((w) => String(num(w.id))).sort());
  for (const w of webhooks) {
    // A redelivery after a kill repeats the same signed body under the same id.
    for (const body of received.get(String(num(w.id))) ?? []) expect(body).toBe(w.body);
  }
  const silent = await db.rows(
    'select id, key from outbox_events where id not in (select event_id from webhooks where event_id is not null)',
  );
  expect(silent, `events that never became a webhook; ${context}`).toEqual([]);
}
