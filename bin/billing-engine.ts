#!/usr/bin/env node
/**
 * The admin CLI: `billing-engine <command>` (from a checkout, `npm run cli -- <command>`).
 *
 *   migrate --db URL
 *   site create --db URL --subdomain S --currency C [--time-zone Z] [--live] [--json]
 *   serve --db URL [--port P]
 *
 * `--db` takes a SQLite file path (default ./data/billing.sqlite) or a postgres:// URL; the
 * environment variable DATABASE_URL is used when it is not given.
 */
import { serve } from '@hono/node-server';
import { BillingError, createBillingEngine } from 'billing-engine';
import { Command, InvalidArgumentError } from 'commander';
import { createHttpApp } from '../examples/http/create-http-app.js';
import { createDemoSite, demoInstructions } from './demo-site.js';
import { DEFAULT_DATABASE, openStorage } from './storage-from-url.js';

const program = new Command()
  .name('billing-engine')
  .description('Admin commands of the billing engine: schema, sites, and the HTTP server.')
  .showHelpAfterError();

const dbOption = [
  '--db <url>',
  'SQLite file path or postgres:// URL (default: $DATABASE_URL or ./data/billing.sqlite)',
] as const;
const database = (db: string | undefined) => db ?? process.env.DATABASE_URL ?? DEFAULT_DATABASE;

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('must be a port number (0-65535).');
  return n;
}

program
  .command('migrate')
  .description('Create or upgrade the schema (safe to run on an up-to-date database).')
  .option(...dbOption)
  .action(async (options: { db?: string }) => {
    const { storage, describe } = openStorage(database(options.db));
    try {
      await storage.migrate();
      console.log(`migrated ${describe}`);
    } finally {
      await storage.close();
    }
  });

program
  .command('site')
  .description('Site administration.')
  .command('create')
  .description('Create a site (test mode unless --live) and print its credentials once.')
  .option(...dbOption)
  .requiredOption('--subdomain <subdomain>', 'the site subdomain (a DNS label)')
  .requiredOption('--currency <code>', 'ISO 4217 currency, e.g. USD')
  .option('--time-zone <zone>', 'IANA time zone', 'UTC')
  .option('--name <name>', 'display name')
  .option('--live', 'create the site in live mode', false)
  .option('--json', 'print one JSON object', false)
  .action(
    async (options: {
      db?: string;
      subdomain: string;
      currency: string;
      timeZone: string;
      name?: string;
      live: boolean;
      json: boolean;
    }) => {
      const { storage } = openStorage(database(options.db));
      const engine = createBillingEngine({ storage });
      try {
        await engine.migrate();
        const created = await engine.sites.create({
          subdomain: options.subdomain,
          currency: options.currency,
          timeZone: options.timeZone,
          mode: options.live ? 'live' : 'test',
          ...(options.name === undefined ? {} : { name: options.name }),
        });
        const out = {
          subdomain: created.site.subdomain,
          mode: created.site.mode,
          api_key: created.apiKey,
          shared_key: created.sharedKey,
          direct: {
            api_id: created.direct.apiId,
            api_secret: created.direct.apiSecret,
            api_password: created.direct.apiPassword,
          },
        };
        if (options.json) console.log(JSON.stringify(out));
        else {
          console.log(`site ${out.subdomain} (${out.mode}) created; credentials are shown once:`);
          console.log(`  api key:         ${out.api_key}\n  shared key:      ${out.shared_key}`);
          console.log(
            `  direct api_id:   ${out.direct.api_id}\n  direct secret:   ${out.direct.api_secret}\n  direct password: ${out.direct.api_password}`,
          );
        }
      } finally {
        await engine.close();
      }
    },
  );

program
  .command('serve')
  .description('Serve the Chargify-compatible HTTP API; runs due work and webhook delivery in the background.')
  .option(...dbOption)
  .option('--port <port>', 'port to listen on (default: $PORT or 3000)', port)
  .option('--compat <mode>', "output spellings: 'spec' or 'chargify' (default: $BILLING_COMPAT or spec)")
  .action(async (options: { db?: string; port?: number; compat?: string }) => {
    const { storage, describe } = openStorage(database(options.db));
    // Loopback receivers on any port only when asked, for local development (never for live sites).
    const engine = createBillingEngine({
      storage,
      webhooks: { allowLocalReceivers: process.env.BILLING_ALLOW_LOCAL_WEBHOOKS === '1' },
    });
    await engine.migrate();
    const listenPort = options.port ?? (process.env.PORT ? port(process.env.PORT) : 3000);
    const compat = (options.compat ?? process.env.BILLING_COMPAT) === 'chargify' ? 'chargify' : 'spec';
    const demo = (await engine.sites.list()).length === 0 ? await createDemoSite(engine) : undefined;
    const app = createHttpApp({ engine, compat });
    const server = serve({ fetch: app.fetch, port: listenPort, hostname: '127.0.0.1' }, (info) => {
      console.log(`billing-engine on http://127.0.0.1:${info.port} (${describe}, compat ${compat})`);
      if (demo) console.log(demoInstructions(demo, info.port));
    });
    // Due work (renewals, retries, notices) runs every few seconds; one run at a time.
    const everyMs = Number(process.env.BILLING_WORK_INTERVAL_MS ?? 5000);
    let running: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      running = running
        .then(() => engine.runDue())
        .then(() => engine.deliverWebhooks())
        .catch((error: unknown) => console.error('due work failed:', error));
    }, everyMs);
    const stop = () => {
      clearInterval(timer);
      server.close(() => {
        void running.finally(() => engine.close());
      });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof BillingError ? `error: ${error.message}` : error);
  process.exitCode = 1;
});
