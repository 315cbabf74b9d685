#!/usr/bin/env node
/**
 * The admin CLI: `billing-engine <command>` (from a checkout, `npm run cli -- <command>`).
 *
 *   migrate --db URL
 *   site create --db URL --subdomain S --currency C [--time-zone Z] [--live] [--json]
 *   site list|show <subdomain>|rotate-shared-key <subdomain>|rotate-direct <subdomain> --db URL [--json]
 *   key issue <subdomain> [--name N] | key list <subdomain> | key revoke <subdomain> <keyId>  (--db URL)
 *   serve --db URL [--port P] [--host ADDRESS] [--batch-size N]   (also /healthz, /readyz, /metrics)
 *   run-due --db URL [--until INSTANT] [--workers N] [--progress auto|bar|none]
 *   deliver-webhooks --db URL
 *   worker --db URL [--interval MS] [--batch-size N] [--metrics-port P]
 *   simulate [--db URL] [--subscriptions N] [--months N]
 *
 * `--db` takes a SQLite file path (default ./data/billing.sqlite) or a postgres:// URL; the
 * environment variable DATABASE_URL is used when it is not given. Every setting is read and
 * validated in ./config.ts (README.md, "Configuration"); storage drivers load only when needed.
 */
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { serve } from '@hono/node-server';
import {
  addRunDueSummaries,
  type BillingEngine,
  BillingError,
  createBillingEngine,
  NO_DUE_WORK,
  type RunDueSummary,
  type SiteRecord,
} from 'billing-engine';
import { Command, InvalidArgumentError } from 'commander';
import { createHttpApp } from '../examples/http/create-http-app.js';
import { createOpsApp, type MetricsAccess } from '../examples/http/ops/http-ops.js';
import { createLogger } from '../examples/http/ops/logger.js';
import { createOpsMetrics } from '../examples/http/ops/metrics.js';
import { exitGracefullyOnSignals } from '../examples/http/ops/shutdown.js';
import { startWorkLoop, type WorkLoop } from '../examples/http/ops/work-loop.js';
import { cliEngine } from './cli-engine.js';
import { type Config, ConfigError, parseUntil, readConfig } from './config.js';
import { createDemoSite, demoInstructions } from './demo-site.js';
import { ProgressBar, sumCounts } from './progress-bar.js';
import { formatSimulationTable, renderSimulationHtml, simulate } from './simulate.js';
import { MissingDriverError, openStorage } from './storage-from-url.js';

// The package's own package.json, by name: the same from bin/ in a checkout and dist/bin/ installed.
const { version } = createRequire(import.meta.url)('billing-engine/package.json') as { version: string };

const program = new Command()
  .name('billing-engine')
  .description('Admin commands of the billing engine: schema, sites, and the HTTP server.')
  .version(version, '-V, --version', 'print the version of billing-engine')
  .showHelpAfterError();

const dbOption = [
  '--db <url>',
  'SQLite file path or postgres:// URL (default: $DATABASE_URL or ./data/billing.sqlite)',
] as const;
const database = (db: string | undefined) =>
  readConfig(['database'], { ...(db === undefined ? {} : { database: db }) }).database;

function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number of at least 0.');
  return n;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of at least 1.');
  return n;
}

type ProgressMode = 'auto' | 'bar' | 'none';

function progressMode(value: string): ProgressMode {
  if (value === 'auto' || value === 'bar' || value === 'none') return value;
  throw new InvalidArgumentError("must be 'auto', 'bar' or 'none'.");
}

program
  .command('migrate')
  .description('Create or upgrade the schema (safe to run on an up-to-date database).')
  .option(...dbOption)
  .action(async (options: { db?: string }) => {
    const { storage, describe } = await openStorage(database(options.db));
    try {
      await storage.migrate();
      console.log(`migrated ${describe}`);
    } finally {
      await storage.close();
    }
  });

const siteCommand = program.command('site').description('Site administration: create, list, show, rotate secrets.');

siteCommand
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
      const { storage } = await openStorage(database(options.db));
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

/** Opens the database, migrated, for one admin command, and closes it afterwards. */
async function withEngine<T>(db: string | undefined, run: (engine: BillingEngine) => Promise<T>): Promise<T> {
  const { storage } = await openStorage(database(db));
  const engine = createBillingEngine({ storage });
  try {
    await engine.migrate();
    return await run(engine);
  } finally {
    await engine.close();
  }
}

