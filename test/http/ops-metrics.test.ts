import {
  type BillingEngine,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type PaymentGateway,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../examples/http/create-http-app.js';
import { createOpsApp, type MetricsAccess } from '../../examples/http/ops/http-ops.js';
import { instrumentGateway } from '../../examples/http/ops/instrumented-gateway.js';
import { createLogger } from '../../examples/http/ops/logger.js';
import { createOpsMetrics, type OpsMetrics } from '../../examples/http/ops/metrics.js';
import { startWorkLoop } from '../../examples/http/ops/work-loop.js';

const START = '2026-01-15T12:00:00Z';
const basic = (key: string) => `Basic ${Buffer.from(`${key}:x`).toString('base64')}`;

/** An engine over memory storage whose gateway is counted in `metrics`, with a site `acme` and a monthly product. */
async function world(metrics: OpsMetrics, gateway: PaymentGateway = createTestGateway()) {
  const clock = new ManualClock(START);
  const engine = createBillingEngine({
    storage: createMemoryStorage(),
    clock,
    gateway: instrumentGateway(gateway, metrics),
    webhooks: { fetch: async () => new Response('ok', { status: 200 }) },
  });
  await engine.migrate();
  const { apiKey } = await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  return { engine, clock, apiKey, acme };
}

/** The value of one sample of the exposition (0 when the series has not been seen). */
async function sample(metrics: OpsMetrics, series: string): Promise<number> {
  const { body } = await metrics.exposition();
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function subscribe(engine: BillingEngine, email: string, fullNumber = '4111111111111111') {
  return engine.site('acme').subscriptions.create({
    productHandle: 'basic',
    customer: { firstName: 'Ada', lastName: 'Lovelace', email },
    creditCard: { fullNumber, expirationMonth: 12, expirationYear: 2040 },
  });
}

describe('ops: /metrics in Prometheus exposition', () => {
  it('counts a request by method, route pattern (never the raw path) and status', async () => {
    const metrics = createOpsMetrics();
    const { engine, apiKey } = await world(metrics);
    const app = createHttpApp({ engine, rateLimit: false, ops: { metrics } });
    const series = 'http_requests_total{method="GET",route="/subscriptions/:id.json",status="404"}';
    expect(await sample(metrics, series)).toBe(0);
    const reply = await app.request('/subscriptions/424242.json', {
      headers: { host: 'acme.localhost', authorization: basic(apiKey) },
    });
    expect(reply.status).toBe(404);
    expect(await sample(metrics, series)).toBe(1);
    expect(
      await sample(
        metrics,
        'http_request_duration_seconds_count{method="GET",route="/subscriptions/:id.json",status="404"}',
      ),
    ).toBe(1);

    const scrape = await app.request('/metrics');
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scrape.text();
    expect(text).toContain(`${series} 1`);
    // The id of the path is not a label anywhere (labels only: a duration's digits may hold it by chance).
    expect(text).not.toMatch(/\{[^}]*424242[^}]*\}/);
    // A request no key authenticated still has its route; an unknown path has one label for all.
    await app.request('/subscriptions/1.json', { headers: { host: 'acme.localhost' } });
    await app.request('/no/such/thing/9876', { headers: { host: 'acme.localhost', authorization: basic(apiKey) } });
    expect(
      await sample(metrics, 'http_requests_total{method="GET",route="/subscriptions/:id.json",status="401"}'),
    ).toBe(1);
    expect(await sample(metrics, 'http_requests_total{method="GET",route="(unmatched)",status="404"}')).toBe(1);
    await engine.close();
  });

  it('keeps one registry per app: two apps in one process count apart', async () => {
    const { engine } = await world(createOpsMetrics());
    const first = createHttpApp({ engine, rateLimit: false });
    const second = createHttpApp({ engine, rateLimit: false });
    await first.request('/healthz');
    await first.request('/healthz');
    await second.request('/healthz');
    const count = async (app: typeof first) =>
      (await (await app.request('/metrics')).text())
        .split('\n')
        .find((l) => l.startsWith('http_requests_total{method="GET",route="/healthz",status="200"}'));
    expect(await count(first)).toBe('http_requests_total{method="GET",route="/healthz",status="200"} 2');
    expect(await count(second)).toBe('http_requests_total{method="GET",route="/healthz",status="200"} 1');
    await engine.close();
  });

  it('counts gateway calls and due work after a renewal, and reads the backlog at scrape time', async () => {
    const metrics = createOpsMetrics();
    const { engine, clock } = await world(metrics);
    await subscribe(engine, 'ada@example.com');
    // The signup charged once through the counted gateway.
    expect(await sample(metrics, 'billing_gateway_calls_total{operation="charge",outcome="success"}')).toBe(1);
    expect(await sample(metrics, 'billing_gateway_calls_total{operation="tokenize",outcome="success"}')).toBe(1);

    clock.advance({ days: 32 });
    const app = createHttpApp({ engine, rateLimit: false, ops: { metrics } });
    const backlog = async () => {
      const text = await (await app.request('/metrics')).text();
      return Number(/^billing_due_work_backlog (\d+)$/m.exec(text)?.[1]);
    };
    expect(await backlog()).toBeGreaterThanOrEqual(1);

    // One round of the server's and worker's loop: the renewal charges and is counted.
    const loop = startWorkLoop(engine, {
      intervalMs: 60_000,
      batchSize: 100,
      metrics,
      logger: createLogger({ level: 'silent', format: 'json' }),
    });
    await expect
      .poll(() => sample(metrics, 'billing_due_work_processed_total{kind="renewal",outcome="renewed"}'))
      .toBe(1);
    await loop.stop();
    expect(await sample(metrics, 'billing_gateway_calls_total{operation="charge",outcome="success"}')).toBe(2);
    expect(
      await sample(metrics, 'billing_gateway_call_duration_seconds_count{operation="charge",outcome="success"}'),
    ).toBe(2);
    expect(await sample(metrics, 'billing_due_work_items_total')).toBeGreaterThanOrEqual(1);
    expect(await backlog()).toBe(0);
    await engine.close();
  });

  it('counts a declined charge and a gateway that throws by outcome', async () => {
    const metrics = createOpsMetrics();
    const inner = createTestGateway();
    const failing: PaymentGateway = {
      ...inner,
      name: inner.name,
      supportsRefunds: inner.supportsRefunds,
      tokenize: (card) => inner.tokenize(card),
      charge: async () => {
        throw new Error('connection reset');
      },
      refund: (request) => inner.refund(request),
      lookup: (key) => inner.lookup(key),
    };
    const counted = instrumentGateway(failing, metrics);
    await expect(
      counted.charge({
        idempotencyKey: 'k1',
        amountInCents: 100,
        currency: 'USD',
        vaultToken: 't',
        customerVaultToken: null,
        description: 'x',
      }),
    ).rejects.toThrow('connection reset');
    expect(await sample(metrics, 'billing_gateway_calls_total{operation="charge",outcome="threw"}')).toBe(1);
    const declining = instrumentGateway(createTestGateway(), metrics);
    const token = await declining.tokenize({ fullNumber: '2', expirationMonth: 1, expirationYear: 2040 });
    if (!token.ok) throw new Error('the test gateway tokenizes card 2');
    const declined = await declining.charge({
      idempotencyKey: 'k2',
      amountInCents: 100,
      currency: 'USD',
      vaultToken: token.vaultToken,
      customerVaultToken: null,
      description: 'x',
    });
    expect(declined.outcome).toBe('declined');
    expect(await sample(metrics, 'billing_gateway_calls_total{operation="charge",outcome="declined"}')).toBe(1);
    expect(declining.name).toBe('bogus');
  });

  it('counts webhook deliveries by outcome and shows pending webhooks as a gauge', async () => {
    const metrics = createOpsMetrics();
    const { engine, acme } = await world(metrics);
    await acme.webhooks.createEndpoint({
      url: 'https://hooks.example.com/in',
      webhookSubscriptions: ['customer_create'],
    });
    await acme.customers.create({ firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' });
    const ops = createOpsApp(engine, { metrics });
    const pending = async () =>
      Number(/^billing_webhooks_pending (\d+)$/m.exec(await (await ops.request('/metrics')).text())?.[1]);
    expect(await pending()).toBe(1);
    metrics.recordDeliveries(await engine.deliverWebhooks());
    expect(await sample(metrics, 'billing_webhook_deliveries_total{outcome="delivered"}')).toBe(1);
    expect(await pending()).toBe(0);
    await engine.close();
  });

  it('serves /metrics only to the token when one is set, and to no one when closed', async () => {
    const { engine } = await world(createOpsMetrics());
    const token = 'a-long-enough-metrics-token';
    const guarded = (metricsAccess: MetricsAccess) =>
      createHttpApp({ engine, rateLimit: false, ops: { metricsAccess } });
    const withToken = guarded({ kind: 'token', token });
    expect((await withToken.request('/metrics')).status).toBe(401);
    expect(
      (await withToken.request('/metrics', { headers: { authorization: 'Bearer wrong-token-value' } })).status,
    ).toBe(401);
    const ok = await withToken.request('/metrics', { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('# TYPE http_requests_total counter');
    const closed = await guarded({ kind: 'closed', reason: 'set BILLING_METRICS_TOKEN' }).request('/metrics');
    expect(closed.status).toBe(403);
    expect(await closed.json()).toEqual({ errors: ['set BILLING_METRICS_TOKEN'] });
    // Health and readiness never need the token.
    expect((await withToken.request('/healthz')).status).toBe(200);
    expect((await withToken.request('/readyz')).status).toBe(200);
    await engine.close();
  });
});
