/**
 * Section 4 (issue 11): the HTTP binding. `GET /subscriptions/{id}.json` and
 * `POST /subscriptions/{id}/charges.json` through `createHttpApp` (rate limit off) over an
 * in-memory engine, served by @hono/node-server on 127.0.0.1, against a bare Hono handler on the
 * same server stack that returns the very bytes the engine returned (status, content type, body).
 * The load comes from autocannon (`http-load.ts`) in a child process: 10 keep-alive connections, loopback only.
 */
import { fork } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { Hono } from 'hono';
import { createHttpApp } from '../examples/http/create-http-app.js';
import type { BenchContext } from './bench-context.js';
import { type CapturedResponse, type LoadOptions, type LoadResult, requestOnce } from './http-load.js';
import { formatMs, formatRate, formatRatio, median } from './measure.js';

/** Issue 11's target: reads through the engine at no less than this share of the bare handler's rate. */
export const HTTP_READ_TARGET_SHARE = 0.5;

const CONNECTIONS = 10;
const MAX_REQUESTS_PER_RUN = 500_000;

/** A running HTTP server on 127.0.0.1. */
interface RunningServer {
  readonly origin: string;
  close(): Promise<void>;
}

/** Runs section 4 and reports it. */
export async function runHttpSection(context: BenchContext): Promise<void> {
  const { report, config } = context;
  report.section('4. HTTP (issue 11)');

  const clock = new ManualClock('2026-01-15T12:00:00Z');
  const gateway = createTestGateway();
  const engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway });
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

  const engineServer = await listen(createHttpApp({ engine, rateLimit: false }).fetch);
  const headers = {
    host: 'bench.localhost',
    authorization: `Basic ${Buffer.from(`${apiKey}:x`).toString('base64')}`,
    accept: 'application/json',
  };
  const readPath = `/subscriptions/${subscription.id}.json`;
  const chargePath = `/subscriptions/${subscription.id}/charges.json`;
  const chargeBody = JSON.stringify({ charge: { amount_in_cents: 100, memo: 'Bench charge' } });
  const read = await requestOnce(`${engineServer.origin}${readPath}`, 'GET', headers);
  const charge = await requestOnce(
    `${engineServer.origin}${chargePath}`,
    'POST',
    { ...headers, 'content-type': 'application/json' },
    chargeBody,
  );
  if (read.status !== 200 || charge.status !== 201) {
    await engineServer.close();
    throw new Error(`The engine answered ${read.status} to the read and ${charge.status} to the charge.`);
  }

  // The bare handler: same framework, same server adapter, same routes, same bytes; no engine.
  const bare = new Hono();
  const replay = (captured: CapturedResponse) => () =>
    new Response(captured.body, { status: captured.status, headers: { 'content-type': captured.contentType } });
  bare.get('/subscriptions/:id{[^/]+\\.json}', replay(read));
  bare.post('/subscriptions/:id/charges.json', replay(charge));
  const bareServer = await listen(bare.fetch);

  const loader = startLoader();
  try {
    const measure = async (origin: string, method: 'GET' | 'POST', path: string, ms: number) =>
      loader.run({
        url: `${origin}${path}`,
        method,
        headers: method === 'POST' ? { ...headers, 'content-type': 'application/json' } : headers,
        ...(method === 'POST' ? { body: chargeBody } : {}),
        connections: CONNECTIONS,
        durationMs: ms,
        maxRequests: MAX_REQUESTS_PER_RUN,
      });
    const rows: string[][] = [];
    const shares = new Map<string, number>();
    for (const [label, method, path] of [
      ['GET /subscriptions/{id}.json', 'GET', readPath],
      ['POST /subscriptions/{id}/charges.json', 'POST', chargePath],
    ] as const) {
      await measure(engineServer.origin, method, path, config.warmUpMs);
      await measure(bareServer.origin, method, path, config.warmUpMs);
      const engineRuns: LoadResult[] = [];
      const bareRuns: LoadResult[] = [];
      for (let i = 0; i < config.runs; i++) {
        engineRuns.push(await measure(engineServer.origin, method, path, config.timeBoxMs));
        bareRuns.push(await measure(bareServer.origin, method, path, config.timeBoxMs));
      }
      const engineRate = median(engineRuns.map((r) => r.requestsPerSecond));
      const bareRate = median(bareRuns.map((r) => r.requestsPerSecond));
      shares.set(method, engineRate / bareRate);
      for (const [who, runs, rateOf] of [
        ['engine', engineRuns, engineRate],
        ['bare Hono', bareRuns, bareRate],
      ] as const) {
        const failed = runs.reduce((sum, r) => sum + r.failures, 0);
        rows.push([
          `${label} ${who}`,
          formatRate(rateOf),
          formatMs(median(runs.map((r) => r.p50Ms))),
          formatMs(median(runs.map((r) => r.p99Ms))),
          runs.reduce((sum, r) => sum + r.requests, 0).toLocaleString('en-US'),
          failed === 0 ? '0' : `${failed} (${runs.find((r) => r.firstFailure)?.firstFailure ?? ''})`,
          who === 'engine' ? formatRatio(engineRate / bareRate) : '1.00x',
        ]);
      }
    }
    report.note(
      `Engine: createHttpApp over the memory adapter (one site, one subscription with a card; rate limit off); bare: a ` +
        `Hono app with the same routes returning the engine's captured response bytes (${read.body.length} B read, ` +
        `${charge.body.length} B charge). Both served by @hono/node-server on 127.0.0.1; load from autocannon in a child process with ` +
        `${CONNECTIONS} keep-alive connections; ${config.runs} alternating run(s) of ${config.timeBoxMs} ms after ` +
        `${config.warmUpMs} ms warm-up, at most ${MAX_REQUESTS_PER_RUN.toLocaleString('en-US')} requests per run. ` +
        'Every POST is a real one-time charge through the test gateway. Median req/s; p50/p99 are medians over the runs.',
    );
    report.table(['endpoint', 'req/s', 'p50', 'p99', 'requests', 'failures', 'engine/bare'], rows);
    report.ratio(
      `engine/bare GET read: ${formatRatio(shares.get('GET')!)} (throughput; share of the bare handler's req/s)`,
    );
    report.ratio(
      `engine/bare POST charge: ${formatRatio(shares.get('POST')!)} (throughput; share of the bare handler's req/s)`,
    );
    report.target(
      `issue 11: reads at >= ${Math.round(HTTP_READ_TARGET_SHARE * 100)}% of the bare handler's rate`,
      shares.get('GET')! >= HTTP_READ_TARGET_SHARE,
      `${(shares.get('GET')! * 100).toFixed(0)}% of bare`,
    );
  } finally {
    loader.close();
    await engineServer.close();
    await bareServer.close();
    await engine.close();
  }
}

async function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<RunningServer> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      resolve({
        origin: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            // Keep-alive sockets of the load generator are gone by now; close what is left.
            if ('closeAllConnections' in server) server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** The load generator's child process, one request of work at a time. */
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
