/**
 * One incarnation of the billing process that the crash tests kill: opens the shared database
 * once per worker (each worker its own storage and engine, as separate processes would have),
 * prints `ready`, and bills everything due up to `until` with all workers at once, stopping at each
 * merchant command's instant to run it (a mid-period seat allocation, a migration), then delivers
 * the webhooks, prints a JSON summary and exits. It keeps nothing of its own: a restart starts
 * from what the database holds, and a command already done (judged from the database) is not
 * run again.
 *
 * The test bundles this file with esbuild and runs it as `node crash-child.mjs '<json args>'`.
 */
import { type BillingEngine, BillingError, createBillingEngine, ManualClock, type Storage } from 'billing-engine';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import pg from 'pg';
import { createStripeGateway } from '../../gateways/stripe/index.js';
import { type CrashCommand, SUBDOMAIN } from './crash-book.js';
import { createRemoteGateway } from './remote-gateway.js';

/** Where the database is, where the gateway is, and this incarnation's clock. */
export type CrashChildArgs = (
  | { readonly dialect: 'sqlite'; readonly file: string }
  | { readonly dialect: 'postgres'; readonly url: string; readonly schema: string }
) & {
  /** The test gateway served by the test process, or the Stripe gateway over the test's fake Stripe. */
  readonly gateway:
    | { readonly kind: 'remote'; readonly url: string }
    | { readonly kind: 'stripe'; readonly apiKey: string; readonly host: string; readonly port: number };
  /** The incarnation's clock: later for each restart, so the leases of a killed one have lapsed. */
  readonly now: string;
  /** Bill what is due up to this instant. */
  readonly until: string;
  /** Workers billing at once, each with its own storage and engine. */
  readonly workers: number;
  /** Gateway calls each worker keeps in flight. */
  readonly concurrency: number;
  /** The merchant's commands, run at their instants between renewals. */
  readonly commands: readonly CrashCommand[];
};

/** What a finished incarnation prints. */
export interface CrashChildSummary {
  readonly processed: number;
  readonly renewed: number;
  readonly declined: number;
  readonly errors: number;
  readonly delivered: number;
  /** Commands this incarnation ran to the end (applied, or refused for good). */
  readonly commands: number;
  /** Commands refused for now (another payment of the subscription unsettled): tried again later. */
  readonly deferred: number;
}

function open(args: CrashChildArgs): Storage {
  if (args.dialect === 'sqlite') return createSqliteStorage({ database: args.file, busyTimeoutMs: 30_000 });
  // Pipelined clients, as the README advises (issue 18).
  const pool = new pg.Pool({
    connectionString: args.url,
    options: `-c search_path=${args.schema}`,
    max: 4,
    pipeline: true,
  } as pg.PoolConfig);
  pool.on('error', () => {});
  return createPostgresStorage({ pool, schema: null });
}

/** Sums the summaries of the workers' `runDue` calls. */
function add(total: Record<string, number>, run: object): void {
  for (const [key, value] of Object.entries(run)) if (typeof value === 'number') total[key] = (total[key] ?? 0) + value;
}

/** Whether a command is already done, judged from the database (an earlier incarnation may have run it). */
async function done(engine: BillingEngine, command: CrashCommand): Promise<boolean> {
  const site = engine.site(SUBDOMAIN);
  if (command.kind === 'migration') {
    const view = await site.subscriptions.get(command.subscriptionId);
    return view.product.product.handle === command.productHandle;
  }
  const allocations = await site.allocations.listAllocations(command.subscriptionId, command.componentId);
  return allocations.some((a) => a.memo === command.memo);
}

/** Runs one command at its instant; false when it was refused for now and is to be tried again. */
async function run(engine: BillingEngine, command: CrashCommand): Promise<boolean> {
  const site = engine.site(SUBDOMAIN);
  try {
    if (command.kind === 'migration') {
      await site.subscriptions.migrate(command.subscriptionId, { productHandle: command.productHandle });
    } else {
      // The allocation stands whatever its payment does; a declined or lost payment is settled by
      // the engine (accrued, or reconciled by key), never charged again by this script.
      await site.allocations.allocate(command.subscriptionId, command.componentId, {
        quantity: command.quantity,
        memo: command.memo,
      });
    }
    return true;
  } catch (error) {
    // A killed incarnation's payment of this subscription is not settled yet (409), or the
    // migration's charge was lost (its reconciliation refunds it): try again at the next retry.
    if (error instanceof BillingError && (error.code === 'conflict' || error.code === 'gateway_error')) return false;
    throw error;
  }
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '') as CrashChildArgs;
  const storages = Array.from({ length: args.workers }, () => open(args));
  const clock = new ManualClock(args.now);
  const gatewayOf = (clock: ManualClock) =>
    args.gateway.kind === 'remote'
      ? createRemoteGateway(args.gateway.url)
      : createStripeGateway({
          apiKey: args.gateway.apiKey,
          stripeConfig: { host: args.gateway.host, port: args.gateway.port, protocol: 'http', timeout: 120_000 },
          clock,
        });
  const engineOf = (storage: Storage, clock: ManualClock) =>
    createBillingEngine({
      storage,
      clock,
      gateway: gatewayOf(clock),
      webhooks: { allowLocalReceivers: true, timeoutMs: 5_000 },
    });
  const workers = storages.map((storage) => engineOf(storage, clock));
  // The merchant's commands run on a clock of their own, set to each command's instant, so that
  // they fall in the middle of a period whatever this incarnation's now is.
  const commandClock = new ManualClock(args.now);
  const merchant = engineOf(storages[0]!, commandClock);
  for (const storage of storages) await storage.transaction((tx) => tx.sites.list());
  process.stdout.write('ready\n');

  const billed: Record<string, number> = {};
  // Several workers, each with several charges in flight (issue 18): kills land between the
  // steps of many payments at once.
  const bill = async (until: string) => {
    const runs = await Promise.all(
      workers.map((engine) => engine.runDue({ until: new Date(until), batchSize: 25, concurrency: args.concurrency })),
    );
    for (const r of runs) add(billed, r);
  };
  const slots = args.commands
    .flatMap((command) => [command.at, ...command.retries].map((at) => ({ at, command })))
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || a.command.subscriptionId - b.command.subscriptionId);
  let commands = 0;
  let deferred = 0;
  let billedTo = '';
  for (const { at, command } of slots) {
    if (at !== billedTo) {
      await bill(at);
      billedTo = at;
    }
    commandClock.set(at);
    if (await done(merchant, command)) continue;
    if (await run(merchant, command)) commands += 1;
    else deferred += 1;
  }
  await bill(args.until);
  let delivered = 0;
  for (;;) {
    const sent = await workers[0]!.deliverWebhooks();
    delivered += sent.delivered;
    if (sent.processed === 0) break;
  }
  const summary: CrashChildSummary = {
    processed: billed.processed ?? 0,
    renewed: billed.renewed ?? 0,
    declined: billed.declined ?? 0,
    errors: billed.errors ?? 0,
    delivered,
    commands,
    deferred,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  for (const storage of storages) await storage.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
