/**
 * Serves the HTTP example on 127.0.0.1 over an in-memory engine with one demo site, `acme`:
 *
 *   npx tsx examples/http/server.ts            # PORT (default 3000), BILLING_COMPAT=spec|chargify
 *   curl -u "$KEY:X" -H 'Host: acme.localhost' http://127.0.0.1:3000/product_families.json
 *
 * Billing-portal links are signed for `{site}.{BILLING_PUBLIC_BASE_DOMAIN}` (default
 * `http://localhost:{PORT}`, where this example's sites are), never for the request's Host.
 *
 * The API key is printed once at start; the data lives only as long as the process.
 */
import { serve } from '@hono/node-server';
import { createBillingEngine } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { createHttpApp } from './create-http-app.js';

const port = Number(process.env.PORT ?? 3000);
const compat = process.env.BILLING_COMPAT === 'chargify' ? 'chargify' : 'spec';

const engine = createBillingEngine({ storage: createMemoryStorage() });
await engine.migrate();
const { apiKey } = await engine.sites.create({
  subdomain: 'acme',
  name: 'Acme',
  currency: 'USD',
  timeZone: 'America/New_York',
});

const baseDomain = process.env.BILLING_PUBLIC_BASE_DOMAIN ?? `http://localhost:${port}`;
const app = createHttpApp({ engine, compat, portalLinks: { baseDomain } });
const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => {
  console.log(`billing-engine HTTP example on http://127.0.0.1:${info.port} (compat ${compat})`);
  console.log(`site acme: send Host: acme.localhost and Basic auth "${apiKey}:X"`);
});

// Close the listener and the storage on Ctrl-C so the process exits cleanly.
process.once('SIGINT', () => {
  server.close(() => {
    void engine.close();
  });
});
