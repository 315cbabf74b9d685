import { describe, expect, it } from 'vitest';
import { rejection, useEngine } from '../support/engine-harness.js';
import { memoryHarness } from '../support/storages.js';

/**
 * A vault import (`payment_profile_attributes`) names the gateway its token belongs to in
 * `current_vault`; the engine takes only tokens its own gateway can charge. The test gateway's
 * name is `bogus`.
 */
describe('vault imports on the test gateway', () => {
  const fixture = useEngine(memoryHarness, '2026-03-02T10:00:00Z');

  async function setup() {
    const f = fixture();
    await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
    const site = f.engine.site('acme');
    const family = await site.catalog.createFamily({ name: 'Plans' });
    await site.catalog.createProduct(family.id, {
      name: 'Basic',
      handle: 'basic',
      priceInCents: 1000,
      interval: 1,
      intervalUnit: 'month',
    });
    return { f, site };
  }

  const customer = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

  it('refuses a token of another gateway with a 422 before anything is written or charged', async () => {
    const { f, site } = await setup();
    for (const currentVault of ['braintree_blue', 'stripe_connect']) {
      const error = await rejection(
        site.subscriptions.create({
          productHandle: 'basic',
          customer,
          paymentProfile: { vaultToken: 'tok_1', currentVault, expirationMonth: 12, expirationYear: 2030 },
        }),
      );
      expect(error.code).toBe('validation');
      expect(error.details).toEqual([
        {
          message: `Current vault: ${currentVault} is not the gateway of this server (bogus); import a token of bogus.`,
          attribute: 'payment_profile.current_vault',
        },
      ]);
    }
    expect(f.gateway.chargeCalls).toBe(0);
    expect(await site.customers.list()).toHaveLength(0);
  });

  it('takes its own vault name in any case, and an import that names none', async () => {
    const { f, site } = await setup();
    const named = await site.subscriptions.create({
      productHandle: 'basic',
      customer,
      paymentProfile: { vaultToken: 'tok_1', currentVault: ' Bogus ', expirationMonth: 12, expirationYear: 2030 },
    });
    expect(named.paymentProfile).toMatchObject({ vaultToken: 'tok_1', currentVault: 'Bogus' });
    const unnamed = await site.subscriptions.create({
      productHandle: 'basic',
      customer: { ...customer, email: 'bo@example.com' },
      paymentProfile: { vaultToken: 'tok_2', expirationMonth: 12, expirationYear: 2030 },
    });
    expect(unnamed.paymentProfile?.currentVault).toBe('bogus');
    expect(f.gateway.chargeCalls).toBe(2);
  });
});