/** A site as the CLI shows it: never its shared key. */
function siteSummary(site: SiteRecord) {
  return {
    id: site.id,
    subdomain: site.subdomain,
    name: site.name,
    currency: site.currency,
    time_zone: site.timeZone,
    mode: site.mode,
    created_at: site.createdAt.toISOString(),
  };
}

/** Rows as aligned columns under a header. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function keyId(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError('must be a key id (a whole number) as shown by `key list`.');
  return n;
}

siteCommand
  .command('list')
  .description('List the sites: subdomain, currency, time zone, mode.')
  .option(...dbOption)
  .option('--json', 'print one JSON array', false)
  .action(async (options: { db?: string; json: boolean }) => {
    const sites = await withEngine(options.db, (engine) => engine.sites.list());
    if (options.json) console.log(JSON.stringify(sites.map(siteSummary)));
    else if (sites.length === 0) console.log('no sites; create one with `site create`');
    else
      console.log(
        table(
          ['SUBDOMAIN', 'CURRENCY', 'TIME ZONE', 'MODE'],
          sites.map((s) => [s.subdomain, s.currency, s.timeZone, s.mode]),
        ),
      );
  });

siteCommand
  .command('show')
  .description('Show one site and its API keys (never a secret).')
  .argument('<subdomain>', 'the site subdomain')
  .option(...dbOption)
  .option('--json', 'print one JSON object', false)
  .action(async (subdomain: string, options: { db?: string; json: boolean }) => {
    const { site, keys } = await withEngine(options.db, async (engine) => ({
      site: await engine.sites.get(subdomain),
      keys: await engine.sites.listApiKeys(subdomain),
    }));
    const out = { ...siteSummary(site), api_keys: keys.length };
    if (options.json) console.log(JSON.stringify(out));
    else {
      console.log(
        [
          `subdomain:  ${out.subdomain}`,
          `name:       ${out.name}`,
          `currency:   ${out.currency}`,
          `time zone:  ${out.time_zone}`,
          `mode:       ${out.mode}`,
          `created:    ${out.created_at}`,
          `api keys:   ${out.api_keys} active (see \`key list ${out.subdomain}\`)`,
        ].join('\n'),
      );
    }
  });

siteCommand
  .command('rotate-shared-key')
  .description('Replace the shared key (webhook signatures, hosted-page tokens) and print the new one once.')
  .argument('<subdomain>', 'the site subdomain')
  .option(...dbOption)
  .option('--json', 'print one JSON object', false)
  .action(async (subdomain: string, options: { db?: string; json: boolean }) => {
    const sharedKey = await withEngine(options.db, (engine) => engine.sites.rotateSharedKey(subdomain));
    if (options.json) console.log(JSON.stringify({ subdomain, shared_key: sharedKey }));
    else {
      console.log(`shared key of ${subdomain} replaced; the new key is shown once (the old one no longer signs):`);
      console.log(`  shared key: ${sharedKey}`);
    }
  });

siteCommand
  .command('rotate-direct')
  .description('Revoke the direct-post credentials and print new ones once.')
  .argument('<subdomain>', 'the site subdomain')
  .option(...dbOption)
  .option('--json', 'print one JSON object', false)
  .action(async (subdomain: string, options: { db?: string; json: boolean }) => {
    const direct = await withEngine(options.db, (engine) => engine.sites.rotateDirectCredentials(subdomain));
    const out = { api_id: direct.apiId, api_secret: direct.apiSecret, api_password: direct.apiPassword };
    if (options.json) console.log(JSON.stringify({ subdomain, direct: out }));
    else {
      console.log(`direct credentials of ${subdomain} replaced; the new ones are shown once:`);
      console.log(
        `  direct api_id:   ${out.api_id}\n  direct secret:   ${out.api_secret}\n  direct password: ${out.api_password}`,
      );
    }
  });

const keyCommand = program.command('key').description("A site's API keys: issue, list, revoke.");

keyCommand
  .command('issue')
  .description('Issue a new API key for a site and print it once (only its hash is kept).')
  .argument('<subdomain>', 'the site subdomain')
  .option(...dbOption)
  .option('--name <name>', 'a name to tell the key apart in `key list`', 'api key')
  .option('--json', 'print one JSON object', false)
  .action(async (subdomain: string, options: { db?: string; name: string; json: boolean }) => {
    const issued = await withEngine(options.db, (engine) => engine.sites.createApiKey(subdomain, options.name));
    if (options.json)
      console.log(
        JSON.stringify({ subdomain, id: issued.id, name: options.name, prefix: issued.prefix, api_key: issued.key }),
      );
    else {
      console.log(`api key ${issued.id} (${options.name}) issued for ${subdomain}; it is shown once:`);
      console.log(`  api key: ${issued.key}`);
    }
  });

keyCommand
  .command('list')
  .description("List a site's active API keys: id, name, prefix, created (never the key).")
  .argument('<subdomain>', 'the site subdomain')
  .option(...dbOption)
  .option('--json', 'print one JSON array', false)
  .action(async (subdomain: string, options: { db?: string; json: boolean }) => {
    const keys = await withEngine(options.db, (engine) => engine.sites.listApiKeys(subdomain));
    const rows = keys.map((k) => ({ id: k.id, name: k.name, prefix: k.prefix, created_at: k.createdAt.toISOString() }));
    if (options.json) console.log(JSON.stringify(rows));
    else if (rows.length === 0)
      console.log(`${subdomain} has no active API keys; issue one with \`key issue ${subdomain}\``);
    else
      console.log(
        table(
          ['ID', 'NAME', 'PREFIX', 'CREATED'],
          rows.map((r) => [String(r.id), r.name, r.prefix, r.created_at]),
        ),
      );
  });

keyCommand
  .command('revoke')
  .description("Revoke one of a site's API keys by its id (from `key list`); it stops working at once.")
  .argument('<subdomain>', 'the site subdomain')
  .argument('<keyId>', 'the key id, as `key list` shows it', keyId)
  .option(...dbOption)
  .action(async (subdomain: string, id: number, options: { db?: string }) => {
    await withEngine(options.db, async (engine) => {
      // The site first, so that an unknown site is named as such rather than as an unknown key.
      await engine.sites.get(subdomain);
      try {
        await engine.sites.revokeApiKey(subdomain, id);
      } catch (error) {
        if (error instanceof BillingError && error.code === 'not_found')
          throw new ConfigError(
            `site '${subdomain}' has no active API key ${id}; \`key list ${subdomain}\` shows its keys.`,
          );
        throw error;
      }
    });
    console.log(`api key ${id} of ${subdomain} revoked`);
  });

program
  .command('serve')
  .description(
    'Serve the Chargify-compatible HTTP API with /healthz, /readyz and /metrics; runs due work and webhook delivery in the background; on SIGTERM or SIGINT, finish in-flight requests and work and exit.',
  )
  .option(...dbOption)
  .option('--port <port>', 'port to listen on (default: $PORT or 3000)')
  .option('--host <address>', 'address to listen on, e.g. 0.0.0.0 in a container (default: $BILLING_HOST or 127.0.0.1)')
  .option('--compat <mode>', "output spellings: 'spec' or 'chargify' (default: $BILLING_COMPAT or spec)")
  .option('--interval <ms>', 'pause between rounds of due work (default: $BILLING_WORK_INTERVAL_MS or 5000)')
  .option('--batch-size <n>', 'due-work items per round (default: $BILLING_WORK_BATCH_SIZE or 100)')
  .option(
    '--public-base-domain <domain>',
    'public origin portal links are signed for, as {site}.{domain} (default: $BILLING_PUBLIC_BASE_DOMAIN or http://localhost:{port})',
  )
  .action(
    async (options: {
      db?: string;
      port?: string;
      host?: string;
      compat?: string;
      interval?: string;
      batchSize?: string;
      publicBaseDomain?: string;
    }) => {
      // Every setting is checked before anything is opened.
      const config = readConfig(
        [
          'database',
          'port',
          'host',
          'compat',
          'workIntervalMs',
          'workBatchSize',
          'allowLocalWebhooks',
          'publicBaseDomain',
          'logLevel',
          'logFormat',
          'metricsToken',
          'shutdownTimeoutMs',
        ],
        {
          ...(options.publicBaseDomain === undefined ? {} : { publicBaseDomain: options.publicBaseDomain }),
          ...(options.db === undefined ? {} : { database: options.db }),
          ...(options.port === undefined ? {} : { port: options.port }),
          ...(options.host === undefined ? {} : { host: options.host }),
          ...(options.compat === undefined ? {} : { compat: options.compat }),
          ...(options.interval === undefined ? {} : { workIntervalMs: options.interval }),
          ...(options.batchSize === undefined ? {} : { workBatchSize: options.batchSize }),
        },
      );
      const logger = createLogger({ level: config.logLevel, format: config.logFormat, base: { command: 'serve' } });
      const { storage, describe } = await openStorage(config.database);
      const metrics = createOpsMetrics({ processMetrics: true });
      // Portal links (and links in mail) are signed for the configured public origin, never for a request's Host.
      const baseDomain = config.publicBaseDomain === '' ? `http://localhost:${config.port}` : config.publicBaseDomain;
      const engine = cliEngine(storage, metrics, config.allowLocalWebhooks, { logger, baseDomain });
      await engine.migrate();
      const compat = config.compat;
      const demo = (await engine.sites.list()).length === 0 ? await createDemoSite(engine) : undefined;
      let draining = false;
      const app = createHttpApp({
        engine,
        compat,
        portalLinks: { baseDomain },
        ops: { metrics, logger, metricsAccess: metricsAccessFor(config), draining: () => draining },
      });
      let work: WorkLoop | undefined;
      const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
        logger.info(
          { url: `http://${urlHost(config.host)}:${info.port}`, storage: describe, compat },
          `billing-engine on http://${urlHost(config.host)}:${info.port} (${describe}, compat ${compat})`,
        );
        // The demo's curl lines need an address to connect to: loopback when every address is bound.
        // They are the command's output for a person (credentials shown once), not a log line.
        const reachable = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : urlHost(config.host);
        if (demo) console.log(demoInstructions(demo, info.port, reachable));
        // Due work (renewals, retries, notices) and webhook delivery run in rounds in the background.
        work = startWorkLoop(engine, {
          intervalMs: config.workIntervalMs,
          batchSize: config.workBatchSize,
          metrics,
          logger,
          pauseFirst: true,
        });
      }) as Server;
      const removeHandlers = exitGracefullyOnSignals(
        async () => {
          // Stop accepting, let in-flight requests and the current round finish, then close storage.
          await Promise.all([closeServer(server), work?.stop()]);
          await engine.close();
        },
        {
          logger,
          timeoutMs: config.shutdownTimeoutMs,
          onSignal: () => {
            draining = true;
          },
        },
      );
      // Listening fails after serve() returns: a port in use or not ours to take is one line and exit 1.
      server.once('error', (error: NodeJS.ErrnoException) => {
        removeHandlers();
        const where = `port ${config.port} on ${config.host}`;
        const message =
          error.code === 'EADDRINUSE'
            ? `${where} is already in use; stop the process using it or choose another port with --port or PORT.`
            : error.code === 'EACCES'
              ? `no permission to listen on ${where}; choose a port above 1023 with --port or PORT.`
              : error.code === 'EADDRNOTAVAIL'
                ? `${config.host} is not an address of this machine; choose another with --host or BILLING_HOST (0.0.0.0 for every address).`
                : `cannot listen on ${where}: ${error.message}`;
        fail(message);
        void engine.close();
      });
    },
  );

program
  .command('run-due')
  .description('Process due work (renewals, retries, notices) up to now or --until, then exit.')
  .option(...dbOption)
  .option('--until <instant>', 'process work due up to this ISO instant (default: now)')
  .option('--workers <n>', 'concurrent workers (each claims its own batches)', positiveInt, 1)
  .option(
    '--progress <mode>',
    "'auto' (a progress bar when stdout is a terminal), 'bar' (always) or 'none'",
    progressMode,
    'auto' as ProgressMode,
  )
  .action(async (options: { db?: string; until?: string; workers: number; progress: ProgressMode }) => {
    const until = options.until === undefined ? undefined : parseUntil(options.until);
    const { storage } = await openStorage(database(options.db));
    const engine = createBillingEngine({ storage });
    try {
      await engine.migrate();
      const started = Date.now();
      const showBar = options.progress === 'bar' || (options.progress === 'auto' && process.stdout.isTTY === true);
      // The total is what is due when the run starts; work the run schedules as it goes (retries,
      // next periods due before --until) can take it past that, and the bar then grows its total.
      const bar = showBar
        ? new ProgressBar((text) => process.stdout.write(text), {
            columns: () => process.stdout.columns,
            total: await engine.countDue(until === undefined ? {} : { until }),
          })
        : undefined;
      // Each worker's latest counts; the bar shows their sum. On SQLite a run never yields to
      // timers, so the bar is redrawn from the callback; the timer keeps time and rate moving
      // while a Postgres run waits.
      const latest: RunDueSummary[] = Array.from({ length: options.workers }, () => NO_DUE_WORK);
      const ticker = bar === undefined ? undefined : setInterval(() => bar.tick(), 250);
      let runs: RunDueSummary[];
      try {
        runs = await Promise.all(
          latest.map((_, w) =>
            engine.runDue({
              ...(until === undefined ? {} : { until }),
              ...(bar === undefined
                ? {}
                : {
                    onProgress: (soFar: RunDueSummary) => {
                      latest[w] = soFar;
                      bar.update(sumCounts(latest));
                    },
                  }),
            }),
          ),
        );
      } catch (error) {
        bar?.stop();
        throw error;
      } finally {
        clearInterval(ticker);
      }
      const total = runs.reduce(addRunDueSummaries, NO_DUE_WORK);
      bar?.finish(total);
      const seconds = (Date.now() - started) / 1000;
      console.log(
        `processed ${total.processed}, renewed ${total.renewed}, recovered ${total.recovered}, declined ${total.declined}, failed ${total.failed}, errors ${total.errors} in ${seconds.toFixed(1)} s (${(total.processed / Math.max(seconds, 0.001)).toFixed(0)}/s)`,
      );
      if (total.errors > 0) process.exitCode = 2;
    } finally {
      await engine.close();
    }
  });

program
  .command('deliver-webhooks')
  .description('Send the webhooks that are due, then exit.')
  .option(...dbOption)
  .action(async (options: { db?: string }) => {
    const config = readConfig(['database', 'allowLocalWebhooks'], {
      ...(options.db === undefined ? {} : { database: options.db }),
    });
    const { storage } = await openStorage(config.database);
    const engine = createBillingEngine({
      storage,
      webhooks: { allowLocalReceivers: config.allowLocalWebhooks },
    });
    try {
      await engine.migrate();
      const done = await engine.deliverWebhooks();
      console.log(
        `processed ${done.processed}, delivered ${done.delivered}, retried ${done.retried}, gave up ${done.gaveUp}, errors ${done.errors}`,
      );
    } finally {
      await engine.close();
    }
  });

program
  .command('worker')
  .description(
    'Run due work and webhook delivery continuously; on SIGTERM or SIGINT, finish the current batch and exit.',
  )
  .option(...dbOption)
  .option('--interval <ms>', 'pause between rounds when idle (default: $BILLING_WORK_INTERVAL_MS or 5000)')
  .option('--batch-size <n>', 'due-work items per round (default: $BILLING_WORK_BATCH_SIZE or 100)')
  .option(
    '--metrics-port <port>',
    'serve /healthz, /readyz and /metrics on this port, at $BILLING_HOST (default: $BILLING_METRICS_PORT, else none)',
  )
  .action(async (options: { db?: string; interval?: string; batchSize?: string; metricsPort?: string }) => {
    const config = readConfig(
      [
        'database',
        'host',
        'workIntervalMs',
        'workBatchSize',
        'allowLocalWebhooks',
        'publicBaseDomain',
        'logLevel',
        'logFormat',
        'metricsToken',
        'metricsPort',
        'shutdownTimeoutMs',
      ],
      {
        ...(options.db === undefined ? {} : { database: options.db }),
        ...(options.interval === undefined ? {} : { workIntervalMs: options.interval }),
        ...(options.batchSize === undefined ? {} : { workBatchSize: options.batchSize }),
        ...(options.metricsPort === undefined ? {} : { metricsPort: options.metricsPort }),
      },
    );
    const logger = createLogger({ level: config.logLevel, format: config.logFormat, base: { command: 'worker' } });
    const { storage, describe } = await openStorage(config.database);
    const metrics = createOpsMetrics({ processMetrics: true });
    // Mail the worker delivers links to the public origin (BILLING_PUBLIC_BASE_DOMAIN), else to
    // the server's default address.
    const baseDomain = config.publicBaseDomain === '' ? 'http://localhost:3000' : config.publicBaseDomain;
    const engine = cliEngine(storage, metrics, config.allowLocalWebhooks, { logger, baseDomain });
    await engine.migrate();
    let draining = false;
    let opsServer: Server | undefined;
    if (config.metricsPort !== undefined) {
      const ops = createOpsApp(engine, {
        metrics,
        logger,
        metricsAccess: metricsAccessFor(config),
        draining: () => draining,
      });
      opsServer = serve({ fetch: ops.fetch, port: config.metricsPort, hostname: config.host }, (info) => {
        logger.info(
          { url: `http://${urlHost(config.host)}:${info.port}` },
          `worker metrics on http://${urlHost(config.host)}:${info.port}/metrics`,
        );
      }) as Server;
      opsServer.once('error', (error: NodeJS.ErrnoException) => {
        fail(`cannot serve worker metrics on port ${config.metricsPort} on ${config.host}: ${error.message}`);
        process.exit(1);
      });
    }
    // The handlers go in before the first line is printed: a signal that arrives before Node has a
    // handler for it kills the process at once, and whoever reads that line may signal at once.
    let work: WorkLoop | undefined;
    exitGracefullyOnSignals(
      async () => {
        await work?.stop();
        if (opsServer !== undefined) await closeServer(opsServer);
        await engine.close();
      },
      {
        logger,
        timeoutMs: config.shutdownTimeoutMs,
        stoppedMessage: 'worker stopped cleanly',
        onSignal: () => {
          draining = true;
        },
      },
    );
    work = startWorkLoop(engine, {
      intervalMs: config.workIntervalMs,
      batchSize: config.workBatchSize,
      metrics,
      logger,
    });
    logger.info({ storage: describe }, `worker on ${describe}`);
  });

program
  .command('simulate')
  .description(
    'Bill a generated book of subscriptions for some months on a manual clock and print a summary and a month-by-month table.',
  )
  .option('--db <url>', 'SQLite file path or postgres:// URL (default: a throw-away in-memory SQLite)')
  .option('--subscriptions <n>', 'how many subscriptions at the start', positiveInt, 200)
  .option('--months <n>', 'how many months to bill', positiveInt, 12)
  .option('--growth <n>', 'new subscriptions each later month', wholeNumber, 0)
  .option('--html <file>', 'also write the report as an HTML page with a chart')
  .action(async (options: { db?: string; subscriptions: number; months: number; growth: number; html?: string }) => {
    const { storage } = await openStorage(options.db ?? ':memory:');
    try {
      const summary = await simulate(storage, options);
      console.log(
        `${summary.subscriptions} subscriptions over ${summary.months} months: ${summary.renewals} renewals, ${summary.declines} declines, revenue ${(summary.revenueInCents / 100).toFixed(2)} USD, ${summary.churned} churned, ${summary.active} active (${summary.seconds.toFixed(1)} s)`,
      );
      console.log(`\n${formatSimulationTable(summary)}`);
      if (options.html !== undefined) {
        writeFileSync(options.html, renderSimulationHtml(summary));
        console.log(`\nwrote ${options.html}`);
      }
    } finally {
      await storage.close();
    }
  });

/** Whether an address only this machine reaches. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/**
 * Who may read /metrics: with BILLING_METRICS_TOKEN, callers that send it; without one, anyone
 * on a loopback-bound server, and no one on a server bound beyond loopback (403 saying to set it).
 */
