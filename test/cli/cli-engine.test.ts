/**
 * The CLI's engine (serve, worker) wraps the built-in test gateway for metrics; that must not make
 * it a silent live gateway: a live site's payments are refused before any gateway call.
 */
import { type BillingEngine, BillingError } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { describe, expect, it } from 'vitest';
import { cliEngine } from '../../bin/cli-engine.js';
import { createOpsMetrics } from '../../examples/http/ops/metrics.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const CUSTOMER = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

async function plan(engine: BillingEngine, subdomain: string, mode: 'test' | 'live') {
  await engine.sites.create({ subdomain, currency: 'USD', timeZone: 'UTC', mode });
  const site = engine.site(subdomain);
  const family = await site.catalog.createFamily({ name: 'Plans' });
  await site.catalog.createProduct(family.id, {
    name: 'Pro',
    handle: 'pro',
    priceInCents: 2500,
    interval: 1,
    intervalUnit: 'month',
  });
  return site;
}

describe("the CLI's engine", () => {
  it('charges test sites through the counted test gateway and refuses live sites before any gateway call', async () => {
    const metrics = createOpsMetrics();
    const engine = cliEngine(createMemoryStorage(), metrics, false);
    await engine.migrate();
    const sandbox = await plan(engine, 'sandbox', 'test');
    const created = await sandbox.subscriptions.create({ productHandle: 'pro', customer: CUSTOMER, creditCard: VISA });
    expect(created.subscription.state).toBe('active');
    const charged = await metrics.registry.getSingleMetricAsString('billing_gateway_calls_total');
    expect(charged).toMatch(/operation="charge",outcome="success"\} 1/);

    const live = await plan(engine, 'shop', 'live');
    const refused = await live.subscriptions
      .create({ productHandle: 'pro', customer: CUSTOMER, creditCard: VISA })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(BillingError);
    expect((refused as BillingError).code).toBe('gateway_error');
    expect((refused as BillingError).message).toContain('pass the gateway option');
    expect(await live.customers.list()).toEqual([]);
    // No second charge reached the gateway.
    expect(await metrics.registry.getSingleMetricAsString('billing_gateway_calls_total')).toMatch(
      /operation="charge",outcome="success"\} 1/,
    );
    await engine.close();
  });
});
