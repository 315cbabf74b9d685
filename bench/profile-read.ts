/**
 * Where one `GET /subscriptions/{id}.json` spends its time (issue 18): the same app and SQLite file
 * as `read-path.ts`, called in-process with `app.request` (no sockets), N times in a row. Not part
 * of `npm run bench`; run it by hand, with `node --cpu-prof --import tsx` for a profile:
 *
 *   npx tsx bench/profile-read.ts [count]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { createHttpApp } from '../examples/http/create-http-app.js';

const count = Number(process.argv[2] ?? 5000);
const storage = createSqliteStorage({ database: join(mkdtempSync(join(tmpdir(), 'profile-read-')), 'read.sqlite') });
const engine = createBillingEngine({
  storage,
  clock: new ManualClock('2026-01-15T12:00:00Z'),
  gateway: createTestGateway(),
});
await engine.migrate();
const { apiKey } = await engine.sites.create({ subdomain: 'bench', currency: 'USD' });
const site = engine.site('bench');
await site.catalog.createFamily({ name: 'Bench plans', handle: 'bench-plans' });
await site.catalog.createProduct('bench-plans', {
  name: 'Bench monthly',
  handle: 'bench-monthly',
  priceInCents: 4900,
  interval: 1,
  intervalUnit: 'month',
});
const { subscription } = await site.subscriptions.create({
  productHandle: 'bench-monthly',
  customer: { firstName: 'Bench', lastName: 'Customer', email: 'bench@example.com' },
  creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
});
const app = createHttpApp({ engine, rateLimit: false });
const headers = {
  host: 'bench.localhost',
  authorization: `Basic ${Buffer.from(`${apiKey}:x`).toString('base64')}`,
  accept: 'application/json',
};
const url = `http://bench.localhost/subscriptions/${subscription.id}.json`;
for (let i = 0; i < 200; i++) await (await app.request(url, { headers })).text();
const start = performance.now();
for (let i = 0; i < count; i++) {
  const response = await app.request(url, { headers });
  if (response.status !== 200) throw new Error(`status ${response.status}`);
  await response.text();
}
const ms = performance.now() - start;
console.log(
  `${count} GETs in ${ms.toFixed(0)} ms: ${((count * 1000) / ms).toFixed(0)}/s, ${((ms * 1000) / count).toFixed(0)} µs each`,
);
const plain = new (await import('hono')).Hono();
plain.get('/subscriptions/:id{[^/]+\\.json}', (c) => c.json({ ok: true }));
const bareStart = performance.now();
for (let i = 0; i < count; i++) await (await plain.request(url, { headers })).text();
const bareMs = performance.now() - bareStart;
console.log(`bare Hono in-process: ${((bareMs * 1000) / count).toFixed(0)} µs each`);
for (const path of ['/nothing-here.json', '/subscriptions/999999.json', '/site.json']) {
  const t0 = performance.now();
  let status = 0;
  for (let i = 0; i < count; i++) {
    const r = await app.request(`http://bench.localhost${path}`, { headers });
    status = r.status;
    await r.text();
  }
  console.log(`${path} (${status}): ${(((performance.now() - t0) * 1000) / count).toFixed(0)} µs each`);
}
await engine.close?.();