function metricsAccessFor(config: Pick<Config, 'host' | 'metricsToken'>): MetricsAccess {
  if (config.metricsToken !== '') return { kind: 'token', token: config.metricsToken };
  if (isLoopback(config.host)) return { kind: 'open' };
  return {
    kind: 'closed',
    reason:
      'Metrics are served beyond loopback only with a token: set BILLING_METRICS_TOKEN and send it as a Bearer token.',
  };
}

/**
 * Stops accepting connections and resolves once the in-flight requests have been answered. Idle
 * keep-alive connections are closed as they go idle, so that a client holding one open cannot
 * hold the shutdown up; connections with a request in progress are left to finish.
 */
function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (!server.listening) {
      resolve();
      return;
    }
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    server.close((error) => {
      clearInterval(sweep);
      if (error) reject(error);
      else resolve();
    });
  });
}

/** An address as it goes in a URL: an IPv6 literal in brackets. */
function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** An operator error: one line on stderr and a non-zero exit, no stack trace. */
function fail(message: string): void {
  console.error(`error: ${message}`);
  process.exitCode = 1;
}

program.parseAsync().catch((error: unknown) => {
  if (error instanceof BillingError || error instanceof ConfigError || error instanceof MissingDriverError) {
    fail(error.message);
  } else {
    console.error(error);
    process.exitCode = 1;
  }
});
