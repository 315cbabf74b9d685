import { CollectionMethod, SubscriptionsController } from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkFailure } from './support/maxio-sdk.js';

/**
 * Prepaid subscriptions over HTTP: the signup's `payment_collection_method: prepaid` with its
 * `prepaid_configuration`, the configuration shown on the subscription, and
 * `POST /subscriptions/{id}/prepaid_configurations.json`; then the same through the official SDK.
 */

const CONFIG = {
  initial_funding_amount_in_cents: 5000,
  auto_replenish: true,
  replenish_threshold_amount_in_cents: 1500,
  replenish_to_amount_in_cents: 6000,
};

async function prepaidSignup(f: HttpFixture, config: Record<string, unknown> = CONFIG) {
  if ((await f.engine.site('acme').catalog.listFamilies()).length === 0) await seedCatalog(f.engine);
  const body = signupBody() as { subscription: Record<string, unknown> };
  return f.as('acme', {
    method: 'POST',
    path: '/subscriptions.json',
    json: {
      subscription: { ...body.subscription, payment_collection_method: 'prepaid', prepaid_configuration: config },
    },
  });
}

describe('prepaid routes', () => {
  const fixture = useHttpFixture();

  it('signs up prepaid: the funding is charged, the subscription shows the method and its configuration', async () => {
    const f = fixture();
    const reply = await prepaidSignup(f);
    expect(reply.status, reply.text).toBe(201);
    const { subscription } = reply.json<{ subscription: Record<string, unknown> }>();
    expect(subscription.payment_collection_method).toBe('prepaid');
    expect(subscription.prepaid_configuration).toEqual({ id: subscription.id, ...CONFIG });
    expect(subscription.balance_in_cents).toBe(-4000);
    expect([...f.gateway.charges.values()].map((c) => c.amountInCents)).toEqual([5000]);
    const balances = await f.as('acme', { path: `/subscriptions/${subscription.id}/account_balances.json` });
    expect(balances.json()).toMatchObject({ prepayments: { balance_in_cents: 4000 } });
  });

  it('refuses a prepaid signup with a bad configuration (422), charging nothing', async () => {
    const f = fixture();
    const reply = await prepaidSignup(f, { initial_funding_amount_in_cents: 'lots' });
    expect(reply.status).toBe(422);
    expect(reply.json<{ errors: string[] }>().errors.join(' ')).toContain('Initial funding amount in cents');
    const notObject = await prepaidSignup(f, 'yes' as unknown as Record<string, unknown>);
    expect(notObject.status).toBe(422);
    expect(f.gateway.chargeCalls).toBe(0);
  });

  it('updates the configuration (200) and answers 422 and 404 in the service style', async () => {
    const f = fixture();
    const id = (await prepaidSignup(f)).json<{ subscription: { id: number } }>().subscription.id;
    const path = `/subscriptions/${id}/prepaid_configurations.json`;
    const updated = await f.as('acme', {
      method: 'POST',
      path,
      json: { prepaid_configuration: { replenish_to_amount_in_cents: 9000, auto_replenish: true } },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json()).toEqual({
      prepaid_configuration: { id, ...CONFIG, replenish_to_amount_in_cents: 9000 },
    });
    const read = await f.as('acme', { path: `/subscriptions/${id}.json` });
    expect(
      read.json<{ subscription: { prepaid_configuration: unknown } }>().subscription.prepaid_configuration,
    ).toEqual({
      id,
      ...CONFIG,
      replenish_to_amount_in_cents: 9000,
    });

    const bad = await f.as('acme', {
      method: 'POST',
      path,
      json: { prepaid_configuration: { replenish_threshold_amount_in_cents: 9000 } },
    });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({
      errors: ['Replenish threshold amount in cents: must be less than the replenish to amount.'],
    });
    const unwrapped = await f.as('acme', { method: 'POST', path, json: { auto_replenish: true } });
    expect(unwrapped.status).toBe(422);
    const missing = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/999999/prepaid_configurations.json',
      json: { prepaid_configuration: {} },
    });
    expect(missing.status).toBe(404);
    // Another site's subscription is not found there, and is left as it was.
    const foreign = await f.as('globex', { method: 'POST', path, json: { prepaid_configuration: {} } });
    expect(foreign.status).toBe(404);
    const again = await f.as('acme', { path: `/subscriptions/${id}.json` });
    expect(
      again.json<{ subscription: { prepaid_configuration: { replenish_to_amount_in_cents: number } } }>().subscription
        .prepaid_configuration.replenish_to_amount_in_cents,
    ).toBe(9000);
  });
});

