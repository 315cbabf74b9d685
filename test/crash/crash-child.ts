/**
 * One incarnation of the billing process that the crash tests kill: opens the shared database,
 * prints `ready`, bills everything due up to `until` and delivers the webhooks, then prints a JSON
 * summary and exits. It keeps nothing of its own: a restart starts from what the database holds.
 *
 * The test bundles this file with esbuild and runs it as `node crash-child.mjs '<json args>'`.
 */
import { createBillingEngine, ManualClock, type Storage } from 'billing-engine';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import pg from 'pg';
import { createStripeGateway } from '../../gateways/stripe/index.js';
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
};

/** What a finished incarnation prints. */
export interface CrashChildSummary {
  readonly processed: number;
  readonly renewed: number;
  readonly declined: number;
  readonly errors: number;
  readonly delivered: number;
}

function open(args: CrashChildArgs): Storage {
  if (args.dialect === 'sqlite') return createSqliteStorage({ database: args.file, busyTimeoutMs: 30_000 });
  const pool = new pg.Pool({ connectionString: args.url, options: `-c search_path=${args.schema}`, max: 4 });
  pool.on('error', () => {});
  return createPostgresStorage({ pool, schema: null });
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '') as CrashChildArgs;
  const storage = open(args);
  const clock = new ManualClock(args.now);
  const gateway =
    args.gateway.kind === 'remote'
      ? createRemoteGateway(args.gateway.url)
      : createStripeGateway({
          apiKey: args.gateway.apiKey,
          stripeConfig: { host: args.gateway.host, port: args.gateway.port, protocol: 'http', timeout: 120_000 },
          clock,
        });
  const engine = createBillingEngine({
    storage,
    clock,
    gateway,
    webhooks: { allowLocalReceivers: true, timeoutMs: 5_000 },
  });
  await storage.transaction((tx) => tx.sites.list());
  process.stdout.write('ready\n');
  // Several charges in flight at once (issue 18): kills land between the steps of many payments.
  const billed = await engine.runDue({ until: new Date(args.until), batchSize: 25, concurrency: 8 });
  let delivered = 0;
  for (;;) {
    const sent = await engine.deliverWebhooks();
    delivered += sent.delivered;
    if (sent.processed === 0) break;
  }
  const summary: CrashChildSummary = {
    processed: billed.processed,
    renewed: billed.renewed,
    declined: billed.declined,
    errors: billed.errors,
    delivered,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  await storage.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
