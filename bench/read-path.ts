/**
 * The read path of issue 18: `GET /subscriptions/{id}.json` through `createHttpApp` (rate limit
 * off) over an engine on a SQLite file, against a bare Hono handler that returns the very bytes
 * the engine returned, both served by @hono/node-server on 127.0.0.1 and loaded by autocannon in a
 * child process (`http-load-child.ts`), as section 4 does for the memory adapter. It also counts
 * the statements and transactions one GET runs, with the app's API-key cache on and off.
 *
 * Run: `npx tsx bench/read-path.ts`. `BENCH_QUICK=1` shortens the runs; `BENCH_READ_MS`,
 * `BENCH_READ_RUNS` and `BENCH_READ_CONNECTIONS` size them.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { type BillingEngine, createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { Hono } from 'hono';
import { createHttpApp } from '../examples/http/create-http-app.js';
import { type CapturedResponse, type LoadOptions, type LoadResult, requestOnce } from './http-load.js';
import { formatMs, formatRate, formatRatio, median } from './measure.js';

/** Issue 18's target: the engine's GET at no less than this share of the bare handler's req/s. */
export const READ_PATH_TARGET_SHARE = 0.5;

/** What issue 18 measured before this work: one GET of a subscription on SQLite. */
const BEFORE = { transactions: 4, statements: 20 };

const quick = process.env.BENCH_QUICK === '1';
const RUN_MS = Number(process.env.BENCH_READ_MS ?? (quick ? 1000 : 3000));
const RUNS = Number(process.env.BENCH_READ_RUNS ?? (quick ? 1 : 3));
const WARM_UP_MS = quick ? 300 : 1000;
const CONNECTIONS = Number(process.env.BENCH_READ_CONNECTIONS ?? 10);
const MAX_REQUESTS_PER_RUN = 1_000_000;

interface RunningServer {
  readonly origin: string;
  close(): Promise<void>;
}

/** Counts what the storage runs: every statement, and the transactions by their `begin`. */
class StatementCounter {
  statements = 0;
  transactions = 0;
  readonly texts: string[] = [];
  recording = false;
  readonly trace = (sql: string) => {
    if (!this.recording) return;
    this.statements += 1;
    if (/^\s*begin\b/i.test(sql)) this.transactions += 1;
    this.texts.push(sql.replace(/\s+/g, ' ').slice(0, 110));
  };
  async during<T>(
    work: () => Promise<T>,
  ): Promise<{ value: T; statements: number; transactions: number; texts: string[] }> {
    this.statements = 0;
    this.transactions = 0;
    this.texts.length = 0;
    this.recording = true;
    try {
      const value = await work();
      return { value, statements: this.statements, transactions: this.transactions, texts: [...this.texts] };
    } finally {
      this.recording = false;
    }
  }
}

