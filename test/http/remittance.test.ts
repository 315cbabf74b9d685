import { ApiError, CollectionMethod, SubscriptionsController } from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk } from './support/maxio-sdk.js';

/**
 * `payment_collection_method` driven by the official Maxio SDK in `chargify` compat: a remittance
 * signup without a card, the method shown on the subscription, and its change by
 * `PUT /subscriptions/{id}.json` (a switch to automatic needs a card).
 */

async function refusal(call: Promise<unknown>): Promise<{ status: number; body: unknown }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return { status: error.statusCode, body: JSON.parse(String(error.body)) };
    throw error;
  }
  throw new Error('expected the call to be refused');
}

const CUSTOMER = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

/** Site `acme`'s catalog, and a signup through the SDK with the given collection method and no card. */
async function remittanceSignup(f: HttpFixture, method: CollectionMethod) {
  await seedCatalog(f.engine);
  const subscriptions = new SubscriptionsController(acmeClient(f));
  const created = await sdk(
    subscriptions.createSubscription({
      subscription: { productHandle: 'pro', customerAttributes: CUSTOMER, paymentCollectionMethod: method },
    }),
  );
  return { subscriptions, created };
}

describe('official Maxio SDK 6.1.0: payment collection method', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('signs up for remittance without a card, renews without charging, and shows the method', async () => {
    const f = fixture();
    const { subscriptions, created } = await remittanceSignup(f, CollectionMethod.Remittance);
    const id = created.subscription!.id!;
    expect(created.subscription).toMatchObject({ state: 'active', paymentCollectionMethod: 'remittance' });
    expect(f.gateway.chargeCalls).toBe(0);

    f.clock.set(new Date(f.clock.now().getTime() + 40 * 86_400_000));
    await f.engine.runDue();
    expect(f.gateway.chargeCalls).toBe(0);
    const read = await sdk(subscriptions.readSubscription(id));
    expect(read.subscription).toMatchObject({ state: 'active', balanceInCents: BigInt(2000) });
    const { invoices } = await f.engine.site('acme').invoices.list({ subscriptionId: id, status: 'open' });
    expect(invoices).toHaveLength(2);
  });

  it('reads the older name invoice as remittance', async () => {
    const f = fixture();
    const { created } = await remittanceSignup(f, CollectionMethod.Invoice);
    expect(created.subscription?.paymentCollectionMethod).toBe('remittance');
  });

  it('switches the method by update; automatic needs a card, a bad method is a 422, neither changes anything', async () => {
    const f = fixture();
    const { subscriptions, created } = await remittanceSignup(f, CollectionMethod.Remittance);
    const id = created.subscription!.id!;

    const noCard = await refusal(
      subscriptions.updateSubscription(id, { subscription: { paymentCollectionMethod: 'automatic' } }),
    );
    expect(noCard).toEqual({
      status: 422,
      body: { errors: ['Payment collection method: automatic collection needs a payment profile; add a card first.'] },
    });
    const bad = await refusal(
      subscriptions.updateSubscription(id, { subscription: { paymentCollectionMethod: 'barter' } }),
    );
    expect(bad).toEqual({
      status: 422,
      body: { errors: ['Payment collection method: must be one of automatic, remittance or invoice.'] },
    });
    expect((await sdk(subscriptions.readSubscription(id))).subscription?.paymentCollectionMethod).toBe('remittance');

    const switched = await sdk(
      subscriptions.updateSubscription(id, {
        subscription: {
          paymentCollectionMethod: 'automatic',
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: '12', expirationYear: '2030' },
        },
      }),
    );
    expect(switched.subscription).toMatchObject({ paymentCollectionMethod: 'automatic' });
    expect(switched.subscription?.creditCard?.maskedCardNumber).toMatch(/1111$/);

    const back = await sdk(
      subscriptions.updateSubscription(id, { subscription: { paymentCollectionMethod: 'remittance' } }),
    );
    expect(back.subscription?.paymentCollectionMethod).toBe('remittance');
  });

  it('refuses prepaid at signup without its configuration and creates nothing', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const subscriptions = new SubscriptionsController(acmeClient(f));
    const refused = await refusal(
      subscriptions.createSubscription({
        subscription: {
          productHandle: 'pro',
          customerAttributes: CUSTOMER,
          paymentCollectionMethod: CollectionMethod.Prepaid,
        },
      }),
    );
    expect(refused).toEqual({
      status: 422,
      body: { errors: ['Initial funding amount in cents: must be greater than 0.'] },
    });
    expect(await f.engine.site('acme').subscriptions.list()).toHaveLength(0);
    expect(await f.engine.site('acme').customers.list()).toHaveLength(0);
  });
});
