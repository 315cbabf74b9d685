/**
 * Serves the HTTP example on 127.0.0.1 over an in-memory engine with one demo site, `acme`:
 *
 *   npx tsx examples/http/server.ts            # PORT (default 3000), BILLING_COMPAT=spec|chargify
 *   curl -u "$KEY:X" -H 'Host: acme.localhost' http://127.0.0.1:3000/product_families.json
 *   curl http://127.0.0.1:3000/healthz          # also /readyz and /metrics
 *
 * Billing-portal links are signed for `{site}.{BILLING_PUBLIC_BASE_DOMAIN}` (default
 * `http://localhost:{PORT}`, where this example's sites are), never for the request's Host.
 * Email (sent invoices, card-update requests, portal invitations) is logged, and written under
 * BILLING_MAIL_DIR when it is set; nothing is sent.
 * One log line per request (LOG_LEVEL, default info; pretty on a terminal, JSON otherwise); the
 * gateway is counted in /metrics. On SIGTERM or Ctrl-C it stops accepting, answers the requests in
 * flight and closes the storage; a second signal exits at once.
 *
 * The API key is printed once at start; the data lives only as long as the process.
 */
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { createBillingEngine, createTestGateway, sitePortalOrigin } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { createHttpApp } from './create-http-app.js';
import { createDemoMailer } from './demo-mailer.js';
import { instrumentGateway } from './ops/instrumented-gateway.js';
import { createLogger, LOG_LEVELS, type LogLevel } from './ops/logger.js';
import { createOpsMetrics } from './ops/metrics.js';
import { exitGracefullyOnSignals } from './ops/shutdown.js';

const port = Number(process.env.PORT ?? 3000);
const compat = process.env.BILLING_COMPAT === 'chargify' ? 'chargify' : 'spec';
const level = (LOG_LEVELS as readonly string[]).includes(process.env.LOG_LEVEL ?? '')
  ? (process.env.LOG_LEVEL as LogLevel)
  : 'info';

const logger = createLogger({ level });
const metrics = createOpsMetrics({ processMetrics: true });
const baseDomain = process.env.BILLING_PUBLIC_BASE_DOMAIN ?? `http://localhost:${port}`;
const engine = createBillingEngine({
  storage: createMemoryStorage(),
  gateway: instrumentGateway(createTestGateway(), metrics),
  // Mail is logged (and written under BILLING_MAIL_DIR when set), never sent anywhere.
  mail: {
    mailer: createDemoMailer({
      logger,
      ...(process.env.BILLING_MAIL_DIR ? { directory: process.env.BILLING_MAIL_DIR } : {}),
    }),
    siteOrigin: (subdomain) => sitePortalOrigin(subdomain, baseDomain),
  },
});
await engine.migrate();
const { apiKey } = await engine.sites.create({
  subdomain: 'acme',
  name: 'Acme',
  currency: 'USD',
  timeZone: 'America/New_York',
});

let draining = false;
const app = createHttpApp({
  engine,
  compat,
  portalLinks: { baseDomain },
  ops: { metrics, logger, draining: () => draining },
});
const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => {
  console.log(`billing-engine HTTP example on http://127.0.0.1:${info.port} (compat ${compat})`);
  console.log(`site acme: send Host: acme.localhost and Basic auth "${apiKey}:X"`);
}) as Server;

// This example runs no billing worker; queued mail (invoices, card-update requests, portal
// invitations) is delivered every few seconds instead.
const mailTimer = setInterval(() => {
  engine.deliverMail().catch((error: unknown) => logger.error({ err: error }, 'mail delivery failed'));
}, 3_000);
mailTimer.unref();

exitGracefullyOnSignals(
  async () => {
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    clearInterval(mailTimer);
    await engine.close();
  },
  {
    logger,
    timeoutMs: 10_000,
    onSignal: () => {
      draining = true;
      // Keep-alive connections with no request in flight would hold the close up.
      server.closeIdleConnections();
    },
  },
);
