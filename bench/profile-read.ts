/**
 * Where one `GET /subscriptions/{id}.json` spends its time (issue 18): the same app and SQLite file
 * as `read-path.ts`, called in-process with `app.request` (no sockets), N times in a row. Not part
 * of `npm run bench`; run it by hand, with `node --cpu-prof --import tsx` for a profile:
 *
 *   npx tsx bench/profile-read.ts [count] [sections]
 *
 * `sections` (default all) is a comma-separated subset of `get,bare,nothing,unknown,site`, so that a
 * profile can hold one kind of request alone (e.g. `nothing` for the middleware's own cost).
 * `BENCH_KEY_CACHE_TTL_MS` sets the app's `apiKeyCacheTtlMs` (0: the key checked on every request);
 * `BENCH_LOG=1` gives the app the server's request log (JSON lines, written to /dev/null).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { pino } from 'pino';
import { createHttpApp } from '../examples/http/create-http-app.js';
import { createLogger } from '../examples/http/ops/logger.js';

const count = Number(process.argv[2] ?? 5000);
const sections = new Set((process.argv[3] ?? 'get,bare,nothing,unknown,site').split(','));
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
const keyCacheTtl = process.env.BENCH_KEY_CACHE_TTL_MS;
const app = createHttpApp({
  engine,
  rateLimit: false,
  ...(keyCacheTtl === undefined ? {} : { apiKeyCacheTtlMs: Number(keyCacheTtl) }),
  ...(process.env.BENCH_LOG === '1'
    ? {
        ops: {
          logger: createLogger({ format: 'json', destination: pino.destination({ dest: '/dev/null', sync: true }) }),
        },
      }
    : {}),
});
const headers = {
  host: 'bench.localhost',
  authorization: `Basic ${Buffer.from(`${apiKey}:x`).toString('base64')}`,
  accept: 'application/json',
};
const url = `http://bench.localhost/subscriptions/${subscription.id}.json`;
for (let i = 0; i < 200; i++) await (await app.request(url, { headers })).text();
/** Per-request wall and CPU time of `count` runs of `one` (CPU time is steadier on a shared machine). */
async function timed(one: () => Promise<void>): Promise<{ ms: number; text: string }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await one();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const perRequest = (micros: number) => (micros / count).toFixed(0);
  return { ms, text: `${perRequest(ms * 1000)} µs each (cpu ${perRequest(cpu.user + cpu.system)} µs)` };
}
if (sections.has('get')) {
  const { ms, text } = await timed(async () => {
    const response = await app.request(url, { headers });
    if (response.status !== 200) throw new Error(`status ${response.status}`);
    await response.text();
  });
  console.log(`${count} GETs in ${ms.toFixed(0)} ms: ${((count * 1000) / ms).toFixed(0)}/s, ${text}`);
}
if (sections.has('bare')) {
  const plain = new (await import('hono')).Hono();
  plain.get('/subscriptions/:id{[^/]+\\.json}', (c) => c.json({ ok: true }));
  const { text } = await timed(async () => void (await (await plain.request(url, { headers })).text()));
  console.log(`bare Hono in-process: ${text}`);
}
const paths: [string, string][] = [
  ['nothing', '/nothing-here.json'],
  ['unknown', '/subscriptions/999999.json'],
  ['site', '/site.json'],
];
for (const [section, path] of paths) {
  if (!sections.has(section)) continue;
  let status = 0;
  const { text } = await timed(async () => {
    const r = await app.request(`http://bench.localhost${path}`, { headers });
    status = r.status;
    await r.text();
  });
  console.log(`${path} (${status}): ${text}`);
}
await engine.close?.();