describe('prepaid and the other collection methods', () => {
  const fixture = useHttpFixture();

  it("marks a prepaid subscription's invoices prepaid, and PUT leaves prepaid for remittance (prepaid itself has its endpoint)", async () => {
    const f = fixture();
    const id = (await prepaidSignup(f)).json<{ subscription: { id: number } }>().subscription.id;
    const invoices = await f.as('acme', { path: `/invoices.json?subscription_id=${id}` });
    expect(
      invoices.json<{ invoices: { collection_method: string }[] }>().invoices.map((i) => i.collection_method),
    ).toEqual(['prepaid']);
    const toPrepaid = await f.as('acme', {
      method: 'PUT',
      path: `/subscriptions/${id}.json`,
      json: { subscription: { payment_collection_method: 'prepaid' } },
    });
    expect(toPrepaid.status).toBe(422);
    expect(toPrepaid.json()).toEqual({
      errors: ['Payment collection method: prepaid is set with POST /subscriptions/{id}/prepaid_configurations.json.'],
    });
    const toRemittance = await f.as('acme', {
      method: 'PUT',
      path: `/subscriptions/${id}.json`,
      json: { subscription: { payment_collection_method: 'remittance' } },
    });
    expect(toRemittance.status, toRemittance.text).toBe(200);
    const { subscription } = toRemittance.json<{ subscription: Record<string, unknown> }>();
    expect(subscription.payment_collection_method).toBe('remittance');
    expect(subscription).not.toHaveProperty('prepaid_configuration');
    // Its prepayment stays: credit the next charges use.
    expect(subscription.balance_in_cents).toBe(-4000);
    const toAutomatic = await f.as('acme', {
      method: 'PUT',
      path: `/subscriptions/${id}.json`,
      json: { subscription: { payment_collection_method: 'automatic' } },
    });
    expect(toAutomatic.json<{ subscription: Record<string, unknown> }>().subscription.payment_collection_method).toBe(
      'automatic',
    );
  });
});

describe('official Maxio SDK 6.1.0: prepaid subscriptions', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('signs up prepaid and updates the configuration through updatePrepaidSubscriptionConfiguration', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const subscriptions = new SubscriptionsController(acmeClient(f));
    const created = await sdk(
      subscriptions.createSubscription({
        subscription: {
          productHandle: 'pro',
          customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: '12', expirationYear: '2030' },
          paymentCollectionMethod: CollectionMethod.Prepaid,
          prepaidConfiguration: { initialFundingAmountInCents: BigInt(3000) },
        },
      }),
    );
    const id = created.subscription!.id!;
    expect(created.subscription).toMatchObject({
      state: 'active',
      paymentCollectionMethod: 'prepaid',
      balanceInCents: BigInt(-2000),
      prepaidConfiguration: { id, initialFundingAmountInCents: BigInt(3000), autoReplenish: false },
    });

    const response = await sdk(
      subscriptions.updatePrepaidSubscriptionConfiguration(id, {
        prepaidConfiguration: {
          autoReplenish: true,
          replenishThresholdAmountInCents: BigInt(2500),
          replenishToAmountInCents: BigInt(4000),
        },
      }),
    );
    expect(response.prepaidConfiguration).toEqual({
      id,
      initialFundingAmountInCents: BigInt(3000),
      autoReplenish: true,
      replenishThresholdAmountInCents: BigInt(2500),
      replenishToAmountInCents: BigInt(4000),
    });
    // 2000 is below the new threshold: the worker tops it up to 4000.
    await f.engine.runDue();
    const read = await sdk(subscriptions.readSubscription(id));
    expect(read.subscription?.balanceInCents).toBe(BigInt(-4000));

    const refused = await sdkFailure(
      subscriptions.updatePrepaidSubscriptionConfiguration(id, {
        prepaidConfiguration: { replenishThresholdAmountInCents: BigInt(5000) },
      }),
    );
    expect(refused).toEqual({
      status: 422,
      body: { errors: ['Replenish threshold amount in cents: must be less than the replenish to amount.'] },
    });
  });
});