async function seed(engine: BillingEngine): Promise<{ apiKey: string; subscriptionId: number }> {
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
  return { apiKey, subscriptionId: subscription.id };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'billing-read-path-'));
  const counter = new StatementCounter();
  const storage = createSqliteStorage({ database: join(dir, 'bench.sqlite'), trace: counter.trace });
  const engine = createBillingEngine({
    storage,
    clock: new ManualClock('2026-01-15T12:00:00Z'),
    gateway: createTestGateway(),
  });
  const servers: RunningServer[] = [];
  const loader = startLoader();
  try {
    const { apiKey, subscriptionId } = await seed(engine);
    const headers = {
      host: 'bench.localhost',
      authorization: `Basic ${Buffer.from(`${apiKey}:x`).toString('base64')}`,
      accept: 'application/json',
    };
    const path = `/subscriptions/${subscriptionId}.json`;

    // What one GET runs, in-process (no server): with the key checked on every request, and with
    // the app's key cache warm.
    const counts: string[][] = [];
    let perRequest: { statements: number; transactions: number; texts: string[] } | undefined;
    for (const [label, ttl] of [
      ['key checked every request (apiKeyCacheTtlMs: 0)', 0],
      ['key cache warm (default TTL)', undefined],
    ] as const) {
      const app = createHttpApp({ engine, rateLimit: false, ...(ttl === undefined ? {} : { apiKeyCacheTtlMs: ttl }) });
      const get = () => app.request(`http://bench.localhost${path}`, { headers });
      const first = await get();
      if (first.status !== 200) throw new Error(`The engine answered ${first.status}: ${await first.text()}`);
      const measured = await counter.during(async () => (await get()).status);
      counts.push([label, String(measured.transactions), String(measured.statements)]);
      perRequest ??= measured;
    }

    const engineServer = await listen(createHttpApp({ engine, rateLimit: false }).fetch);
    servers.push(engineServer);
    const captured: CapturedResponse = await requestOnce(`${engineServer.origin}${path}`, 'GET', headers);
    if (captured.status !== 200) throw new Error(`The engine answered ${captured.status} over HTTP.`);
    // The bare handler: same framework, same server adapter, same route, same bytes; no engine.
    const bare = new Hono();
    bare.get(
      '/subscriptions/:id{[^/]+\\.json}',
      () => new Response(captured.body, { status: captured.status, headers: { 'content-type': captured.contentType } }),
    );
    const bareServer = await listen(bare.fetch);
    servers.push(bareServer);

    const measure = (origin: string, ms: number) =>
      loader.run({
        url: `${origin}${path}`,
        method: 'GET',
        headers,
        connections: CONNECTIONS,
        durationMs: ms,
        maxRequests: MAX_REQUESTS_PER_RUN,
      });
    await measure(engineServer.origin, WARM_UP_MS);
    await measure(bareServer.origin, WARM_UP_MS);
    const engineRuns: LoadResult[] = [];
    const bareRuns: LoadResult[] = [];
    for (let i = 0; i < RUNS; i++) {
      engineRuns.push(await measure(engineServer.origin, RUN_MS));
      bareRuns.push(await measure(bareServer.origin, RUN_MS));
    }
    const engineRate = median(engineRuns.map((r) => r.requestsPerSecond));
    const bareRate = median(bareRuns.map((r) => r.requestsPerSecond));
    const share = engineRate / bareRate;

    const lines: string[] = [];
    lines.push('## Read path (issue 18): GET /subscriptions/{id}.json on SQLite', '');
    lines.push(
      `Engine: createHttpApp (rate limit off, default API-key cache) over a SQLite file (WAL; read-only ` +
        `transactions on read connections); bare: a Hono app returning the engine's captured ${captured.body.length} B. ` +
        `Both on @hono/node-server at 127.0.0.1; autocannon in a child process, ${CONNECTIONS} keep-alive connections, ` +
        `${RUNS} alternating run(s) of ${RUN_MS} ms after ${WARM_UP_MS} ms warm-up. Median req/s.`,
      '',
    );
    lines.push(
      '| server | req/s | p50 | p99 | requests | failures | engine/bare |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const [who, runs, rate] of [
      ['engine', engineRuns, engineRate],
      ['bare Hono', bareRuns, bareRate],
    ] as const) {
      const failed = runs.reduce((sum, r) => sum + r.failures, 0);
      lines.push(
        `| ${who} | ${formatRate(rate)} | ${formatMs(median(runs.map((r) => r.p50Ms)))} | ${formatMs(
          median(runs.map((r) => r.p99Ms)),
        )} | ${runs.reduce((sum, r) => sum + r.requests, 0).toLocaleString('en-US')} | ${
          failed === 0 ? '0' : `${failed} (${runs.find((r) => r.firstFailure)?.firstFailure ?? ''})`
        } | ${who === 'engine' ? formatRatio(share) : '1.00x'} |`,
      );
    }
    lines.push('', '| one GET | transactions | statements |', '| --- | ---: | ---: |');
    lines.push(`| before (issue 18's measurement) | ${BEFORE.transactions} | ${BEFORE.statements} |`);
    for (const row of counts) lines.push(`| ${row.join(' | ')} |`);
    if (process.env.BENCH_READ_SHOW_SQL === '1' && perRequest !== undefined) {
      lines.push('', 'Statements of one GET (key checked every request):', ...perRequest.texts.map((t) => `    ${t}`));
    }
    lines.push(
      '',
      `- ratio engine/bare GET read on SQLite: ${formatRatio(share)} (throughput; share of the bare handler's req/s)`,
      `- target issue 18: GET at >= ${formatRatio(READ_PATH_TARGET_SHARE)} of bare Hono on SQLite: ${
        share >= READ_PATH_TARGET_SHARE ? 'MET' : 'MISSED'
      } (${(share * 100).toFixed(0)}% of bare)`,
    );
    console.log(lines.join('\n'));
  } finally {
    loader.close();
    for (const server of servers) await server.close();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<RunningServer> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      resolve({
        origin: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            if ('closeAllConnections' in server) server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** The load generator's child process (the same one section 4 uses), one load at a time. */
function startLoader(): { run(options: LoadOptions): Promise<LoadResult>; close(): void } {
  const child = fork(fileURLToPath(new URL('./http-load-child.ts', import.meta.url)), [], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return {
    run(options) {
      return new Promise((resolve, reject) => {
        const onExit = (code: number | null) => reject(new Error(`The load generator exited (${code}).`));
        child.once('exit', onExit);
        child.once('message', (message: { ok: true; result: LoadResult } | { ok: false; error: string }) => {
          child.off('exit', onExit);
          if (message.ok) resolve(message.result);
          else reject(new Error(message.error));
        });
        child.send(options);
      });
    },
    close() {
      if (child.connected) child.disconnect();
    },
  };
}

await main();
